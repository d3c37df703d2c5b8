package harness

import (
	"os"
)

// Backing names the services a platform instance uses; an empty KafkaBrokers
// means the embedded broker. Each instance gets its own database on the
// Postgres server of DATABASE_URL (containerBacking points it at its
// container).
type Backing struct {
	ClickHouseAddr string
	KafkaBrokers   string
}

// backingFor returns the services of this test process: containers when a
// Docker engine is reachable, else the local stack.
func backingFor(t TB) Backing {
	t.Helper()
	if b, ok := containerBacking(t); ok {
		return b
	}
	addr := os.Getenv("CLICKHOUSE_ADDR")
	if addr == "" {
		addr = "127.0.0.1:19000"
	}
	return Backing{ClickHouseAddr: addr}
}
