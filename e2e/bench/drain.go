package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/fintech/platform/topics"
)

// drainGroups are the consumer groups whose lag must be 0 before the
// platform's clock stops: the money path's fiat applier and everything a
// transfer emits (ledger chain, reputation, ClickHouse sink).
var drainGroups = []string{topics.GroupFiat, topics.GroupLedger, topics.GroupReputation, topics.GroupSink}

// lagReader reads consumer group lag with an admin client.
type lagReader struct{ adm *kadm.Client }

func newLagReader(brokers []string) (*lagReader, error) {
	cl, err := topics.NewClient(brokers)
	if err != nil {
		return nil, err
	}
	return &lagReader{adm: kadm.NewClient(cl)}, nil
}

func (r *lagReader) Close() { r.adm.Close() }

// lagOf returns the total lag of each group (committed offset to end
// offset over every partition of its topics).
func (r *lagReader) lagOf(ctx context.Context) (map[string]int64, error) {
	lags, err := r.adm.Lag(ctx, drainGroups...)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, g := range drainGroups {
		l, ok := lags[g]
		if !ok {
			return nil, fmt.Errorf("group %s not described", g)
		}
		if err := l.Error(); err != nil {
			return nil, fmt.Errorf("group %s: %w", g, err)
		}
		var total int64
		for _, ps := range l.Lag {
			for _, m := range ps {
				if m.Err != nil {
					return nil, fmt.Errorf("group %s %s/%d: %w", g, m.Topic, m.Partition, m.Err)
				}
				total += m.Lag
			}
		}
		out[g] = total
	}
	return out, nil
}

func formatLag(l map[string]int64) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, l[k]))
	}
	return strings.Join(parts, " ")
}

// ledgerHeight reads the platform's chain height.
func ledgerHeight(ctx context.Context, db *pgxpool.Pool) (int64, error) {
	var h int64
	err := db.QueryRow(ctx, `SELECT height FROM ledger_head`).Scan(&h)
	return h, err
}

// drain waits until every transfer answered so far is fully processed: the
// ledger chain holds at least wantHeight entries (every settled transfer's
// entry went outbox → relay → ledger.append → appender) and the lag of every
// drain group is 0. It returns the last lag it read.
func (r *lagReader) drain(ctx context.Context, db *pgxpool.Pool, wantHeight int64, timeout time.Duration) (map[string]int64, error) {
	deadline := time.Now().Add(timeout)
	var last map[string]int64
	var lastErr error
	for {
		h, err := ledgerHeight(ctx, db)
		if err == nil && h >= wantHeight {
			last, err = r.lagOf(ctx)
			if err == nil {
				var total int64
				for _, v := range last {
					total += v
				}
				if total == 0 {
					return last, nil
				}
			}
		}
		if err != nil {
			lastErr = err
		}
		if time.Now().After(deadline) {
			return last, fmt.Errorf("not drained after %s (ledger height %d, want %d; lag %s; last error %v)",
				timeout, h, wantHeight, formatLag(last), lastErr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
