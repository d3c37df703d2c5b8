package pipeline

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func testRunner(parkAfter int) *Runner {
	return &Runner{cfg: Config{Group: "test", ParkAfter: parkAfter}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

func sqlState(code string) error {
	return fmt.Errorf("apply 2 commands: %w", &pgconn.PgError{Code: code, Message: "test"})
}

// TestStepAfter: a transient failure retries the batch whole without ever
// counting towards parking; one that may be a command's own splits the
// batch, and a command failing alone is parked on its ParkAfter-th attempt.
func TestStepAfter(t *testing.T) {
	t.Parallel()
	panicked := fmt.Errorf("%w: boom", ErrPanicked)
	tests := []struct {
		name string
		err  error
		n    int
		want []step // one per successive failure
	}{
		{"serialization failure, batch", sqlState("40001"), 5, []step{retryBatch, retryBatch, retryBatch, retryBatch}},
		{"serialization failure, alone", sqlState("40001"), 1, []step{retryBatch, retryBatch, retryBatch, retryBatch}},
		{"read-only after a failover", sqlState("25006"), 1, []step{retryBatch, retryBatch, retryBatch, retryBatch}},
		{"unique race", sqlState("23505"), 1, []step{retryBatch, retryBatch, retryBatch, retryBatch}},
		{"broken connection", io.ErrUnexpectedEOF, 1, []step{retryBatch, retryBatch, retryBatch, retryBatch}},
		{"data error, batch", sqlState("22003"), 3, []step{splitBatch, splitBatch}},
		{"data error, alone", sqlState("22003"), 1, []step{retryAlone, retryAlone, parkCommand}},
		{"check violation, alone", sqlState("23514"), 1, []step{retryAlone, retryAlone, parkCommand}},
		{"handler panic, batch", panicked, 2, []step{splitBatch}},
		{"handler panic, alone", panicked, 1, []step{retryAlone, retryAlone, parkCommand}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := testRunner(3)
			alone := 0
			for i, want := range tt.want {
				if got := r.stepAfter(tt.err, tt.n, &alone); got != want {
					t.Fatalf("failure %d: step %d, want %d", i+1, got, want)
				}
			}
		})
	}
}

// TestParkNow counts the attempts of a command tried alone.
func TestParkNow(t *testing.T) {
	t.Parallel()
	for _, after := range []int{1, 3} {
		r := testRunner(after)
		attempts := 0
		for i := 1; i < after; i++ {
			if r.parkNow(&attempts) {
				t.Fatalf("ParkAfter %d: parked on attempt %d", after, i)
			}
		}
		if !r.parkNow(&attempts) || attempts != after {
			t.Fatalf("ParkAfter %d: not parked on attempt %d (attempts %d)", after, after, attempts)
		}
	}
}

func TestPoisoned(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("%w: nil map", ErrPanicked), true},
		{sqlState("22P02"), true},
		{sqlState("42703"), true},
		{sqlState("57P04"), true},
		{errors.New("handler returned 1 outcomes for 2 commands"), false},
		{sqlState("40P01"), false},
		{sqlState("08006"), false},
		{sqlState("57P01"), false},
		{io.ErrUnexpectedEOF, false},
	}
	for _, tt := range tests {
		if got := poisoned(tt.err); got != tt.want {
			t.Errorf("poisoned(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestRecoverHandler: a handler panic becomes an ErrPanicked error naming
// the panic; without a panic the result is left as it was.
func TestRecoverHandler(t *testing.T) {
	t.Parallel()
	r := testRunner(3)
	run := func(f func() error) (err error) {
		defer r.recoverHandler(1, &err)
		return f()
	}
	err := run(func() error { panic("boom") })
	if !errors.Is(err, ErrPanicked) || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("after a panic: err = %v, want ErrPanicked naming boom", err)
	}
	if err := run(func() error { return nil }); err != nil {
		t.Fatalf("without a panic: err = %v", err)
	}
	own := errors.New("declined")
	if err := run(func() error { return own }); err != own {
		t.Fatalf("without a panic: err = %v, want the handler's own", err)
	}
}
