package broker

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/topics"
)

// produceTo writes n records of size bytes to one partition, stamped at.
func produceTo(t *testing.T, cl *kgo.Client, topic string, part int32, n, size int, at time.Time) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range n {
		rec := &kgo.Record{Topic: topic, Partition: part, Value: []byte(strings.Repeat("x", size-1) + string(rune('a'+i%26))), Timestamp: at}
		if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

func commit(t *testing.T, adm *kadm.Client, group, topic string, part int32, at int64) {
	t.Helper()
	offsets := make(kadm.Offsets)
	offsets.Add(kadm.Offset{Topic: topic, Partition: part, At: at, LeaderEpoch: -1})
	resp, err := adm.CommitOffsets(context.Background(), group, offsets)
	if err != nil || resp.Error() != nil {
		t.Fatalf("commit %s at %d: %v %v", group, at, err, resp.Error())
	}
}

func startOffset(t *testing.T, adm *kadm.Client, topic string, part int32) int64 {
	t.Helper()
	listed, err := adm.ListStartOffsets(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	o, ok := listed.Lookup(topic, part)
	if !ok || o.Err != nil {
		t.Fatalf("start offset of %s/%d: %v", topic, part, o.Err)
	}
	return o.Offset
}

// segmentBases lists the base offsets of a partition's segment files.
func segmentBases(t *testing.T, dir, topic string, part int32) []int64 {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(dir, "kafka", "partitions", topic+"-"+strconv.Itoa(int(part)), "*.dat"))
	if err != nil {
		t.Fatal(err)
	}
	var bases []int64
	for _, s := range segs {
		if b, ok := segmentBase(s); ok {
			bases = append(bases, b)
		}
	}
	return bases
}

// readFrom reads a partition from offset from up to its end and returns
// the offsets it got; a reset past a trimmed offset shows as a gap.
func readFrom(t *testing.T, addrs []string, topic string, part int32, from, end int64) []int64 {
	t.Helper()
	cl, err := topics.NewClient(addrs, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {part: kgo.NewOffset().At(from)}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var got []int64
	for len(got) == 0 || got[len(got)-1] < end-1 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %s/%d from %d: got %d records before the deadline", topic, part, from, len(got))
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, r.Offset) })
	}
	return got
}

// TestTrimKeepsWhatAConsumerNeeds: the embedded broker drops a partition's
// records only below the offset every group that reads the topic has
// committed — a subscribed group that has committed nothing keeps all of it
// — never into the last keepTail records, deletes the segment files wholly
// below, and a restart loads only the segments that are left.
func TestTrimKeepsWhatAConsumerNeeds(t *testing.T) {
	dir := t.TempDir()
	e, err := Start(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	addrs := e.Addrs()
	cl, err := topics.NewClient(addrs, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topic := topics.EventsFiat // kept forever (RetentionMs -1)
	// 100 records of 64 KiB: 1 MiB segments of 16 records.
	produceTo(t, cl, topic, 0, 100, 64<<10, time.Now())
	if n := len(segmentBases(t, dir, topic, 0)); n < 6 {
		t.Fatalf("%d segments for 6.4 MB", n)
	}

	// A subscribed group that has committed nothing yet reads the topic too.
	fresh, err := topics.NewClient(addrs, kgo.ConsumerGroup("fresh"), kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	commit(t, adm, "sink", topic, 0, 40)
	commit(t, adm, "hooks", topic, 0, 70)

	tr := newTrimmer(adm, topics.All(), []string{"fresh"}, 10, time.Now)
	waitStable(t, adm, "fresh")
	if _, err := tr.once(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := startOffset(t, adm, topic, 0); got != 0 {
		t.Fatalf("trimmed to %d while group fresh, subscribed, had committed nothing", got)
	}
	// fresh gets every record from the start.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var first []int64
	for len(first) < 100 {
		fs := fresh.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("group fresh read %d of 100 records", len(first))
		}
		fs.EachRecord(func(r *kgo.Record) { first = append(first, r.Offset) })
	}
	if first[0] != 0 {
		t.Fatalf("group fresh started at %d", first[0])
	}
	if err := fresh.CommitUncommittedOffsets(ctx); err != nil { // at 100
		t.Fatal(err)
	}

	// Now the lowest committed offset of the readers is sink's 40.
	trimmed, err := tr.once(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := startOffset(t, adm, topic, 0); got != 40 {
		t.Fatalf("log start %d after a trim, want 40 (sink's committed offset); asked %v", got, trimmed)
	}
	for _, b := range segmentBases(t, dir, topic, 0) {
		if b+16 <= 40 {
			t.Fatalf("segment %d, wholly below the log start 40, is still on disk", b)
		}
	}
	// Every group committed at the end: the last 10 stay.
	commit(t, adm, "sink", topic, 0, 100)
	commit(t, adm, "hooks", topic, 0, 100)
	if _, err := tr.once(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := startOffset(t, adm, topic, 0); got != 90 {
		t.Fatalf("log start %d with every group at the end, want 90 (keep 10)", got)
	}
	fresh.Close()
	cl.Close()
	e.Close()

	// After a restart the log starts where it was trimmed, the records from
	// there are all there, and the deleted segments are not back.
	before := segmentBases(t, dir, topic, 0)
	e2, err := Start(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	cl2, err := topics.NewClient(e2.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	defer cl2.Close()
	if got := startOffset(t, kadm.NewClient(cl2), topic, 0); got != 90 {
		t.Fatalf("log start %d after a restart, want 90", got)
	}
	if after := segmentBases(t, dir, topic, 0); len(after) != len(before) || len(after) > 2 {
		t.Fatalf("segments after the restart %v, before %v", after, before)
	}
	got := readFrom(t, e2.Addrs(), topic, 0, 90, 100)
	if len(got) != 10 || got[0] != 90 {
		t.Fatalf("read back offsets %v from 90, want 90..99", got)
	}
}

func waitStable(t *testing.T, adm *kadm.Client, group string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		d, err := adm.DescribeGroups(context.Background(), group)
		if err == nil && d[group].State == "Stable" && len(d[group].Members) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s not stable: %v %v", group, d[group].State, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTrimWaitsForEveryPlatformGroup: while a group the platform runs is not
// up, nothing is trimmed: it may read a topic it has not committed on.
func TestTrimWaitsForEveryPlatformGroup(t *testing.T) {
	e, err := Start(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cl, err := topics.NewClient(e.Addrs(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	produceTo(t, cl, topics.EventsLedger, 0, 50, 100, time.Now())
	commit(t, adm, "sink", topics.EventsLedger, 0, 50)
	tr := newTrimmer(adm, topics.All(), []string{topics.GroupWebhooks}, 0, time.Now)
	if _, err := tr.once(context.Background()); !errors.Is(err, errNotLive) {
		t.Fatalf("trim with %s down: %v, want errNotLive", topics.GroupWebhooks, err)
	}
	if got := startOffset(t, adm, topics.EventsLedger, 0); got != 0 {
		t.Fatalf("trimmed to %d with a platform group down", got)
	}
	// The broker's own trimmer (every platform group required) left it too.
	if err := e.TrimError(); err != nil {
		t.Fatal(err)
	}
}

// TestTrimByReadersThenRetention: a topic that groups read keeps what
// they have not committed however old it is, and loses what they have
// (applied commands too); a topic no group reads (gateway.replies) is
// trimmed by its retention alone; a DLQ and a topic kept forever that no
// group reads are never trimmed.
func TestTrimByReadersThenRetention(t *testing.T) {
	e, err := Start(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cl, err := topics.NewClient(e.Addrs(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	now := time.Now()
	old := now.Add(-8 * 24 * time.Hour) // past the commands' week
	produceTo(t, cl, topics.FiatCommands, 0, 50, 100, old)
	commit(t, adm, "fiat", topics.FiatCommands, 0, 30)
	produceTo(t, cl, topics.MaskCommands, 0, 50, 100, now)
	commit(t, adm, "mask", topics.MaskCommands, 0, 40)
	produceTo(t, cl, topics.GatewayReplies, 0, 30, 100, now.Add(-2*time.Hour))
	produceTo(t, cl, topics.GatewayReplies, 0, 20, 100, now)
	dlq := topics.DLQ(topics.FiatCommands)
	produceTo(t, cl, dlq, 0, 20, 100, old)
	commit(t, adm, "dlq-reader", dlq, 0, 20)
	produceTo(t, cl, topics.EventsGov, 0, 20, 100, old) // no reader, kept forever

	tr := newTrimmer(adm, topics.All(), nil, 0, func() time.Time { return now })
	if _, err := tr.once(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		topic string
		want  int64
	}{
		{topics.FiatCommands, 30},   // all past the week, 30..49 not applied yet
		{topics.MaskCommands, 40},   // within the week, 0..39 applied
		{topics.GatewayReplies, 30}, // no reader: the 30 older than an hour go
		{dlq, 0},
		{topics.EventsGov, 0},
	} {
		if got := startOffset(t, adm, c.topic, 0); got != c.want {
			t.Errorf("%s starts at %d, want %d", c.topic, got, c.want)
		}
	}
}

// TestTrimFailuresAreLoggedOnce: a failed trim round is reported on the
// log, each new error once (a round runs every 5 s), and a platform group
// that is not running yet is no failure.
func TestTrimFailuresAreLoggedOnce(t *testing.T) {
	var buf bytes.Buffer
	e := &Embedded{}
	WithLogger(slog.New(slog.NewTextHandler(&buf, nil)))(e)
	e.trimFailed(errNotLive)
	e.trimFailed(errors.New("list offsets: broker gone"))
	e.trimFailed(errors.New("list offsets: broker gone"))
	e.trimFailed(errors.New("delete records: timeout"))
	if n := strings.Count(buf.String(), "trimming the embedded broker's log failed"); n != 2 {
		t.Fatalf("%d warnings, want 2 (one per new error):\n%s", n, buf.String())
	}
	if err := e.TrimError(); err == nil || err.Error() != "delete records: timeout" {
		t.Fatalf("TrimError = %v", err)
	}
}

// TestTrimKeepsAboveThePositionFloor: the positions the groups stored in
// Postgres (the floor) keep their records even when every Kafka group
// offset is past them, so a database restored behind its Kafka offsets can
// re-read what it had not applied; a floor that cannot be read trims
// nothing.
func TestTrimKeepsAboveThePositionFloor(t *testing.T) {
	e, err := Start(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cl, err := topics.NewClient(e.Addrs(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	produceTo(t, cl, topics.FiatCommands, 0, 50, 100, time.Now())
	produceTo(t, cl, topics.MaskCommands, 0, 50, 100, time.Now())
	commit(t, adm, "fiat", topics.FiatCommands, 0, 50)
	commit(t, adm, "mask", topics.MaskCommands, 0, 50)

	tr := newTrimmer(adm, topics.All(), nil, 0, time.Now)
	tr.floor = func(context.Context) (map[string]map[int32]int64, error) {
		return nil, errors.New("database down")
	}
	if _, err := tr.once(context.Background()); err == nil || !strings.Contains(err.Error(), "database down") {
		t.Fatalf("trim with an unreadable floor: %v", err)
	}
	if got := startOffset(t, adm, topics.FiatCommands, 0); got != 0 {
		t.Fatalf("trimmed to %d without a floor", got)
	}
	tr.floor = func(context.Context) (map[string]map[int32]int64, error) {
		return map[string]map[int32]int64{topics.FiatCommands: {0: 20}}, nil
	}
	if _, err := tr.once(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := startOffset(t, adm, topics.FiatCommands, 0); got != 20 {
		t.Fatalf("%s starts at %d, want 20 (the stored floor; Kafka's offset is 50)", topics.FiatCommands, got)
	}
	if got := startOffset(t, adm, topics.MaskCommands, 0); got != 50 {
		t.Fatalf("%s starts at %d, want 50 (no floor stored)", topics.MaskCommands, got)
	}
}
