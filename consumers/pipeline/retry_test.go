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

// TestStepAfter: a momentary failure (the server, the connection,
// contention) retries the batch whole without ever counting towards
// parking; one that may be a command's own splits the batch — after
// ParkAfter whole attempts when running again might pass (23505, 57014) —
// and a command failing alone is parked on its ParkAfter-th attempt,
// whatever its SQLSTATE class.
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
		{"admin shutdown", sqlState("57P01"), 1, []step{retryBatch, retryBatch, retryBatch, retryBatch}},
		{"deadlock", sqlState("40P01"), 1, []step{retryBatch, retryBatch, retryBatch, retryBatch}},
		{"broken connection", io.ErrUnexpectedEOF, 1, []step{retryBatch, retryBatch, retryBatch, retryBatch}},
		{"unique violation, batch", sqlState("23505"), 4, []step{retryWhole, retryWhole, splitBatch}},
		{"unique violation, alone", sqlState("23505"), 1, []step{retryAlone, retryAlone, parkCommand}},
		{"statement timeout, batch", sqlState("57014"), 4, []step{retryWhole, retryWhole, splitBatch}},
		{"statement timeout, alone", sqlState("57014"), 1, []step{retryAlone, retryAlone, parkCommand}},
		{"database dropped, alone", sqlState("57P04"), 1, []step{retryAlone, retryAlone, parkCommand}},
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
			tries := 0
			for i, want := range tt.want {
				if got := r.stepAfter(tt.err, tt.n, &tries); got != want {
					t.Fatalf("failure %d: step %d, want %d", i+1, got, want)
				}
			}
		})
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
