package fiat_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"

	cfiat "github.com/fintech/platform/consumers/fiat"
	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/broker"
	"github.com/fintech/platform/topics/commandbus"
)

// sendAcrossCrash sends cmd through the real bus to a fiat-applier that
// dies after its Postgres commit and before its offsets; a second applier
// takes the redelivered command over. It checks that the waiting request
// still gets a 201 and that a client retry (same command id) gets the stored
// answer, and returns that answer. The caller then checks nothing was
// applied twice.
func sendAcrossCrash(t *testing.T, pool *pgxpool.Pool, h *cfiat.Handler, cmd pipeline.Command) schemas.Reply {
	t.Helper()
	broker, err := broker.Start(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(broker.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	runner := func(hook func(context.Context) error) *pipeline.Runner {
		r, err := pipeline.NewRunner(pipeline.Config{Group: topics.GroupFiat, Topics: []string{topics.FiatCommands},
			Brokers: broker.Addrs(), AfterDBCommit: hook}, pool, h, pipeline.NewMetrics(prometheus.NewRegistry()), log)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// The group has run before: its Kafka offsets are committed. (A group
	// without any resumes at its stored position, past the crashed batch,
	// and its waiting request is answered only on its retry.)
	cl, err := topics.NewClient(broker.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	offs := kadm.Offsets{}
	for _, s := range topics.All() {
		if s.Name == topics.FiatCommands {
			for p := range s.Partitions {
				offs.Add(kadm.Offset{Topic: s.Name, Partition: int32(p), At: 0, LeaderEpoch: -1})
			}
		}
	}
	if err := kadm.NewClient(cl).CommitAllOffsets(ctx, topics.GroupFiat, offs); err != nil {
		t.Fatal(err)
	}
	errCrash := errors.New("simulated crash")
	var once sync.Once
	first := runner(func(context.Context) error {
		err := error(nil)
		once.Do(func() { err = errCrash })
		return err
	})
	firstDone := make(chan error, 1)
	go func() { firstDone <- first.Run(ctx) }()

	bus, err := commandbus.New(ctx, broker.Addrs(), 30*time.Second, false, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bus.Close)
	cmd.Env.RequestHash = "h"
	replied := make(chan schemas.Reply, 1)
	go func() {
		rep, err := bus.Send(ctx, commandbus.Command{Topic: topics.FiatCommands, Env: cmd.Env})
		if err != nil {
			t.Error(err)
		}
		replied <- rep
	}()
	if err := <-firstDone; !errors.Is(err, errCrash) {
		t.Fatalf("first runner: %v", err)
	}
	second := runner(nil)
	go func() { _ = second.Run(ctx) }()
	rep := <-replied
	if rep.Status != http.StatusCreated {
		t.Fatalf("reply after the crash: %d %s", rep.Status, rep.Body)
	}
	// Sent again (a client retry with the same Idempotency-Key): the stored answer.
	again, err := bus.Send(ctx, commandbus.Command{Topic: topics.FiatCommands, Env: cmd.Env})
	if err != nil || !again.Replayed || string(again.Body) != string(rep.Body) {
		t.Fatalf("retry: %+v %v", again, err)
	}
	return rep
}
