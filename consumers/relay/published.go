package relay

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/storage/audit"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/topics"
)

// CheckPublished names the check that every event-log row the relay's cursor
// passed is on its topic.
const CheckPublished = "event log on topics"

// clockSlack covers the distance between the database's clock (an event-log
// row's created_at) and the producer's (its record's timestamp, set at
// publish, so never earlier than the row on one clock).
const clockSlack = time.Minute

// VerifyPublished checks that every event of every event-log row at or below
// the relay's cursor is on its topic: a record with its event id (the "id"
// header; a bundle's own id for a bundled topic). The cursor is read before
// the topics' ends, so everything it passed was acknowledged below them.
//
// Only what the broker can still hold is checked: on a partition trimmed at
// its start (retention, or the embedded broker's trim behind every group),
// events older than the first record kept are counted as not checkable, and
// so are events older than a topic's retention. Each topic is read from the
// first record produced after its oldest event (less clockSlack).
func VerifyPublished(ctx context.Context, db postgres.Querier, brokers []string, now time.Time) audit.Result {
	cursor, err := pipeline.LogCursor(ctx, db)
	if err != nil {
		return audit.Failedf(CheckPublished, "%v", err)
	}
	cl, err := topics.NewClient(brokers)
	if err != nil {
		return audit.Skippedf(CheckPublished, "no broker client: %v", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var names []string
	retention := map[string]time.Duration{}
	for _, s := range topics.All() {
		names = append(names, s.Name)
		if s.RetentionMs > 0 {
			retention[s.Name] = time.Duration(s.RetentionMs) * time.Millisecond
		}
	}
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	ends, err := adm.ListEndOffsets(lctx, names...)
	cancel()
	if err != nil {
		return audit.Skippedf(CheckPublished, "no broker reachable at %s to read the topics (%v)", strings.Join(brokers, ","), err)
	}

	// expected: topic -> event id -> the row's created_at.
	expected := map[string]map[string]time.Time{}
	oldest := map[string]time.Time{}
	rows, err := db.Query(ctx, `SELECT created_at, topics, event_ids FROM event_log WHERE seq <= $1`, cursor)
	if err != nil {
		return audit.Failedf(CheckPublished, "read the event log: %v", err)
	}
	nrows, nevents := 0, 0
	for rows.Next() {
		var at time.Time
		var tps, ids []string
		if err := rows.Scan(&at, &tps, &ids); err != nil {
			rows.Close()
			return audit.Failedf(CheckPublished, "scan the event log: %v", err)
		}
		nrows++
		for i, tp := range tps {
			if i >= len(ids) {
				break
			}
			if expected[tp] == nil {
				expected[tp] = map[string]time.Time{}
			}
			expected[tp][ids[i]] = at
			nevents++
			if o, ok := oldest[tp]; !ok || at.Before(o) {
				oldest[tp] = at
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return audit.Failedf(CheckPublished, "read the event log: %v", err)
	}
	if nevents == 0 {
		return audit.Okf(CheckPublished, "no event-log rows at or below the relay cursor %d", cursor)
	}

	// floor: per topic, events created before it may be trimmed from the
	// broker and are not checked.
	floor := map[string]time.Time{}
	for tp, r := range retention {
		floor[tp] = now.Add(-r + time.Hour)
	}
	from := map[string]map[int32]kgo.Offset{}
	end := map[string]map[int32]int64{}
	trimmed := map[string]map[int32]bool{}
	var missingTopics []string
	for tp := range expected {
		if _, ok := ends[tp]; !ok {
			missingTopics = append(missingTopics, tp)
			continue
		}
		starts, err := adm.ListStartOffsets(ctx, tp)
		if err != nil {
			return audit.Skippedf(CheckPublished, "list the start offsets of %s: %v", tp, err)
		}
		after, afterErr := adm.ListOffsetsAfterMilli(ctx, oldest[tp].Add(-clockSlack).UnixMilli(), tp)
		ends.Each(func(o kadm.ListedOffset) {
			if o.Topic != tp || o.Err != nil {
				return
			}
			st, _ := starts.Lookup(tp, o.Partition)
			at := st.Offset
			if a, ok := after.Lookup(tp, o.Partition); afterErr == nil && ok && a.Err == nil && a.Offset > at {
				at = a.Offset
			}
			if at >= o.Offset {
				if st.Offset > 0 && st.Offset >= o.Offset {
					floor[tp] = now // trimmed whole: what it held is unknown
				}
				return
			}
			if from[tp] == nil {
				from[tp], end[tp], trimmed[tp] = map[int32]kgo.Offset{}, map[int32]int64{}, map[int32]bool{}
			}
			from[tp][o.Partition] = kgo.NewOffset().At(at)
			end[tp][o.Partition] = o.Offset
			trimmed[tp][o.Partition] = st.Offset > 0 && at == st.Offset
		})
	}
	if len(missingTopics) > 0 {
		sort.Strings(missingTopics)
		return audit.Failedf(CheckPublished, "event-log rows up to seq %d name topics the broker does not have: %s",
			cursor, strings.Join(missingTopics, ", "))
	}
	if len(from) > 0 {
		if err := readIDs(ctx, brokers, from, end, func(rec *kgo.Record, first bool) {
			if first && trimmed[rec.Topic][rec.Partition] && rec.Timestamp.After(floor[rec.Topic]) {
				floor[rec.Topic] = rec.Timestamp
			}
			delete(expected[rec.Topic], topics.Header(rec, "id"))
		}); err != nil {
			return audit.Skippedf(CheckPublished, "reading the topics: %v", err)
		}
	}
	var missing []string
	notCheckable, count := 0, 0
	for _, tp := range sortedTopics(expected) {
		for id, at := range expected[tp] {
			if f, ok := floor[tp]; ok && at.Before(f.Add(clockSlack)) {
				notCheckable++
				continue
			}
			count++
			if len(missing) < 5 {
				missing = append(missing, tp+" "+id)
			}
		}
	}
	if count > 0 {
		sort.Strings(missing)
		return audit.Failedf(CheckPublished, "%d of %d events of the event-log rows up to the relay cursor %d are not on their topic: %s",
			count, nevents, cursor, strings.Join(missing, ", "))
	}
	detail := fmt.Sprintf("%d events of %d event-log rows up to the relay cursor %d are on their topics", nevents-notCheckable, nrows, cursor)
	if notCheckable > 0 {
		detail += fmt.Sprintf(" (%d older than what the broker keeps, not checked)", notCheckable)
	}
	return audit.Result{Check: CheckPublished, Status: audit.OK, Detail: detail}
}

// stallAfter is how long readIDs waits for a fetch that brings anything.
const stallAfter = 30 * time.Second

// readIDs reads every partition of from up to its end, calling each for
// every record (first: the first record read of its partition).
func readIDs(ctx context.Context, brokers []string, from map[string]map[int32]kgo.Offset, end map[string]map[int32]int64,
	each func(rec *kgo.Record, first bool)) error {
	rd, err := topics.NewClient(brokers, kgo.ConsumePartitions(from))
	if err != nil {
		return err
	}
	defer rd.Close()
	left := 0
	for _, ps := range end {
		left += len(ps)
	}
	seen := map[string]map[int32]bool{}
	for left > 0 {
		// A fetch that brings nothing for stallAfter (the partition ends
		// in records a reader never sees) stops the read: not checked.
		pctx, cancel := context.WithTimeout(ctx, stallAfter)
		fetches := rd.PollFetches(pctx)
		cancel()
		if err := ctx.Err(); err != nil {
			return err
		}
		var ferr error
		fetches.EachError(func(t string, p int32, err error) { ferr = fmt.Errorf("%s/%d: %w", t, p, err) })
		if ferr != nil {
			return ferr
		}
		fetches.EachRecord(func(rec *kgo.Record) {
			e, ok := end[rec.Topic][rec.Partition]
			if !ok || rec.Offset >= e {
				return
			}
			if seen[rec.Topic] == nil {
				seen[rec.Topic] = map[int32]bool{}
			}
			each(rec, !seen[rec.Topic][rec.Partition])
			seen[rec.Topic][rec.Partition] = true
			if rec.Offset >= e-1 {
				delete(end[rec.Topic], rec.Partition)
				left--
			}
		})
	}
	return nil
}

func sortedTopics(m map[string]map[string]time.Time) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
