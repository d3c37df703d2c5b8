package clickhouse

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/segmentio/ksuid"
)

// TestConnectAsSendsTheCredentials: ConnectAs logs in as the user it is
// given (compose's ClickHouse has no passwordless user): an unknown user or
// a wrong password is refused, the local stack's default user is taken.
func TestConnectAsSendsTheCredentials(t *testing.T) {
	addr := os.Getenv("CLICKHOUSE_ADDR")
	if addr == "" {
		addr = "127.0.0.1:19000"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := ConnectAs(ctx, addr, "", Credentials{})
	if err != nil {
		t.Fatalf("clickhouse (run `make test`, which starts the local stack): %v", err)
	}
	_ = conn.Close()
	for _, cred := range []Credentials{{User: "nobody_" + ksuid.New().String(), Password: "x"}, {User: "default", Password: "wrong"}} {
		if conn, err := ConnectAs(ctx, addr, "", cred); err == nil {
			_ = conn.Close()
			t.Errorf("ConnectAs %q with a password it does not have: connected", cred.User)
		}
	}
	l := NewLazyAs(addr, "", Credentials{User: "nobody_" + ksuid.New().String()})
	if _, err := l.Conn(ctx); err == nil {
		t.Error("NewLazyAs with an unknown user: connected")
	}
	_ = l.Close()
}
