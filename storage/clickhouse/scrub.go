package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// The analytics schema is made by EnsureSchema at every start (CREATE ...
// IF NOT EXISTS, columns added when missing). A change of the rows already
// there is a step that runs once per database and is recorded in
// schema_steps, so a restart does not repeat it.
const (
	tableSteps = "schema_steps"
	tableScrub = "events_scrub"

	// StepScrubPersonal removes the personal data that sinks before
	// 0200 copied into events (see consumers/sink/redact.go).
	StepScrubPersonal = "0200_scrub_personal_data"
	stepScrubStaged   = "0200_scrub_personal_data_staged"
)

func stepsSchema(db string) string {
	return `CREATE TABLE IF NOT EXISTS ` + db + `.` + tableSteps +
		` (step String, applied_at DateTime) ENGINE = ReplacingMergeTree() ORDER BY step`
}

func stepDone(ctx context.Context, conn driver.Conn, db, step string) (bool, error) {
	var n uint64
	if err := conn.QueryRow(ctx, `SELECT count() FROM `+db+`.`+tableSteps+` WHERE step = ?`, step).Scan(&n); err != nil {
		return false, fmt.Errorf("read schema step %s: %w", step, err)
	}
	return n > 0, nil
}

func markStep(ctx context.Context, conn driver.Conn, db, step string) error {
	b, err := conn.PrepareBatch(ctx, `INSERT INTO `+db+`.`+tableSteps+` (step, applied_at)`)
	if err != nil {
		return fmt.Errorf("record schema step %s: %w", step, err)
	}
	if err := b.Append(step, time.Now().UTC()); err != nil {
		_ = b.Abort()
		return fmt.Errorf("record schema step %s: %w", step, err)
	}
	if err := b.Send(); err != nil {
		return fmt.Errorf("record schema step %s: %w", step, err)
	}
	return nil
}

// ScrubEvents rewrites, once per database, every event row that fix
// changes (fix reports whether it did), and blanks the source of every
// charity-donor reputation row. The rows are staged in events_scrub, the
// originals deleted by a mutation, and the staged rows inserted in their
// place: a mutation applies only to the parts that existed when it was
// made, so the inserted rows stay. Every step can run again after a crash:
// a staging table that was not complete is filled anew, and a complete one
// is deleted and inserted again until the step is recorded. It returns the
// number of event rows rewritten.
func ScrubEvents(ctx context.Context, conn driver.Conn, db string, fix func(EventRow) (EventRow, bool)) (int, error) {
	if err := conn.Exec(ctx, stepsSchema(db)); err != nil {
		return 0, fmt.Errorf("create %s: %w", tableSteps, err)
	}
	if done, err := stepDone(ctx, conn, db, StepScrubPersonal); err != nil || done {
		return 0, err
	}
	staged, err := stepDone(ctx, conn, db, stepScrubStaged)
	if err != nil {
		return 0, err
	}
	if !staged {
		if err := conn.Exec(ctx, `DROP TABLE IF EXISTS `+db+`.`+tableScrub); err != nil {
			return 0, fmt.Errorf("drop %s: %w", tableScrub, err)
		}
		if err := conn.Exec(ctx, `CREATE TABLE `+db+`.`+tableScrub+` AS `+db+`.`+TableEvents); err != nil {
			return 0, fmt.Errorf("create %s: %w", tableScrub, err)
		}
		if err := stageScrubbed(ctx, conn, db, fix); err != nil {
			return 0, err
		}
		if err := markStep(ctx, conn, db, stepScrubStaged); err != nil {
			return 0, err
		}
	}
	var n uint64
	if err := conn.QueryRow(ctx, `SELECT count() FROM `+db+`.`+tableScrub).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s: %w", tableScrub, err)
	}
	if n > 0 {
		if err := mutate(ctx, conn, db, TableEvents, `DELETE WHERE id IN (SELECT id FROM `+db+`.`+tableScrub+`)`); err != nil {
			return 0, err
		}
		if err := conn.Exec(ctx, `INSERT INTO `+db+`.`+TableEvents+` SELECT * FROM `+db+`.`+tableScrub); err != nil {
			return 0, fmt.Errorf("insert scrubbed events: %w", err)
		}
	}
	if err := mutate(ctx, conn, db, TableReputation,
		`UPDATE source_id = '' WHERE kind = 'charity-donor' AND source_id != ''`); err != nil {
		return 0, err
	}
	if err := markStep(ctx, conn, db, StepScrubPersonal); err != nil {
		return 0, err
	}
	if err := conn.Exec(ctx, `DROP TABLE IF EXISTS `+db+`.`+tableScrub); err != nil {
		return 0, fmt.Errorf("drop %s: %w", tableScrub, err)
	}
	return int(n), nil
}

// stageScrubbed reads every event row and inserts the ones fix changes,
// fixed, into the staging table, 5000 at a time.
func stageScrubbed(ctx context.Context, conn driver.Conn, db string, fix func(EventRow) (EventRow, bool)) error {
	rows, err := conn.Query(ctx, `SELECT id, topic, type, key, actor_user_id, occurred_at, data, ingested_at FROM `+db+`.`+TableEvents)
	if err != nil {
		return fmt.Errorf("read events to scrub: %w", err)
	}
	defer rows.Close()
	type staged struct {
		r        EventRow
		ingested time.Time
	}
	var batch []staged
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		b, err := conn.PrepareBatch(ctx, `INSERT INTO `+db+`.`+tableScrub+
			` (id, topic, type, key, actor_user_id, occurred_at, data, ingested_at)`)
		if err != nil {
			return fmt.Errorf("prepare scrub insert: %w", err)
		}
		for _, s := range batch {
			r := s.r
			if err := b.Append(r.ID, r.Topic, r.Type, r.Key, r.ActorUserID, r.OccurredAt.UTC(), r.Data, s.ingested.UTC()); err != nil {
				_ = b.Abort()
				return fmt.Errorf("append scrubbed row: %w", err)
			}
		}
		if err := b.Send(); err != nil {
			return fmt.Errorf("insert %d scrubbed rows: %w", len(batch), err)
		}
		batch = batch[:0]
		return nil
	}
	for rows.Next() {
		var r EventRow
		var ingested time.Time
		if err := rows.Scan(&r.ID, &r.Topic, &r.Type, &r.Key, &r.ActorUserID, &r.OccurredAt, &r.Data, &ingested); err != nil {
			return fmt.Errorf("scan event to scrub: %w", err)
		}
		if fixed, changed := fix(r); changed {
			batch = append(batch, staged{fixed, ingested})
			if len(batch) >= 5000 {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read events to scrub: %w", err)
	}
	return flush()
}

// mutate runs an ALTER TABLE mutation and waits until every mutation of
// the table is done (18.16 has no mutations_sync).
func mutate(ctx context.Context, conn driver.Conn, db, table, command string) error {
	if err := conn.Exec(ctx, `ALTER TABLE `+db+`.`+table+` `+command); err != nil {
		return fmt.Errorf("mutate %s: %w", table, err)
	}
	for {
		var pending uint64
		if err := conn.QueryRow(ctx, `SELECT count() FROM system.mutations WHERE database = ? AND table = ? AND is_done = 0`,
			db, table).Scan(&pending); err != nil {
			return fmt.Errorf("wait for mutation of %s: %w", table, err)
		}
		if pending == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
