package clickhouse

import (
	"context"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Lazy connects ClickHouse on first use and again after a failed attempt, so
// a process starts (and serves everything else) while ClickHouse is down.
// It is safe for concurrent use.
type Lazy struct {
	addr, database string
	cred           Credentials
	mu             sync.Mutex
	conn           driver.Conn
}

// NewLazy returns a connector for addr; database is the one Connect opens
// ("default"), while the analytics tables are named with their database.
func NewLazy(addr, database string) *Lazy { return &Lazy{addr: addr, database: database} }

// NewLazyAs is NewLazy logging in as the user of cred.
func NewLazyAs(addr, database string, cred Credentials) *Lazy {
	return &Lazy{addr: addr, database: database, cred: cred}
}

// Conn returns the connection, connecting when needed.
func (l *Lazy) Conn(ctx context.Context) (driver.Conn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn != nil {
		return l.conn, nil
	}
	c, err := ConnectAs(ctx, l.addr, l.database, l.cred)
	if err != nil {
		return nil, err
	}
	l.conn = c
	return c, nil
}

// Close closes the connection if one was made.
func (l *Lazy) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return nil
	}
	err := l.conn.Close()
	l.conn = nil
	return err
}

// Analytics serves the API's reads of the analytics tables in database db.
type Analytics struct {
	conn  *Lazy
	db    string
	mu    sync.Mutex
	ready bool
}

// NewAnalytics builds the reads.
func NewAnalytics(conn *Lazy, db string) *Analytics { return &Analytics{conn: conn, db: db} }

const queryTimeout = 10 * time.Second

// LedgerStats returns the rolling entry counts.
func (a *Analytics) LedgerStats(ctx context.Context, now time.Time) (LedgerStats, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	c, err := a.open(ctx)
	if err != nil {
		return LedgerStats{}, err
	}
	return QueryLedgerStats(ctx, c, a.db, now)
}

// Leaderboard returns a leaderboard page.
func (a *Analytics) Leaderboard(ctx context.Context, q LeaderQuery) ([]LeaderRow, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	c, err := a.open(ctx)
	if err != nil {
		return nil, err
	}
	return QueryLeaderboard(ctx, c, a.db, q)
}

// Distribution returns the score distribution and the events since.
func (a *Analytics) Distribution(ctx context.Context, since time.Time) ([]ScoreCount, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	c, err := a.open(ctx)
	if err != nil {
		return nil, 0, err
	}
	return ReputationDistribution(ctx, c, a.db, since)
}

// open returns the connection, creating the tables the first time (the
// sink creates them too; whichever starts first wins).
func (a *Analytics) open(ctx context.Context) (driver.Conn, error) {
	c, err := a.conn.Conn(ctx)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.ready {
		if err := EnsureSchema(ctx, c, a.db); err != nil {
			return nil, err
		}
		a.ready = true
	}
	return c, nil
}
