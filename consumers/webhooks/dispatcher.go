package webhooks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	store "github.com/fintech/platform/storage/webhooks"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/dlq"
)

// EventStore is what the dispatcher needs from Postgres.
type EventStore interface {
	HasSubscriptions(ctx context.Context) (bool, error)
	WalletOwners(ctx context.Context, walletIDs []string) (map[string]string, error)
	Candidates(ctx context.Context, userIDs, adminEmails []string) ([]store.Candidate, error)
	Record(ctx context.Context, events []store.Event, pairs []store.NewDelivery, now time.Time) (int64, error)
}

// Waker is told when new deliveries are due.
type Waker interface{ Wake() }

var _ EventStore = (*store.Store)(nil)

// Dispatcher consumes the events.* topics in consumer group
// topics.GroupWebhooks and turns each event into pending delivery rows for
// the subscriptions it matches. It never makes HTTP calls: a batch is
// recorded in Postgres, then its offsets are committed, so receivers cannot
// slow the consumer. A redelivered event finds its rows (unique on
// subscription and event) and adds nothing.
type Dispatcher struct {
	client *kgo.Client
	store  EventStore
	admins []string
	waker  Waker
	log    *slog.Logger
	now    func() time.Time
}

// dispatchGather is the longest a fetch waits for dispatchMinBytes of
// events (the broker answers at once when they are there).
const (
	dispatchGather   = 100 * time.Millisecond
	dispatchMinBytes = 1 << 20
)

// NewDispatcher joins the group. adminEmails are the lower-cased fiat admin
// e-mails whose subscriptions receive every event.
func NewDispatcher(brokers []string, st EventStore, adminEmails []string, waker Waker, log *slog.Logger, now func() time.Time) (*Dispatcher, error) {
	if st == nil || waker == nil || log == nil || now == nil {
		return nil, errors.New("webhook dispatcher: nil dependency")
	}
	client, err := topics.NewClient(brokers,
		kgo.ConsumerGroup(topics.GroupWebhooks),
		kgo.ConsumeTopics(topics.EventTopics()...),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		// Under load a fetch waits for dispatchGather's worth of events
		// rather than returning each relay publish as a batch of its own:
		// every batch costs Postgres round trips (one autocommit
		// transaction at least, the subscription check) and an fsynced
		// offset commit, and a webhook is not on any API answer's path.
		kgo.FetchMaxWait(dispatchGather),
		kgo.FetchMinBytes(dispatchMinBytes),
		kgo.SessionTimeout(10*time.Second),
	)
	if err != nil {
		return nil, err
	}
	if adminEmails == nil {
		adminEmails = []string{}
	}
	return &Dispatcher{client: client, store: st, admins: adminEmails, waker: waker,
		log: log.With("group", topics.GroupWebhooks), now: now}, nil
}

// Run consumes until ctx is cancelled. A batch is retried until Postgres
// takes it (nothing is skipped), and an event it cannot read is parked on
// its topic's DLQ before the offsets are committed; a batch in progress at
// shutdown is finished and committed first.
func (d *Dispatcher) Run(ctx context.Context) error {
	defer d.client.Close()
	for {
		fetches := d.client.PollRecords(ctx, 500)
		if fetches.IsClientClosed() {
			return nil
		}
		fetches.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.Canceled) {
				d.log.Warn("fetch error", "topic", topic, "partition", p, "err", err)
			}
		})
		if recs := fetches.Records(); len(recs) > 0 {
			work := context.WithoutCancel(ctx)
			if err := d.recordUntilDone(work, ctx, recs); err != nil {
				d.client.AllowRebalance()
				return err
			}
			cctx, cancel := context.WithTimeout(work, 10*time.Second)
			if err := d.client.CommitRecords(cctx, recs...); err != nil {
				d.log.Warn("offset commit failed; the batch will be redelivered and deduplicated", "err", err)
			}
			cancel()
		}
		d.client.AllowRebalance()
		if ctx.Err() != nil {
			return nil
		}
	}
}

func (d *Dispatcher) recordUntilDone(ctx, stop context.Context, recs []*kgo.Record) error {
	// Without any subscription there is nothing to match: skip parsing the
	// batch (a subscription only receives events newer than itself). On an
	// error the batch goes on and the recording below is retried.
	if has, err := d.store.HasSubscriptions(ctx); err == nil && !has {
		return nil
	}
	expanded, bad := topics.ExpandChecked(recs)
	var parked []*kgo.Record
	park := func(r *kgo.Record, err error) {
		d.log.Warn("parking unreadable event", "topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "err", err)
		parked = append(parked, dlq.Park(r, fmt.Errorf("webhook dispatcher: %w", err)))
	}
	for _, u := range bad {
		park(u.Rec, u.Err)
	}
	events := make([]Event, 0, len(expanded))
	for _, r := range expanded {
		ev, err := ParseRecord(r)
		if err != nil {
			park(r, err)
			continue
		}
		events = append(events, ev)
	}
	backoff := 50 * time.Millisecond
	for {
		n, err := d.record(ctx, events)
		if err == nil {
			if n > 0 {
				d.waker.Wake()
			}
			return d.parkUntilDone(ctx, stop, parked)
		}
		d.log.Warn("recording deliveries failed, retrying", "events", len(events), "backoff", backoff, "err", err)
		select {
		case <-stop.Done():
			return fmt.Errorf("shutdown while recording deliveries: %w", err)
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// parkUntilDone puts unreadable events on their topics' DLQ, retrying
// until the broker has them: the batch's offsets are committed only after.
func (d *Dispatcher) parkUntilDone(ctx, stop context.Context, parked []*kgo.Record) error {
	backoff := 50 * time.Millisecond
	for len(parked) > 0 {
		err := d.client.ProduceSync(ctx, parked...).FirstErr()
		if err == nil {
			return nil
		}
		d.log.Warn("parking on the DLQ failed, retrying", "records", len(parked), "backoff", backoff, "err", err)
		select {
		case <-stop.Done():
			return fmt.Errorf("shutdown while parking unreadable events: %w", err)
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
	return nil
}

// Record matches events with subscriptions and queues their deliveries,
// returning how many it queued.
func (d *Dispatcher) Record(ctx context.Context, events []Event) (int64, error) {
	if len(events) == 0 {
		return 0, nil
	}
	has, err := d.store.HasSubscriptions(ctx)
	if err != nil || !has {
		return 0, err
	}
	return d.record(ctx, events)
}

// record matches events with subscriptions and queues their deliveries.
func (d *Dispatcher) record(ctx context.Context, events []Event) (int64, error) {
	if len(events) == 0 {
		return 0, nil
	}
	var users, wallets []string
	for _, ev := range events {
		u, w := Subjects(ev)
		users, wallets = append(users, u...), append(wallets, w...)
	}
	owners, err := d.store.WalletOwners(ctx, wallets)
	if err != nil {
		return 0, err
	}
	for _, o := range owners {
		users = append(users, o)
	}
	cands, err := d.store.Candidates(ctx, users, d.admins)
	if err != nil {
		return 0, err
	}
	pairs := Match(events, cands, owners)
	if len(pairs) == 0 {
		return 0, nil
	}
	matched := map[string]bool{}
	for _, p := range pairs {
		matched[p.EventID] = true
	}
	var evs []store.Event
	for _, ev := range events {
		if matched[ev.ID] {
			evs = append(evs, ev.Event)
			matched[ev.ID] = false // once, even if the batch holds it twice
		}
	}
	return d.store.Record(ctx, evs, pairs, d.now())
}
