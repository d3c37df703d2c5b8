package postgres

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestTransientBySQLState: the classes a consumer retries for as long as
// it takes (never parking the command, never answering 500) against those
// it may park, without a database.
func TestTransientBySQLState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		err       error
		transient bool
	}{
		{"connection failure 08006", pgErr("08006"), true},
		{"connection does not exist 08003", pgErr("08003"), true},
		{"serialization failure 40001", pgErr("40001"), true},
		{"deadlock 40P01", pgErr("40P01"), true},
		{"too many connections 53300", pgErr("53300"), true},
		{"disk full 53100", pgErr("53100"), true},
		{"lock not available 55P03", pgErr("55P03"), true},
		{"query cancelled 57014", pgErr("57014"), true},
		{"admin shutdown 57P01", pgErr("57P01"), true},
		{"crash shutdown 57P02", pgErr("57P02"), true},
		{"cannot connect now 57P03", pgErr("57P03"), true},
		{"io error 58030", pgErr("58030"), true},
		{"read-only transaction 25006", pgErr("25006"), true},
		{"cached plan must not change result type 0A000", pgErr("0A000"), true},
		{"unique race 23505", pgErr("23505"), true},
		{"wrapped read-only", fmt.Errorf("apply 3 commands: %w", pgErr("25006")), true},
		{"network", io.ErrUnexpectedEOF, true},
		{"database dropped 57P04", pgErr("57P04"), false},
		{"numeric out of range 22003", pgErr("22003"), false},
		{"invalid text 22P02", pgErr("22P02"), false},
		{"not null 23502", pgErr("23502"), false},
		{"foreign key 23503", pgErr("23503"), false},
		{"check 23514", pgErr("23514"), false},
		{"undefined column 42703", pgErr("42703"), false},
		{"insufficient privilege 42501", pgErr("42501"), false},
		{"raise in a trigger P0001", pgErr("P0001"), false},
		{"other transaction state 25001", pgErr("25001"), false},
		{"other feature not supported 0A001", pgErr("0A001"), false},
		{"shutdown of the caller", context.Canceled, false},
		{"wrapped shutdown", fmt.Errorf("begin: %w", context.Canceled), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Transient(tt.err); got != tt.transient {
				t.Fatalf("Transient(%v) = %v, want %v", tt.err, got, tt.transient)
			}
			if got := IsRetriable(tt.err); got != tt.transient {
				t.Fatalf("IsRetriable(%v) = %v, want %v", tt.err, got, tt.transient)
			}
		})
	}
}

func pgErr(code string) error { return &pgconn.PgError{Code: code, Message: "test"} }

// TestUnavailable: what the API answers 503 (retry) rather than 500.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"admin shutdown 57P01", pgErr("57P01"), true},
		{"read-only 25006", fmt.Errorf("read: %w", pgErr("25006")), true},
		{"too many connections 53300", pgErr("53300"), true},
		{"connection refused", &pgconn.ConnectError{}, true},
		{"broken connection", io.ErrUnexpectedEOF, true},
		{"unique violation 23505", pgErr("23505"), false},
		{"numeric out of range 22003", pgErr("22003"), false},
		{"a bug", fmt.Errorf("nil map"), false},
	}
	for _, tt := range tests {
		if got := Unavailable(tt.err); got != tt.want {
			t.Errorf("%s: Unavailable = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestTransientCode: the class is read only from a whole five-character
// SQLSTATE; anything else is not a transient code.
func TestTransientCode(t *testing.T) {
	t.Parallel()
	for code, want := range map[string]bool{
		"08000": true, "40001": true, "58000": true, "55P03": true,
		"": false, "08": false, "4000": false, "400010": false, "57P04": false, "22000": false,
	} {
		if got := transientCode(code); got != want {
			t.Errorf("transientCode(%q) = %v, want %v", code, got, want)
		}
	}
}

// TestMomentary: what a consumer retries whole for as long as it takes —
// the server, the connection, contention — against what it may park after
// a command's tries, including the transient 23505 and 57014 that can
// repeat for one command every time.
func TestMomentary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"connection failure 08006", pgErr("08006"), true},
		{"read-only transaction 25006", fmt.Errorf("apply: %w", pgErr("25006")), true},
		{"admin shutdown 57P01", pgErr("57P01"), true},
		{"crash shutdown 57P02", pgErr("57P02"), true},
		{"cannot connect now 57P03", pgErr("57P03"), true},
		{"serialization failure 40001", pgErr("40001"), true},
		{"deadlock 40P01", pgErr("40P01"), true},
		{"lock not available 55P03", pgErr("55P03"), true},
		{"too many connections 53300", pgErr("53300"), true},
		{"network", io.ErrUnexpectedEOF, true},
		{"unique violation 23505", pgErr("23505"), false},
		{"statement timeout 57014", pgErr("57014"), false},
		{"database dropped 57P04", pgErr("57P04"), false},
		{"numeric out of range 22003", pgErr("22003"), false},
		{"shutdown of the caller", context.Canceled, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Momentary(tt.err); got != tt.want {
				t.Fatalf("Momentary(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
