package migrations_test

import (
	"context"
	"slices"
	"testing"

	"github.com/fintech/platform/storage/postgres/pgtest"
)

// TestHotRowTablesVacuumEarly: the tables that take an update per transfer or
// per batch keep half of each page free and are vacuumed after a fixed number
// of dead rows (0134), not after 20% of the table.
func TestHotRowTablesVacuumEarly(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	want := []string{"fillfactor=50", "autovacuum_vacuum_scale_factor=0",
		"autovacuum_vacuum_threshold=1000", "autovacuum_vacuum_cost_delay=0"}
	for _, table := range []string{"fiat_wallets", "fiat_limits", "reputation_scores", "ledger_head", "event_log_cursor"} {
		var opts []string
		if err := pool.QueryRow(context.Background(),
			`SELECT coalesce(reloptions, '{}') FROM pg_class WHERE oid = $1::regclass`, table).Scan(&opts); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		for _, w := range want {
			if !slices.Contains(opts, w) {
				t.Errorf("%s: storage options %v lack %s", table, opts, w)
			}
		}
	}
}
