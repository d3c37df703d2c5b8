package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// The dimension tables: who a user is, which currency a wallet holds, what a
// campaign and a proposal are, fed by the sink from the events that create
// and change them. Each is a ReplacingMergeTree keyed by the entity id with
// a version column: the entity's lifecycle step (1 created, 2 opened or
// approved, 3 closed), so the newest state wins whatever order the rows
// arrive in, and a row the sink inserts twice (redelivery) is the same row.
// Reads take the current row with argMax(column, version) GROUP BY id (the
// v_* views), which is right before and after background merges; FINAL
// gives the same on one table but is slower.
const (
	TableUsers     = "users"
	TableWallets   = "wallets"
	TableCampaigns = "campaigns"
	TableProposals = "proposals"
	// TableWebhookDeliveries is the webhook delivery log: one row per
	// change of a delivery, the newest (version = its update time in
	// microseconds) being its current state.
	TableWebhookDeliveries = "webhook_deliveries"
)

func dimensionSchema(db string) []string {
	return []string{
		`CREATE TABLE IF NOT EXISTS ` + db + `.` + TableUsers + ` (
			user_id String, display_name String, registered_on Date, registered_at DateTime, version UInt64
		) ENGINE = ReplacingMergeTree(version) ORDER BY user_id`,
		`CREATE TABLE IF NOT EXISTS ` + db + `.` + TableWallets + ` (
			wallet_id String, owner_user_id String, currency String, kind String, created_at DateTime, version UInt64
		) ENGINE = ReplacingMergeTree(version) ORDER BY wallet_id`,
		`CREATE TABLE IF NOT EXISTS ` + db + `.` + TableCampaigns + ` (
			campaign_id String, proposer_user_id String, title String, category String, goal_kzt Int64,
			status String, updated_at DateTime, version UInt64
		) ENGINE = ReplacingMergeTree(version) ORDER BY campaign_id`,
		`CREATE TABLE IF NOT EXISTS ` + db + `.` + TableProposals + ` (
			proposal_id String, author_user_id String, title String, category String, vote_mode String,
			status String, quorum Int64, ballots Int64, quorum_met UInt8, passing UInt8,
			updated_at DateTime, version UInt64
		) ENGINE = ReplacingMergeTree(version) ORDER BY proposal_id`,
		`CREATE TABLE IF NOT EXISTS ` + db + `.` + TableWebhookDeliveries + ` (
			delivery_id String, webhook_id String, event_id String, event_type String, status String,
			attempts Int64, last_status_code Int64, updated_at DateTime, version UInt64
		) ENGINE = ReplacingMergeTree(version) ORDER BY delivery_id`,
	}
}

// addedColumns are columns added to tables after their first release; 18.16
// has no ADD COLUMN IF NOT EXISTS, so EnsureSchema adds a missing one after
// looking in system.columns.
var addedColumns = []struct{ table, column, typ string }{
	{TableReputation, "source_id", "String"},
}

// addMissingColumns adds the columns of addedColumns that a table lacks. Two
// processes may race to add one: the loser's error is ignored once the
// column is there.
func addMissingColumns(ctx context.Context, conn driver.Conn, db string) error {
	has := func(table, column string) (bool, error) {
		var n uint64
		err := conn.QueryRow(ctx, `SELECT count() FROM system.columns WHERE database = ? AND table = ? AND name = ?`,
			db, table, column).Scan(&n)
		return n > 0, err
	}
	for _, c := range addedColumns {
		ok, err := has(c.table, c.column)
		if err != nil {
			return fmt.Errorf("look for column %s.%s: %w", c.table, c.column, err)
		}
		if ok {
			continue
		}
		if err := conn.Exec(ctx, `ALTER TABLE `+db+`.`+c.table+` ADD COLUMN `+c.column+` `+c.typ); err != nil {
			if ok, _ := has(c.table, c.column); !ok {
				return fmt.Errorf("add column %s.%s: %w", c.table, c.column, err)
			}
		}
	}
	return nil
}

// Versions of the dimension rows: the lifecycle step the event records.
const (
	VersionCreated = 1
	VersionOpened  = 2 // a proposal opened for votes, a campaign approved
	VersionClosed  = 3 // a proposal passed or rejected
)

// UserRow is a user's analytics identity: never the e-mail.
type UserRow struct {
	UserID, DisplayName string
	RegisteredAt        time.Time
	Version             uint64
}

// WalletRow is a wallet and its owner.
type WalletRow struct {
	WalletID, OwnerUserID, Currency, Kind string
	CreatedAt                             time.Time
	Version                               uint64
}

// CampaignRow is a campaign as of one of its events.
type CampaignRow struct {
	CampaignID, ProposerUserID, Title, Category string
	GoalKzt                                     int64
	Status                                      string
	UpdatedAt                                   time.Time
	Version                                     uint64
}

// ProposalRow is a proposal as of one of its events; Ballots, QuorumMet and
// Passing are known once it closed.
type ProposalRow struct {
	ProposalID, AuthorUserID, Title, Category, VoteMode, Status string
	Quorum, Ballots                                             int64
	QuorumMet, Passing                                          bool
	UpdatedAt                                                   time.Time
	Version                                                     uint64
}

func flag(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// WebhookDeliveryRow is a webhook delivery as one change left it.
type WebhookDeliveryRow struct {
	DeliveryID, WebhookID, EventID, EventType, Status string
	Attempts, LastStatusCode                          int64
	UpdatedAt                                         time.Time
}

// insertDimensions writes the batch's dimension rows, one insert per table.
func insertDimensions(ctx context.Context, conn driver.Conn, db string, rows Rows) error {
	if err := insertRows(ctx, conn, db, TableUsers, `user_id, display_name, registered_on, registered_at, version`,
		len(rows.Users), func(i int) []any {
			r := rows.Users[i]
			at := r.RegisteredAt.UTC()
			day := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
			return []any{r.UserID, r.DisplayName, day, at, r.Version}
		}); err != nil {
		return err
	}
	if err := insertRows(ctx, conn, db, TableWallets, `wallet_id, owner_user_id, currency, kind, created_at, version`,
		len(rows.Wallets), func(i int) []any {
			r := rows.Wallets[i]
			return []any{r.WalletID, r.OwnerUserID, r.Currency, r.Kind, r.CreatedAt.UTC(), r.Version}
		}); err != nil {
		return err
	}
	if err := insertRows(ctx, conn, db, TableCampaigns,
		`campaign_id, proposer_user_id, title, category, goal_kzt, status, updated_at, version`,
		len(rows.Campaigns), func(i int) []any {
			r := rows.Campaigns[i]
			return []any{r.CampaignID, r.ProposerUserID, r.Title, r.Category, r.GoalKzt, r.Status, r.UpdatedAt.UTC(), r.Version}
		}); err != nil {
		return err
	}
	if err := insertRows(ctx, conn, db, TableWebhookDeliveries,
		`delivery_id, webhook_id, event_id, event_type, status, attempts, last_status_code, updated_at, version`,
		len(rows.WebhookDeliveries), func(i int) []any {
			r := rows.WebhookDeliveries[i]
			return []any{r.DeliveryID, r.WebhookID, r.EventID, r.EventType, r.Status, r.Attempts, r.LastStatusCode,
				r.UpdatedAt.UTC(), uint64(r.UpdatedAt.UnixMicro())}
		}); err != nil {
		return err
	}
	return insertRows(ctx, conn, db, TableProposals,
		`proposal_id, author_user_id, title, category, vote_mode, status, quorum, ballots, quorum_met, passing, updated_at, version`,
		len(rows.Proposals), func(i int) []any {
			r := rows.Proposals[i]
			return []any{r.ProposalID, r.AuthorUserID, r.Title, r.Category, r.VoteMode, r.Status, r.Quorum, r.Ballots,
				flag(r.QuorumMet), flag(r.Passing), r.UpdatedAt.UTC(), r.Version}
		})
}

// insertRows is one batch insert of n rows into table (an explicit column
// list: the only insert form 18.16 handles).
func insertRows(ctx context.Context, conn driver.Conn, db, table, columns string, n int, row func(int) []any) error {
	if n == 0 {
		return nil
	}
	b, err := conn.PrepareBatch(ctx, `INSERT INTO `+db+`.`+table+` (`+columns+`)`)
	if err != nil {
		return fmt.Errorf("prepare %s insert: %w", table, err)
	}
	for i := range n {
		if err := b.Append(row(i)...); err != nil {
			_ = b.Abort()
			return fmt.Errorf("append %s row: %w", table, err)
		}
	}
	if err := b.Send(); err != nil {
		return fmt.Errorf("insert %d %s rows: %w", n, table, err)
	}
	return nil
}
