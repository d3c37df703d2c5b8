// Package clickhouse connects to the analytics copy of the platform's events.
// Its SQL must run on ClickHouse 18.16 (Debian's package) and on current
// releases: plain MergeTree-family tables, batch inserts with an explicit
// column list (Exec of INSERT ... VALUES hangs on 18.16), no window
// functions or newer types.
package clickhouse

import (
	"context"
	"fmt"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Credentials name the ClickHouse user the platform logs in as; an empty
// User is "default" (the local stack's, passwordless).
type Credentials struct {
	User, Password string
}

// Connect opens a native-protocol connection to addr (host:port) on the
// given database as the passwordless default user and checks that the
// server answers. An empty database is "default".
func Connect(ctx context.Context, addr, database string) (driver.Conn, error) {
	return ConnectAs(ctx, addr, database, Credentials{})
}

// ConnectAs is Connect as the user of cred.
func ConnectAs(ctx context.Context, addr, database string, cred Credentials) (driver.Conn, error) {
	if database == "" {
		database = "default"
	}
	if cred.User == "" {
		cred.User = "default"
	}
	conn, err := ch.Open(&ch.Options{
		Addr:         []string{addr},
		Auth:         ch.Auth{Database: database, Username: cred.User, Password: cred.Password},
		DialTimeout:  5 * time.Second,
		MaxOpenConns: 10,
	})
	if err != nil {
		return nil, fmt.Errorf("open clickhouse %s: %w", addr, err)
	}
	if err := conn.Ping(ctx); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("reach clickhouse at %s: %w", addr, err)
	}
	return conn, nil
}
