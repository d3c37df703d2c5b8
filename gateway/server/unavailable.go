package server

import (
	"context"
	"errors"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fintech/platform/storage/postgres"
)

// databaseUnavailable reports whether a handler's error is Postgres failing
// for the moment rather than the request: no connection to a read-write
// server (a failover: the old primary is gone, the new one is not promoted
// yet, or a connection reaches a standby), a connection cut mid-query, or a
// transient SQLSTATE (postgres.IsRetriable). Such a request is answered 503
// unavailable, which the client retries with the same Idempotency-Key, never
// 500. A unique violation is the request's own conflict, not the database's.
func databaseUnavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code != "23505" && postgres.IsRetriable(err)
	}
	var connErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connErr) || errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) ||
		pgconn.SafeToRetry(err) || pgconn.Timeout(err)
}
