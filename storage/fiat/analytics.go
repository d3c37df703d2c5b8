package fiat

import (
	"context"
	"errors"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Connector opens (once) the ClickHouse connection.
type Connector interface {
	Conn(ctx context.Context) (driver.Conn, error)
}

// ProcessorAnalytics reads the processor side of reconciliation from the
// ClickHouse copy the sink writes (consumers/sink: table events).
type ProcessorAnalytics struct {
	conns Connector
	db    string
}

// NewProcessorAnalytics reads from database db (already sanitised by
// clickhouse.DatabaseName).
func NewProcessorAnalytics(conns Connector, db string) *ProcessorAnalytics {
	return &ProcessorAnalytics{conns: conns, db: db}
}

// processorCreditedCH sums deposit.completed amounts by currency,
// deduplicating the sink's at-least-once rows on the event id. It runs on
// ClickHouse 18.16 (visitParamExtract*, no JSON type).
const processorCreditedCH = `
SELECT cur, toInt64(sum(amt)) FROM (
  SELECT id, any(visitParamExtractString(data, 'currency')) AS cur, any(visitParamExtractInt(data, 'amount')) AS amt
  FROM %s.events WHERE type = 'deposit.completed' GROUP BY id
) GROUP BY cur`

// ProcessorCredited returns the credited deposit totals by currency.
func (a *ProcessorAnalytics) ProcessorCredited(ctx context.Context) (map[string]int64, error) {
	if a.db == "" {
		return nil, errors.New("no analytics database")
	}
	conn, err := a.conns.Conn(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := conn.Query(ctx, fmt.Sprintf(processorCreditedCH, "`"+a.db+"`"))
	if err != nil {
		return nil, fmt.Errorf("sum processor deposits in clickhouse: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var cur string
		var n int64
		if err := rows.Scan(&cur, &n); err != nil {
			return nil, fmt.Errorf("scan processor deposits: %w", err)
		}
		out[cur] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sum processor deposits in clickhouse: %w", err)
	}
	return out, nil
}
