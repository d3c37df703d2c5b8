package broker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/fintech/platform/topics"
)

// Trimming the embedded broker's log.
//
// kfake keeps every partition on disk in segment files and, in memory, an
// index entry per record batch (about 100 bytes: a command is a batch of
// its own); when it starts it reads every segment file whole, all
// partitions at once. With topics that keep records forever (events.*,
// ledger.append) a restart after some history read all of it into the heap
// at the same moment: the bench's platform peaked at 565 MB and 673 MB after
// its first and second restarts (os.ReadFile under kfake's
// loadSegmentBatches: 591 MB allocated at one start), against 41 MB in use
// once running.
//
// The embedded broker therefore keeps what a consumer may still read and
// drops the rest with DeleteRecords, which moves a partition's log start
// and deletes the segment files wholly below it; segments are small
// (segmentBytes) so that a trim frees them soon and a start reads small
// files. A partition of a topic that consumer groups read is trimmed up to
// the lowest offset committed on it by every group that reads the topic:
// the groups whose members subscribe to it now, and every group with an
// offset committed on any of its partitions; a reader with no offset on the
// partition keeps all of it. An applied command goes too: its group's
// offset is on disk before the commit is acknowledged, so no consumer reads
// it again (one that lost its offsets would start from here, and the
// applied-command ids outlive the records), while keeping a week of them
// would grow the index by a batch per command for a week. A topic no group
// reads is trimmed by its retention (topics.Spec.RetentionMs): the
// gateway.replies older than an hour. Neither ever trims
//
//   - into a partition's last keepTail records: group-less readers start
//     near the end (the admin stream hub backfills 20 per partition, the
//     gateway reads its replies from the end) or read a recent stretch from
//     the start (the e2e tests find the events of a 600-donation campaign
//     that way);
//   - a dead-letter topic (`platform dlq` lists and replays them), nor a
//     topic no group reads that has no retention.
//
// Nothing is trimmed unless every group of the platform (topics.Groups()) is
// Stable with members, whose subscriptions then name exactly what each
// reads: a group that is down might read a topic it has not committed on
// yet.
const (
	// segmentBytes is the embedded broker's log.segment.bytes.
	segmentBytes = 1 << 20
	// trimEvery is how often the log is trimmed.
	trimEvery = 5 * time.Second
	// keepTail records of every partition are kept whatever was committed.
	// kfake's index costs about 100 bytes per batch kept (a record or more).
	keepTail = 2000
)

// trimmer drops the records no consumer needs (see above).
type trimmer struct {
	adm *kadm.Client
	// specs are the topics it may trim: every topic but the DLQs.
	specs []topics.Spec
	// live are the groups that must be Stable with members first.
	live     []string
	keepTail int64
	now      func() time.Time
	// floor, when set, returns per topic partition the lowest offset any
	// consumer group stored as its position in Postgres
	// (consumers/pipeline/position.go): nothing from there on is trimmed,
	// so a database restored behind its groups' Kafka offsets can re-read
	// what it had not applied. A round whose floor fails trims nothing.
	floor Floor
}

// Floor returns, per topic and partition, the offset from which every
// record must be kept.
type Floor func(ctx context.Context) (map[string]map[int32]int64, error)

func newTrimmer(adm *kadm.Client, specs []topics.Spec, live []string, keep int64, now func() time.Time) *trimmer {
	var trimmable []topics.Spec
	for _, s := range specs {
		if !isDLQ(s.Name) {
			trimmable = append(trimmable, s)
		}
	}
	return &trimmer{adm: adm, specs: trimmable, live: live, keepTail: keep, now: now}
}

func isDLQ(topic string) bool { return strings.HasSuffix(topic, topics.DLQ("")) }

// run trims every interval until ctx is done. A failed round changes
// nothing and the next one tries again.
func (t *trimmer) run(ctx context.Context, every time.Duration, failed func(error)) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		rctx, cancel := context.WithTimeout(ctx, every)
		if _, err := t.once(rctx); err != nil && ctx.Err() == nil && failed != nil {
			failed(err)
		}
		cancel()
	}
}

// errNotLive: a platform group is not Stable with members; nothing is
// trimmed this round.
var errNotLive = errors.New("a platform consumer group is not running")

// once trims what no consumer needs and returns the new log start offsets
// it asked for.
func (t *trimmer) once(ctx context.Context) (kadm.Offsets, error) {
	readers, committed, err := t.readers(ctx)
	if err != nil {
		return nil, err
	}
	var floor map[string]map[int32]int64
	if t.floor != nil {
		if floor, err = t.floor(ctx); err != nil {
			return nil, fmt.Errorf("trim floor: %w", err)
		}
	}
	names := make([]string, 0, len(t.specs))
	for _, s := range t.specs {
		names = append(names, s.Name)
	}
	starts, err := t.adm.ListStartOffsets(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("list start offsets: %w", err)
	}
	ends, err := t.adm.ListEndOffsets(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("list end offsets: %w", err)
	}
	// The first record younger than each retention, per retention.
	young := map[int64]kadm.ListedOffsets{}
	for _, s := range t.specs {
		if s.RetentionMs <= 0 || len(readers[s.Name]) > 0 {
			continue
		}
		if _, ok := young[s.RetentionMs]; ok {
			continue
		}
		var same []string
		for _, o := range t.specs {
			if o.RetentionMs == s.RetentionMs {
				same = append(same, o.Name)
			}
		}
		since := t.now().Add(-time.Duration(s.RetentionMs) * time.Millisecond).UnixMilli()
		listed, err := t.adm.ListOffsetsAfterMilli(ctx, since, same...)
		if err != nil {
			return nil, fmt.Errorf("list offsets after %d: %w", since, err)
		}
		young[s.RetentionMs] = listed
	}

	trim := kadm.Offsets{}
	for _, s := range t.specs {
		groups := readers[s.Name]
		if len(groups) == 0 && s.RetentionMs <= 0 {
			continue // kept forever for whoever reads it first
		}
		for p, end := range ends[s.Name] {
			if end.Err != nil {
				return nil, fmt.Errorf("end offset of %s/%d: %w", s.Name, p, end.Err)
			}
			start, ok := starts.Lookup(s.Name, p)
			if !ok || start.Err != nil {
				return nil, fmt.Errorf("start offset of %s/%d: %v", s.Name, p, start.Err)
			}
			to := end.Offset - t.keepTail
			for g := range groups {
				at, ok := committed[g][s.Name][p]
				if !ok {
					to = start.Offset // a reader that has not committed here gets all of it
					break
				}
				to = min(to, at)
			}
			if len(groups) == 0 { // by retention alone
				y, ok := young[s.RetentionMs].Lookup(s.Name, p)
				if !ok || y.Err != nil || y.Offset < 0 {
					continue
				}
				to = min(to, y.Offset)
			}
			if f, ok := floor[s.Name][p]; ok {
				to = min(to, f)
			}
			if to > start.Offset {
				trim.Add(kadm.Offset{Topic: s.Name, Partition: p, At: to, LeaderEpoch: -1})
			}
		}
	}
	if len(trim) == 0 {
		return trim, nil
	}
	resp, err := t.adm.DeleteRecords(ctx, trim)
	if err != nil {
		return nil, fmt.Errorf("delete records: %w", err)
	}
	var errs []error
	for _, ps := range resp {
		for _, r := range ps {
			if r.Err != nil {
				errs = append(errs, fmt.Errorf("delete records of %s/%d: %w", r.Topic, r.Partition, r.Err))
			}
		}
	}
	return trim, errors.Join(errs...)
}

// readers returns, per topic, the groups that read it, and every group's
// committed offsets (group -> topic -> partition -> offset).
func (t *trimmer) readers(ctx context.Context) (map[string]map[string]bool, map[string]map[string]map[int32]int64, error) {
	listed, err := t.adm.ListGroups(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("list groups: %w", err)
	}
	groups := listed.Groups()
	described, err := t.adm.DescribeGroups(ctx, groups...)
	if err != nil {
		return nil, nil, fmt.Errorf("describe groups: %w", err)
	}
	for _, g := range t.live {
		d, ok := described[g]
		if !ok || d.Err != nil || d.State != "Stable" || len(d.Members) == 0 {
			return nil, nil, fmt.Errorf("%w: %s", errNotLive, g)
		}
	}
	readers := map[string]map[string]bool{}
	read := func(topic, group string) {
		if readers[topic] == nil {
			readers[topic] = map[string]bool{}
		}
		readers[topic][group] = true
	}
	for _, d := range described {
		if d.Err != nil {
			return nil, nil, fmt.Errorf("describe group %s: %w", d.Group, d.Err)
		}
		for _, m := range d.Members {
			c, ok := m.Join.AsConsumer()
			if !ok {
				// What it reads is unknown: it may read anything.
				return nil, nil, fmt.Errorf("group %s: member %s is not a consumer", d.Group, m.MemberID)
			}
			for _, topic := range c.Topics {
				read(topic, d.Group)
			}
		}
	}
	committed := map[string]map[string]map[int32]int64{}
	for g, fetched := range t.adm.FetchManyOffsets(ctx, groups...) {
		if fetched.Err != nil {
			return nil, nil, fmt.Errorf("fetch offsets of group %s: %w", g, fetched.Err)
		}
		byTopic := map[string]map[int32]int64{}
		for topic, ps := range fetched.Fetched {
			for p, o := range ps {
				if o.Err != nil {
					return nil, nil, fmt.Errorf("offset of group %s on %s/%d: %w", g, topic, p, o.Err)
				}
				if o.At < 0 {
					continue
				}
				if byTopic[topic] == nil {
					byTopic[topic] = map[int32]int64{}
				}
				byTopic[topic][p] = o.At
				read(topic, g)
			}
		}
		committed[g] = byTopic
	}
	return readers, committed, nil
}
