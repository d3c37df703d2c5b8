package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/topics"
)

// Embedded is an in-process Kafka-protocol broker (franz-go kfake) persisted
// on disk, for single-machine runs and tests.
type Embedded struct {
	cluster *kfake.Cluster
	commit  *groupCommit

	// The trimmer (trim.go) and what stops it.
	admin    *kgo.Client
	stopTrim context.CancelFunc
	trimDone sync.WaitGroup
	trimMu   sync.Mutex
	trimErr  error
	log      *slog.Logger
	floor    Floor
}

// Option configures the embedded broker.
type Option func(*Embedded)

// WithLogger reports on log a trim round that failed (each new error once,
// not every round): a failed round drops nothing, and the log keeps
// growing until one succeeds.
func WithLogger(log *slog.Logger) Option { return func(e *Embedded) { e.log = log } }

// WithFsyncObserver tells observe how long each fsync of the group commit
// took (the platform_broker_fsync_seconds histogram).
func WithFsyncObserver(observe func(time.Duration)) Option {
	return func(e *Embedded) {
		e.commit.mu.Lock()
		e.commit.observe = observe
		e.commit.mu.Unlock()
	}
}

// WithFloor never trims a partition at or above the offset floor returns
// for it (the positions the consumer groups stored in Postgres).
func WithFloor(floor Floor) Option { return func(e *Embedded) { e.floor = floor } }

// Start starts the broker on 127.0.0.1:port (0 picks a free port)
// with its data under dataDir, seeded with every topic of All. Data written
// before a restart on the same dataDir is there after it. A produce with
// acks=all is on disk before it is acknowledged, so an acknowledged record —
// an event-log row the relay then moves its cursor past — survives a host
// crash, not only a process kill; so is every offset commit and producer id.
// Produces with acks=1 (the gateway's commands, whose answer is the
// consumer's reply after its Postgres commit) and records of volatile topics
// (topics.Spec.Volatile) are acknowledged once written; an offset commit past an
// acks=1 record waits for its partition's sync. The fsyncs are group commits
// (durable.go): the broker writes to the page cache, and each acknowledgement
// waits for the next fsync round of the files it needs, shared by every
// request waiting at that moment, outside the broker's request loop
// (kfake.SyncWrites fsyncs every partition of every produce inside it, one at
// a time). Records no consumer needs any more are dropped (trim.go).
func Start(dataDir string, port int, options ...Option) (*Embedded, error) {
	dir := filepath.Join(dataDir, "kafka")
	// The segments hold every command and event (e-mails, memos): only
	// the platform's own user may enter their directory, whatever mode
	// the broker gives the files in it (issue 45).
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("embedded broker data directory: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("embedded broker data directory: %w", err)
	}
	volatile := map[string]bool{}
	for _, s := range topics.All() {
		if s.Volatile {
			volatile[s.Name] = true
		}
	}
	commit := newGroupCommit(dir, volatile)
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.Ports(port),
		kfake.DataDir(dir),
		kfake.ClusterID("platform-embedded"),
		kfake.ListenFn(commit.listen),
		kfake.BrokerConfigs(map[string]string{"log.segment.bytes": strconv.Itoa(segmentBytes)}),
	}
	byCount := map[int32][]string{}
	for _, s := range topics.All() {
		byCount[s.Partitions] = append(byCount[s.Partitions], s.Name)
	}
	for n, names := range byCount {
		opts = append(opts, kfake.SeedTopics(n, names...))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		commit.close()
		return nil, fmt.Errorf("start embedded kafka on port %d: %w", port, err)
	}
	commit.mu.Lock()
	commit.topicName = func(id [16]byte) (string, bool) {
		if i := c.TopicIDInfo(id); i != nil {
			return i.Topic, true
		}
		return "", false
	}
	commit.mu.Unlock()
	e := &Embedded{cluster: c, commit: commit}
	for _, o := range options {
		o(e)
	}
	admin, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("embedded kafka admin client: %w", err)
	}
	e.admin = admin
	t := newTrimmer(kadm.NewClient(admin), topics.All(), topics.Groups(), keepTail, time.Now)
	t.floor = e.floor
	ctx, cancel := context.WithCancel(context.Background())
	e.stopTrim = cancel
	e.trimDone.Add(1)
	go func() {
		defer e.trimDone.Done()
		t.run(ctx, trimEvery, e.trimFailed)
	}()
	return e, nil
}

// trimFailed keeps the last trim error other than a platform group not
// running (TrimError).
func (e *Embedded) trimFailed(err error) {
	if errors.Is(err, errNotLive) {
		return
	}
	e.trimMu.Lock()
	repeated := e.trimErr != nil && e.trimErr.Error() == err.Error()
	e.trimErr = err
	e.trimMu.Unlock()
	if e.log != nil && !repeated {
		e.log.Warn("trimming the embedded broker's log failed; nothing was dropped this round", "err", err)
	}
}

// TrimError returns the last error of the round that trims records no
// consumer needs (nil if none failed): a failed round drops nothing.
func (e *Embedded) TrimError() error {
	e.trimMu.Lock()
	defer e.trimMu.Unlock()
	return e.trimErr
}

// Addrs returns the broker's listen addresses.
func (e *Embedded) Addrs() []string { return e.cluster.ListenAddrs() }

// Fsyncs returns how many fsync calls the group commit has made: the
// broker's disk flushes, which the bench reports per transfer.
func (e *Embedded) Fsyncs() int64 {
	e.commit.mu.Lock()
	defer e.commit.mu.Unlock()
	return e.commit.fsyncs
}

// Close stops the broker and flushes its data to disk.
func (e *Embedded) Close() {
	if e.stopTrim != nil {
		e.stopTrim()
		e.trimDone.Wait()
	}
	if e.admin != nil {
		e.admin.Close()
	}
	e.cluster.Close()
	e.commit.close()
}
