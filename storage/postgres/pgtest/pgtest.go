// Package pgtest gives integration tests a fresh, migrated database on the
// local stack's real Postgres server (started by `make test`).
package pgtest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/ksuid"

	"github.com/fintech/platform/storage/postgres"
)

// DefaultURL is the local stack's database, used when DATABASE_URL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:55432/platform?sslmode=disable"

// ServerURL returns DATABASE_URL or the local stack's default.
func ServerURL() string {
	if u := os.Getenv("DATABASE_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// TB is the part of testing.TB that NewDB uses, so that a database can also
// be made for a whole test process (e2e TestMain).
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// NewDB creates a database with a unique name on the test server, applies
// every migration, and drops it when the test ends. It returns a pool on the
// new database and its URL.
func NewDB(t TB) (*pgxpool.Pool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	base := ServerURL()
	cfg, err := pgx.ParseConfig(base)
	if err != nil {
		t.Fatalf("parse DATABASE_URL: %v", err)
	}
	admin, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("connect to test postgres %s (run `make test`, which starts the local stack): %v", base, err)
	}
	defer admin.Close(ctx)

	name := "t_" + strings.ToLower(ksuid.New().String())
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	url := withDatabase(base, cfg.Database, name)
	pool, err := postgres.Connect(ctx, url, 20)
	if err != nil {
		t.Fatalf("connect test database: %v", err)
	}
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		t.Fatalf("migrate test database: %v", err)
	}
	t.Cleanup(func() {
		pool.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if c, err := pgx.ConnectConfig(ctx, cfg); err == nil {
			_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			_ = c.Close(ctx)
		}
	})
	return pool, url
}

func withDatabase(url, oldName, newName string) string {
	if i := strings.Index(url, "/"+oldName); i >= 0 && oldName != "" {
		return url[:i] + "/" + newName + url[i+len(oldName)+1:]
	}
	panic(fmt.Sprintf("pgtest: cannot find database %q in %q", oldName, url))
}
