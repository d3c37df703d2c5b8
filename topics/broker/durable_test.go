package broker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/topics"
)

// produceAll sends n records from workers concurrent synchronous producers
// (one record per ProduceSync, as the gateway's commands and the pipeline's
// replies do), spread over the partitions of topic.
func produceAll(tb testing.TB, addrs []string, topic string, workers, n int) {
	tb.Helper()
	cl, err := topics.NewClient(addrs)
	if err != nil {
		tb.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				rec := &kgo.Record{Topic: topic, Key: []byte(fmt.Sprint("k", i)), Value: []byte(fmt.Sprint("v", i))}
				if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
}

func countRecords(t *testing.T, addrs []string, topic string, want int) {
	t.Helper()
	cl, err := topics.NewClient(addrs, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := 0
	for got < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read back %d of %d records", got, want)
		}
		got += len(fs.Records())
	}
	if got != want {
		t.Fatalf("read back %d records, want %d", got, want)
	}
}

// TestEmbeddedGroupCommit: every produce is acknowledged only after an fsync
// round that started after it, the rounds are shared (fewer fsyncs than
// SyncWrites' two per partition batch), and the records are there after a
// restart.
func TestEmbeddedGroupCommit(t *testing.T) {
	dir := t.TempDir()
	e, err := Start(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	addrs := e.Addrs()
	produceAll(t, addrs, topics.FiatCommands, 16, 400)
	e.commit.mu.Lock()
	fsyncs := e.commit.fsyncs
	e.commit.mu.Unlock()
	if fsyncs == 0 {
		t.Fatal("no fsync for 400 acknowledged records")
	}
	t.Logf("400 records from 16 producers: %d fsyncs", fsyncs)

	// A reply (a volatile topic) is acknowledged while a round is held. It
	// comes from another client, with its producer id taken before the
	// hold, because the broker answers a connection's requests in order.
	replies, err := topics.NewClient(addrs)
	if err != nil {
		t.Fatal(err)
	}
	defer replies.Close()
	rctx, rcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer rcancel()
	if err := replies.ProduceSync(rctx, &kgo.Record{Topic: topics.GatewayReplies, Value: []byte("warm")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	// Hold the next round: a produce is not acknowledged while it is held.
	gate := make(chan struct{})
	e.commit.mu.Lock()
	held := make(chan struct{}, 1)
	e.commit.beforeRound = func() {
		select {
		case held <- struct{}{}:
		default:
		}
		<-gate
	}
	e.commit.mu.Unlock()
	manual := kgo.RecordPartitioner(kgo.ManualPartitioner())
	cl, err := topics.NewClient(addrs, manual)
	if err != nil {
		t.Fatal(err)
	}
	acked := make(chan error, 1)
	cl.Produce(context.Background(), &kgo.Record{Topic: topics.FiatCommands, Partition: 0, Value: []byte("held")},
		func(_ *kgo.Record, err error) { acked <- err })
	if err := replies.ProduceSync(rctx, &kgo.Record{Topic: topics.GatewayReplies, Value: []byte("reply")}).FirstErr(); err != nil {
		t.Fatalf("a reply was not acknowledged while a sync round was held: %v", err)
	}
	// So is a produce with acks=1 (the gateway's commands).
	<-held
	leader, err := topics.NewClient(addrs, manual, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	if err != nil {
		t.Fatal(err)
	}
	defer leader.Close()
	lrec := &kgo.Record{Topic: topics.FiatCommands, Partition: 1, Value: []byte("leader-ack")}
	if err := leader.ProduceSync(rctx, lrec).FirstErr(); err != nil {
		t.Fatalf("an acks=1 produce was not acknowledged while a sync round was held: %v", err)
	}
	select {
	case err := <-acked:
		t.Fatalf("produce acknowledged before its fsync round ran (err %v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(gate)
	if err := <-acked; err != nil {
		t.Fatal(err)
	}

	// The acks=1 record is not synced until an offset commit past it,
	// whose acknowledgement waits for a round that syncs its partition.
	segment := newestSegment(t, filepath.Join(dir, "kafka", "partitions", topics.FiatCommands+"-1"))
	if syncedSize(e.commit, segment) == fileSize(t, segment) {
		t.Fatal("the acks=1 record was synced before any offset commit needed it")
	}
	offsets := make(kadm.Offsets)
	offsets.Add(kadm.Offset{Topic: topics.FiatCommands, Partition: 1, At: lrec.Offset + 1, LeaderEpoch: -1})
	committed, err := kadm.NewClient(leader).CommitOffsets(rctx, "probe", offsets)
	if err != nil || committed.Error() != nil {
		t.Fatalf("commit offsets: %v %v", err, committed.Error())
	}
	if got, want := syncedSize(e.commit, segment), fileSize(t, segment); got != want {
		t.Fatalf("offset commit acknowledged with its partition synced up to %d of %d bytes", got, want)
	}
	cl.Close()
	e.Close()

	e2, err := Start(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	countRecords(t, e2.Addrs(), topics.FiatCommands, 402)
	countRecords(t, e2.Addrs(), topics.GatewayReplies, 2) // written, and flushed on a clean close
}

func newestSegment(t *testing.T, partDir string) string {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(partDir, "*.dat"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no segment in %s: %v", partDir, err)
	}
	newest, newestBase := "", int64(-1)
	for _, s := range segs {
		if b, ok := segmentBase(s); ok && b > newestBase {
			newest, newestBase = s, b
		}
	}
	return newest
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Size()
}

// syncedSize is the size path had when its last sync started (-1: never).
func syncedSize(g *groupCommit, path string) int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if info := g.lastSync[path]; info != nil {
		return info.Size()
	}
	return -1
}

// BenchmarkEmbeddedProduce compares kfake's SyncWrites (an fsync of every
// partition batch inside the broker loop) with the group commit, for 32
// concurrent one-record producers over the 12 partitions of fiat.commands.
// ns/op is per acknowledged record.
func BenchmarkEmbeddedProduce(b *testing.B) {
	for _, mode := range []string{"syncwrites", "groupcommit"} {
		b.Run(mode, func(b *testing.B) {
			dir := b.TempDir()
			var addrs []string
			var stop func()
			if mode == "groupcommit" {
				e, err := Start(dir, 0)
				if err != nil {
					b.Fatal(err)
				}
				addrs, stop = e.Addrs(), e.Close
			} else {
				opts := []kfake.Opt{kfake.NumBrokers(1), kfake.DataDir(filepath.Join(dir, "kafka")), kfake.SyncWrites(),
					kfake.SeedTopics(12, topics.FiatCommands)}
				c, err := kfake.NewCluster(opts...)
				if err != nil {
					b.Fatal(err)
				}
				addrs, stop = c.ListenAddrs(), c.Close
			}
			defer stop()
			produceAll(b, addrs, topics.FiatCommands, 32, 64) // warm up: connections, producer id
			b.ResetTimer()
			produceAll(b, addrs, topics.FiatCommands, 32, b.N)
		})
	}
}

// TestGroupCommitFilesAfterRollAndRename: the broker's logs are synced by
// name (kfake replaces groups.log by rename, so a kept descriptor would sync
// the dead inode), and the descriptors of segments the broker rolled past
// are closed once synced (retention deletes them).
func TestGroupCommitFilesAfterRollAndRename(t *testing.T) {
	dir := t.TempDir()
	part := filepath.Join(dir, "partitions", "t-0")
	if err := os.MkdirAll(part, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string) {
		if err := os.WriteFile(filepath.Join(part, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g := newGroupCommit(dir, nil)
	defer g.close()
	write("0.dat")
	write("0.idx")
	partition := need{parts: map[partKey]struct{}{{topic: "t", part: 0}: {}}}
	if err := g.round(partition); err != nil {
		t.Fatal(err)
	}
	if g.files[filepath.Join(part, "0.dat")] == nil {
		t.Fatal("the active segment's descriptor is not kept")
	}
	before := g.fsyncs
	if err := g.round(partition); err != nil {
		t.Fatal(err)
	}
	if g.fsyncs != before {
		t.Fatalf("a round synced an unchanged segment again (%d fsyncs)", g.fsyncs-before)
	}
	write("5.dat") // the broker rolled to a new segment
	write("5.idx")
	for range 2 { // the round after the roll syncs 0 and 5; the next forgets 0
		if err := g.round(partition); err != nil {
			t.Fatal(err)
		}
	}
	if g.files[filepath.Join(part, "0.dat")] != nil || g.files[filepath.Join(part, "5.dat")] == nil {
		t.Fatalf("descriptors after the roll: %v", g.files)
	}
	logPath := filepath.Join(dir, "groups.log")
	if err := os.WriteFile(logPath, []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := g.round(need{groups: true}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(logPath+".tmp", []byte("b"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(logPath+".tmp", logPath); err != nil { // compaction
		t.Fatal(err)
	}
	before = g.fsyncs
	if err := g.round(need{groups: true}); err != nil {
		t.Fatal(err)
	}
	if g.fsyncs == before || g.files[logPath] != nil {
		t.Fatalf("groups.log after its rename: fsyncs %d → %d, kept descriptor %v", before, g.fsyncs, g.files[logPath] != nil)
	}
}

// TestEmbeddedRecoversWithoutIndexFiles: the group commit does not sync the
// segments' index files, so a host crash may leave them short; the broker
// rebuilds every partition from its segments alone.
func TestEmbeddedRecoversWithoutIndexFiles(t *testing.T) {
	dir := t.TempDir()
	e, err := Start(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	produceAll(t, e.Addrs(), topics.FiatCommands, 4, 50)
	e.Close()
	parts := filepath.Join(dir, "kafka", "partitions")
	idx, _ := filepath.Glob(filepath.Join(parts, "*", "*.idx"))
	snaps, _ := filepath.Glob(filepath.Join(parts, "*", "snapshot.json"))
	if len(idx) == 0 {
		t.Fatal("no index files to lose")
	}
	for _, p := range idx {
		if err := os.Truncate(p, 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range snaps { // a crash writes no snapshot
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	e2, err := Start(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	countRecords(t, e2.Addrs(), topics.FiatCommands, 50)
	produceAll(t, e2.Addrs(), topics.FiatCommands, 4, 10)
	countRecords(t, e2.Addrs(), topics.FiatCommands, 60)
}

// TestFsyncObserver: WithFsyncObserver is told the duration of every fsync
// the group commit makes after it is set (the platform_broker_fsync_seconds
// histogram).
func TestFsyncObserver(t *testing.T) {
	var mu sync.Mutex
	var seen []time.Duration
	e, err := Start(t.TempDir(), 0, WithFsyncObserver(func(d time.Duration) {
		mu.Lock()
		seen = append(seen, d)
		mu.Unlock()
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	before := e.Fsyncs()
	produceAll(t, e.Addrs(), topics.FiatCommands, 4, 40)
	after := e.Fsyncs()
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 || int64(len(seen)) < after-before {
		t.Fatalf("observed %d fsyncs, the broker made %d while producing", len(seen), after-before)
	}
	for _, d := range seen {
		if d < 0 {
			t.Fatalf("negative fsync duration %v", d)
		}
	}
}
