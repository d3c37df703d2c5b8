package clickhouse

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// The analytics tables (see consumers/sink/README.md). Every table is a
// ReplacingMergeTree ordered by the event id, and every query deduplicates
// at read time (uniqExact, argMax, or a GROUP BY on the id), so a record the
// sink inserts twice (redelivery after a crash) is never counted twice.
const (
	TableEvents     = "events"
	TableLedger     = "ledger_entries"
	TableReputation = "reputation_events"
)

var unsafeIdent = regexp.MustCompile(`[^a-z0-9_]`)

// DatabaseName turns a name (for example the Postgres database's) into a
// safe ClickHouse identifier.
func DatabaseName(name string) string {
	s := unsafeIdent.ReplaceAllString(strings.ToLower(name), "_")
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		s = "db_" + s
	}
	return s
}

func schema(db string) []string {
	return []string{
		`CREATE DATABASE IF NOT EXISTS ` + db,
		`CREATE TABLE IF NOT EXISTS ` + db + `.` + TableEvents + ` (
			id String, topic String, type String, key String, actor_user_id String,
			occurred_at DateTime, data String, ingested_at DateTime
		) ENGINE = ReplacingMergeTree() ORDER BY id`,
		`CREATE TABLE IF NOT EXISTS ` + db + `.` + TableLedger + ` (
			id String, height UInt64, kind String, actor_user_id String, source_id String,
			amount_cents Int64, has_amount UInt8, currency String, ts DateTime,
			prev_hash String, hash String
		) ENGINE = ReplacingMergeTree() ORDER BY id`,
		`CREATE TABLE IF NOT EXISTS ` + db + `.` + TableReputation + ` (
			id String, event_id String, user_id String, kind String, source_module String,
			weight Int64, new_score Int64, previous_rank String, new_rank String, seq UInt64,
			occurred_at DateTime, source_id String
		) ENGINE = ReplacingMergeTree() ORDER BY id`,
	}
}

// EnsureSchema creates the database and tables that are missing.
func EnsureSchema(ctx context.Context, conn driver.Conn, db string) error {
	for _, stmt := range append(schema(db), dimensionSchema(db)...) {
		if err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("create clickhouse schema in %s: %w", db, err)
		}
	}
	return addMissingColumns(ctx, conn, db)
}

// EventRow is one record of any events.* topic.
type EventRow struct {
	ID, Topic, Type, Key, ActorUserID string
	OccurredAt                        time.Time
	Data                              string
}

// LedgerRow is one chained entry.
type LedgerRow struct {
	ID                          string
	Height                      int64
	Kind, ActorUserID, SourceID string
	AmountCents                 int64
	HasAmount                   bool
	Currency                    string
	Timestamp                   time.Time
	PrevHash, Hash              string
}

// ReputationRow is one applied reputation event (a score.updated event).
// ID is the event record's id, EventID the reputation event's.
type ReputationRow struct {
	ID, EventID, UserID, Kind, SourceModule string
	Weight, NewScore                        int64
	PreviousRank, NewRank                   string
	Seq                                     int64
	OccurredAt                              time.Time
	// SourceID is the emitter's record id ("" when it gave none).
	SourceID string
}

// Rows is one batch for the analytics tables.
type Rows struct {
	Events     []EventRow
	Ledger     []LedgerRow
	Reputation []ReputationRow
	Users      []UserRow
	Wallets    []WalletRow
	Campaigns  []CampaignRow
	Proposals  []ProposalRow
	// WebhookDeliveries are changes of the webhook delivery log.
	WebhookDeliveries []WebhookDeliveryRow
}

// Insert writes a batch with one batch insert per table (explicit column
// lists, the only insert form 18.16 handles). A failure part way leaves
// some tables written: the sink retries the whole batch, and every read
// deduplicates.
func Insert(ctx context.Context, conn driver.Conn, db string, rows Rows) error {
	now := time.Now().UTC()
	if len(rows.Events) > 0 {
		b, err := conn.PrepareBatch(ctx, `INSERT INTO `+db+`.`+TableEvents+
			` (id, topic, type, key, actor_user_id, occurred_at, data, ingested_at)`)
		if err != nil {
			return fmt.Errorf("prepare events insert: %w", err)
		}
		for _, r := range rows.Events {
			if err := b.Append(r.ID, r.Topic, r.Type, r.Key, r.ActorUserID, r.OccurredAt.UTC(), r.Data, now); err != nil {
				_ = b.Abort()
				return fmt.Errorf("append event row: %w", err)
			}
		}
		if err := b.Send(); err != nil {
			return fmt.Errorf("insert %d event rows: %w", len(rows.Events), err)
		}
	}
	if len(rows.Ledger) > 0 {
		b, err := conn.PrepareBatch(ctx, `INSERT INTO `+db+`.`+TableLedger+
			` (id, height, kind, actor_user_id, source_id, amount_cents, has_amount, currency, ts, prev_hash, hash)`)
		if err != nil {
			return fmt.Errorf("prepare ledger insert: %w", err)
		}
		for _, r := range rows.Ledger {
			var has uint8
			if r.HasAmount {
				has = 1
			}
			if err := b.Append(r.ID, uint64(r.Height), r.Kind, r.ActorUserID, r.SourceID, r.AmountCents, has,
				r.Currency, r.Timestamp.UTC(), r.PrevHash, r.Hash); err != nil {
				_ = b.Abort()
				return fmt.Errorf("append ledger row: %w", err)
			}
		}
		if err := b.Send(); err != nil {
			return fmt.Errorf("insert %d ledger rows: %w", len(rows.Ledger), err)
		}
	}
	if len(rows.Reputation) > 0 {
		b, err := conn.PrepareBatch(ctx, `INSERT INTO `+db+`.`+TableReputation+
			` (id, event_id, user_id, kind, source_module, weight, new_score, previous_rank, new_rank, seq, occurred_at, source_id)`)
		if err != nil {
			return fmt.Errorf("prepare reputation insert: %w", err)
		}
		for _, r := range rows.Reputation {
			if err := b.Append(r.ID, r.EventID, r.UserID, r.Kind, r.SourceModule, r.Weight, r.NewScore,
				r.PreviousRank, r.NewRank, uint64(r.Seq), r.OccurredAt.UTC(), r.SourceID); err != nil {
				_ = b.Abort()
				return fmt.Errorf("append reputation row: %w", err)
			}
		}
		if err := b.Send(); err != nil {
			return fmt.Errorf("insert %d reputation rows: %w", len(rows.Reputation), err)
		}
	}
	return insertDimensions(ctx, conn, db, rows)
}

// Windows are counts over the rolling windows of the ledger stats.
type Windows struct {
	Last24h int64 `json:"24h"`
	Last7d  int64 `json:"7d"`
	Last30d int64 `json:"30d"`
}

// LedgerStats are the rolling entry counts, in total and by kind.
type LedgerStats struct {
	Totals Windows            `json:"totals"`
	ByKind map[string]Windows `json:"byKind"`
}

// WindowStarts returns the starts of the 24h, 7d and 30d windows ending at
// now, in whole seconds (the precision of the analytics tables).
func WindowStarts(now time.Time) [3]time.Time {
	n := now.UTC().Truncate(time.Second)
	return [3]time.Time{n.Add(-24 * time.Hour), n.Add(-7 * 24 * time.Hour), n.Add(-30 * 24 * time.Hour)}
}

// QueryLedgerStats counts distinct entries per kind in each window.
func QueryLedgerStats(ctx context.Context, conn driver.Conn, db string, now time.Time) (LedgerStats, error) {
	w := WindowStarts(now)
	q := fmt.Sprintf(`SELECT kind,
	toInt64(uniqExactIf(id, ts >= toDateTime(%d))),
	toInt64(uniqExactIf(id, ts >= toDateTime(%d))),
	toInt64(uniqExactIf(id, ts >= toDateTime(%d)))
FROM %s.%s WHERE ts >= toDateTime(%d) GROUP BY kind`,
		w[0].Unix(), w[1].Unix(), w[2].Unix(), db, TableLedger, w[2].Unix())
	rows, err := conn.Query(ctx, q)
	if err != nil {
		return LedgerStats{}, fmt.Errorf("query ledger stats: %w", err)
	}
	defer rows.Close()
	out := LedgerStats{ByKind: map[string]Windows{}}
	for rows.Next() {
		var kind string
		var c Windows
		if err := rows.Scan(&kind, &c.Last24h, &c.Last7d, &c.Last30d); err != nil {
			return LedgerStats{}, fmt.Errorf("scan ledger stats: %w", err)
		}
		out.ByKind[kind] = c
		out.Totals.Last24h += c.Last24h
		out.Totals.Last7d += c.Last7d
		out.Totals.Last30d += c.Last30d
	}
	return out, rows.Err()
}

// LedgerCount is the number of distinct entries the analytics copy holds.
func LedgerCount(ctx context.Context, conn driver.Conn, db string) (int64, error) {
	var n int64
	if err := conn.QueryRow(ctx, `SELECT toInt64(uniqExact(id)) FROM `+db+`.`+TableLedger).Scan(&n); err != nil {
		return 0, fmt.Errorf("count ledger copy: %w", err)
	}
	return n, nil
}

// ReputationCount is the number of distinct applied reputation events the
// analytics copy holds.
func ReputationCount(ctx context.Context, conn driver.Conn, db string) (int64, error) {
	var n int64
	if err := conn.QueryRow(ctx, `SELECT toInt64(uniqExact(event_id)) FROM `+db+`.`+TableReputation).Scan(&n); err != nil {
		return 0, fmt.Errorf("count reputation copy: %w", err)
	}
	return n, nil
}

// dedupedReputation is the reputation copy with one row per event record.
func dedupedReputation(db string) string {
	return `(SELECT id, any(user_id) AS u, any(new_score) AS s, any(new_rank) AS r, any(seq) AS q,
		any(weight) AS w, any(occurred_at) AS t FROM ` + db + `.` + TableReputation + ` GROUP BY id)`
}

// LeaderRow is one leaderboard line.
type LeaderRow struct {
	Position int    `json:"position"`
	UserID   string `json:"userId"`
	Score    int64  `json:"score"`
	Rank     string `json:"rank"`
	// Gained is the sum of weights since the `since` of the query; only set
	// when one was given.
	Gained *int64 `json:"gained,omitempty"`
}

// LeaderQuery selects a leaderboard.
type LeaderQuery struct {
	Limit int
	// Rank keeps only users whose current rank it is ("" = all).
	Rank string
	// Since, when set, keeps only users with events at or after it and
	// orders them by the score they gained since.
	Since *time.Time
}

// QueryLeaderboard returns the top users by current score (or by score
// gained since q.Since), ties broken by user id.
func QueryLeaderboard(ctx context.Context, conn driver.Conn, db string, q LeaderQuery) ([]LeaderRow, error) {
	var since int64
	if q.Since != nil {
		since = q.Since.Unix()
	}
	having := `HAVING n > 0`
	args := []any{}
	if q.Rank != "" {
		having += ` AND rk = ?`
		args = append(args, q.Rank)
	}
	order := `ORDER BY score DESC, u ASC`
	if q.Since != nil {
		order = `ORDER BY gained DESC, score DESC, u ASC`
	}
	sql := fmt.Sprintf(`SELECT u, argMax(s, q) AS score, argMax(r, q) AS rk,
	sumIf(w, t >= toDateTime(%d)) AS gained, countIf(t >= toDateTime(%d)) AS n
FROM %s GROUP BY u %s %s LIMIT %d`, max(since, 0), max(since, 0), dedupedReputation(db), having, order, q.Limit)
	rows, err := conn.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("query leaderboard: %w", err)
	}
	defer rows.Close()
	out := []LeaderRow{}
	for rows.Next() {
		var r LeaderRow
		var gained int64
		var n uint64
		if err := rows.Scan(&r.UserID, &r.Score, &r.Rank, &gained, &n); err != nil {
			return nil, fmt.Errorf("scan leaderboard: %w", err)
		}
		r.Position = len(out) + 1
		if q.Since != nil {
			g := gained
			r.Gained = &g
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// ScoreCount is how many users have a score (and its rank).
type ScoreCount struct {
	Score int64
	Rank  string
	Users int64
}

// ReputationDistribution returns the current score of every user, grouped
// by score, ascending; plus the number of distinct events at or after since.
func ReputationDistribution(ctx context.Context, conn driver.Conn, db string, since time.Time) ([]ScoreCount, int64, error) {
	sql := fmt.Sprintf(`SELECT cur, rk, toInt64(count()) FROM (
	SELECT u, argMax(s, q) AS cur, argMax(r, q) AS rk FROM %s GROUP BY u
) GROUP BY cur, rk ORDER BY cur`, dedupedReputation(db))
	rows, err := conn.Query(ctx, sql)
	if err != nil {
		return nil, 0, fmt.Errorf("query score distribution: %w", err)
	}
	defer rows.Close()
	var out []ScoreCount
	for rows.Next() {
		var c ScoreCount
		if err := rows.Scan(&c.Score, &c.Rank, &c.Users); err != nil {
			return nil, 0, fmt.Errorf("scan score distribution: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("query score distribution: %w", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Score < out[j].Score })
	var recent int64
	if err := conn.QueryRow(ctx, fmt.Sprintf(`SELECT toInt64(uniqExact(event_id)) FROM %s.%s WHERE occurred_at >= toDateTime(%d)`,
		db, TableReputation, since.Unix())).Scan(&recent); err != nil {
		return nil, 0, fmt.Errorf("count recent reputation events: %w", err)
	}
	return out, recent, nil
}
