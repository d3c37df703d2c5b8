package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/segmentio/ksuid"
)

// Flow is the money flow per second of the admin console: completed
// transfers (events.fiat transfer.completed) and transferred amounts per
// currency (fiat:transfer ledger entries), keyed by Unix second. Both are
// deduplicated on the record id, so a batch the sink inserted twice counts
// once.
type Flow struct {
	Transfers map[int64]int64
	// Volume is minor units per currency and second.
	Volume map[string]map[int64]int64
}

// QueryFlow reads the flow since the given time. It runs on ClickHouse
// 18.16 (no window functions, no JSON functions). Both tables are ordered
// by their ksuid ids, which begin with their creation second, so a lower
// bound on the id (a minute before since, for clock skew between
// producers) lets ClickHouse skip the older granules instead of scanning
// the whole history on every refresh.
func QueryFlow(ctx context.Context, conn driver.Conn, db string, since time.Time) (Flow, error) {
	out := Flow{Transfers: map[int64]int64{}, Volume: map[string]map[int64]int64{}}
	low, err := ksuid.FromParts(since.Add(-time.Minute), make([]byte, 16))
	if err != nil {
		return Flow{}, fmt.Errorf("flow lower bound: %w", err)
	}
	q := fmt.Sprintf(`SELECT toInt64(toUInt32(t)) AS s, toInt64(count()) FROM
    (SELECT id, any(occurred_at) AS t FROM %s.%s
     WHERE id >= '%s' AND topic = 'events.fiat' AND type = 'transfer.completed' AND occurred_at >= toDateTime(%d) GROUP BY id)
GROUP BY s ORDER BY s`, db, TableEvents, low, since.Unix())
	rows, err := conn.Query(ctx, q)
	if err != nil {
		return Flow{}, fmt.Errorf("query transfers per second: %w", err)
	}
	for rows.Next() {
		var s, n int64
		if err := rows.Scan(&s, &n); err != nil {
			rows.Close()
			return Flow{}, fmt.Errorf("scan transfers per second: %w", err)
		}
		out.Transfers[s] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return Flow{}, fmt.Errorf("read transfers per second: %w", err)
	}
	q = fmt.Sprintf(`SELECT c, toInt64(toUInt32(t)) AS s, toInt64(sum(a)) FROM
    (SELECT id, any(currency) AS c, any(ts) AS t, any(amount_cents) AS a FROM %s.%s
     WHERE id >= '%s' AND kind = 'fiat:transfer' AND ts >= toDateTime(%d) GROUP BY id)
GROUP BY c, s ORDER BY c, s`, db, TableLedger, low, since.Unix())
	rows, err = conn.Query(ctx, q)
	if err != nil {
		return Flow{}, fmt.Errorf("query volume per second: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c string
		var s, a int64
		if err := rows.Scan(&c, &s, &a); err != nil {
			return Flow{}, fmt.Errorf("scan volume per second: %w", err)
		}
		if out.Volume[c] == nil {
			out.Volume[c] = map[int64]int64{}
		}
		out.Volume[c][s] = a
	}
	return out, rows.Err()
}

// Flow returns the money flow since the given time.
func (a *Analytics) Flow(ctx context.Context, since time.Time) (Flow, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	c, err := a.open(ctx)
	if err != nil {
		return Flow{}, err
	}
	return QueryFlow(ctx, c, a.db, since)
}
