package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

// privatePostgres is a PostgreSQL server of one test's own (pgtest.Server),
// so that the test can crash it (an immediate shutdown: no checkpoint,
// recovery from the WAL at the next start) without touching the server
// every other test shares. Unlike pgtest's default it keeps fsync and
// synchronous commits on: a crash test needs what it committed to survive.
type privatePostgres struct {
	*pgtest.Server
}

func startPrivatePostgres(t *testing.T) *privatePostgres {
	t.Helper()
	return startPrivatePostgresWith(t, nil)
}

// startPrivatePostgresWith starts a private server whose postgresql.conf
// also gets what conf returns for the server (its Root, Dir and Port are
// set; Root is where a test keeps more beside the server, such as a
// pgBackRest repository: backup_helpers_test.go).
func startPrivatePostgresWith(t *testing.T, conf func(pg *privatePostgres) string) *privatePostgres {
	t.Helper()
	pg := &privatePostgres{}
	pgtest.StartServerWith(t, pgtest.ServerOptions{Port: harness.FreePort(t), Settings: func(s *pgtest.Server) string {
		pg.Server = s
		settings := "max_connections = 200\nshared_buffers = 128MB\nfsync = on\nsynchronous_commit = on\n"
		if conf != nil {
			settings += conf(pg)
		}
		return settings
	}})
	return pg
}

// start starts the server and waits until it accepts connections.
func (pg *privatePostgres) start(t *testing.T) {
	t.Helper()
	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}
}

// crash stops the server the way a power cut would look to it: an
// immediate shutdown, with no checkpoint; the next start replays the WAL.
func (pg *privatePostgres) crash(t *testing.T) {
	t.Helper()
	if err := pg.Ctl("stop", "-m", "immediate", "-w"); err != nil {
		t.Fatal(err)
	}
}

// newDatabase creates a database with a name of its own (the ClickHouse
// copy is named after it) and returns its URL.
func (pg *privatePostgres) newDatabase(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, pg.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("pgcrash_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	return pg.URL(name)
}
