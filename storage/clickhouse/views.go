package clickhouse

import (
	"context"
	"fmt"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// View is one of the analysts' views: a plain (not materialized) view, so
// it is computed at query time from the deduplicating subqueries below and
// can never double-count what the sink inserted twice.
type View struct {
	Name string
	// SQL is the SELECT with {db} for the database. The analytics guide
	// (consumers/sink/README.md) shows each one with db = platform, and
	// TestGuideShowsEveryView holds the two together.
	SQL string
}

// The views use only what ClickHouse 18.16 has and current releases keep:
// argMax/any/uniqExact with GROUP BY, ANY LEFT JOIN ... USING on
// subqueries (no JOIN ... ON, no join_use_nulls: a missing dimension row
// reads as an empty string or 0), visitParamExtract* (no JSONExtract*),
// toDate with an explicit UTC zone, intDiv, countIf; no window functions,
// no FINAL inside the views.
var Views = []View{
	{"v_users", `SELECT user_id, argMax(display_name, version) AS display_name,
    min(registered_on) AS registered_on, min(registered_at) AS registered_at
FROM {db}.users
GROUP BY user_id`},
	{"v_wallets", `SELECT wallet_id, argMax(owner_user_id, version) AS owner_user_id,
    argMax(currency, version) AS currency, argMax(kind, version) AS kind, min(created_at) AS created_at
FROM {db}.wallets
GROUP BY wallet_id`},
	{"v_campaigns", `SELECT campaign_id, argMax(proposer_user_id, version) AS proposer_user_id,
    argMax(title, version) AS title, argMax(category, version) AS category,
    argMax(goal_kzt, version) AS goal_kzt, argMax(status, version) AS status
FROM {db}.campaigns
GROUP BY campaign_id`},
	{"v_proposals", `SELECT proposal_id, argMax(author_user_id, version) AS author_user_id,
    argMax(title, version) AS title, argMax(category, version) AS category,
    argMax(vote_mode, version) AS vote_mode, argMax(status, version) AS status,
    argMax(quorum, version) AS quorum, argMax(ballots, version) AS ballots,
    argMax(quorum_met, version) AS quorum_met, argMax(passing, version) AS passing
FROM {db}.proposals
GROUP BY proposal_id`},
	{"v_daily_volume", `SELECT day, currency, count() AS transfers,
    sum(amount) AS minor_units, sum(fee) AS fee_minor_units
FROM (
    SELECT id, any(toDate(occurred_at, 'UTC')) AS day,
        any(visitParamExtractString(data, 'fromWallet')) AS wallet_id,
        any(visitParamExtractInt(data, 'amountKzt')) AS amount,
        any(visitParamExtractInt(data, 'feeKzt')) AS fee
    FROM {db}.events
    WHERE topic = 'events.fiat' AND type = 'transfer.completed'
    GROUP BY id
) ANY LEFT JOIN (SELECT wallet_id, currency FROM {db}.v_wallets) USING wallet_id
GROUP BY day, currency`},
	{"v_leaderboard", `SELECT user_id, display_name, registered_on, score, rank, events
FROM (
    SELECT user_id, argMax(new_score, seq) AS score, argMax(new_rank, seq) AS rank, count() AS events
    FROM (
        SELECT id, any(user_id) AS user_id, any(new_score) AS new_score, any(new_rank) AS new_rank, any(seq) AS seq
        FROM {db}.reputation_events
        GROUP BY id
    )
    GROUP BY user_id
) ANY LEFT JOIN (SELECT user_id, display_name, registered_on FROM {db}.v_users) USING user_id`},
	{"v_campaign_progress", `SELECT campaign_id, title, category, status, proposer_user_id, proposer_name,
    goal_kzt, raised_kzt, intDiv(raised_kzt * 100, goal_kzt) AS percent, donations, donors
FROM (
    SELECT campaign_id, title, category, status, proposer_user_id, goal_kzt, raised_kzt, donations, donors
    FROM {db}.v_campaigns
    ANY LEFT JOIN (
        SELECT campaign_id, sum(amount) AS raised_kzt, count() AS donations,
            uniqExactIf(donor, donor != '') + countIf(donor = '') AS donors
        FROM (
            SELECT id, any(visitParamExtractString(data, 'campaignId')) AS campaign_id,
                any(visitParamExtractInt(data, 'amountKzt')) AS amount, any(actor_user_id) AS donor
            FROM {db}.events
            WHERE topic = 'events.charity' AND type = 'donation.received'
            GROUP BY id
        )
        GROUP BY campaign_id
    ) USING campaign_id
) ANY LEFT JOIN (SELECT user_id AS proposer_user_id, display_name AS proposer_name FROM {db}.v_users)
USING proposer_user_id`},
	{"v_governance_participation", `SELECT proposal_id, title, category, vote_mode, status, author_user_id, author_name,
    quorum, voters, ballots_at_close, quorum_met, passing
FROM (
    SELECT proposal_id, title, category, vote_mode, status, author_user_id, quorum, voters,
        ballots AS ballots_at_close, quorum_met, passing
    FROM {db}.v_proposals
    ANY LEFT JOIN (
        SELECT source_id AS proposal_id, uniqExact(user_id) AS voters
        FROM (
            SELECT id, any(user_id) AS user_id, any(source_id) AS source_id
            FROM {db}.reputation_events
            WHERE kind = 'gov-voter'
            GROUP BY id
        )
        GROUP BY source_id
    ) USING proposal_id
) ANY LEFT JOIN (SELECT user_id AS author_user_id, display_name AS author_name FROM {db}.v_users)
USING author_user_id`},
	{"v_webhook_delivery_health", `SELECT webhook_id, count() AS deliveries,
    countIf(status = 'delivered') AS delivered, countIf(status = 'pending') AS pending,
    countIf(status = 'failed') AS failed, countIf(status = 'dead_letter') AS dead_letter,
    sum(attempts) AS attempts, max(updated_at) AS last_change
FROM (
    SELECT delivery_id, argMax(webhook_id, version) AS webhook_id, argMax(status, version) AS status,
        argMax(attempts, version) AS attempts, max(updated_at) AS updated_at
    FROM {db}.webhook_deliveries
    GROUP BY delivery_id
)
GROUP BY webhook_id`},
}

// ViewSQL is a view's SELECT for database db.
func ViewSQL(v View, db string) string { return strings.ReplaceAll(v.SQL, "{db}", db) }

// EnsureViews (re)creates the views, so a new release's definitions
// replace the old ones (18.16 has no CREATE OR REPLACE VIEW). A view is
// missing for the moment between its drop and its create; the sink calls
// this once at start.
func EnsureViews(ctx context.Context, conn driver.Conn, db string) error {
	for _, v := range Views {
		if err := conn.Exec(ctx, `DROP TABLE IF EXISTS `+db+`.`+v.Name); err != nil {
			return fmt.Errorf("drop view %s.%s: %w", db, v.Name, err)
		}
		if err := conn.Exec(ctx, `CREATE VIEW IF NOT EXISTS `+db+`.`+v.Name+` AS `+ViewSQL(v, db)); err != nil {
			return fmt.Errorf("create view %s.%s: %w", db, v.Name, err)
		}
	}
	return nil
}
