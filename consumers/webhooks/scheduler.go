package webhooks

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/webhooks"
)

// JobStore is what the scheduler needs from the delivery rows.
type JobStore interface {
	ClaimDue(ctx context.Context, c store.Claim) ([]store.Job, error)
	Finish(ctx context.Context, id, token string, r store.Result) (bool, error)
}

// Deliverer makes one attempt of a job.
type Deliverer interface {
	Deliver(ctx context.Context, job store.Job) Attempt
}

var (
	_ JobStore  = (*store.Store)(nil)
	_ Deliverer = (*Sender)(nil)
)

// SchedulerConfig tunes a Scheduler.
type SchedulerConfig struct {
	// Schedule holds the delays before attempts 1..n; its length is the
	// number of attempts before dead_letter (WEBHOOK_RETRY_SCHEDULE).
	Schedule []time.Duration
	// Timeout bounds one attempt (WEBHOOK_TIMEOUT); the claim lease is
	// Timeout + 30 s.
	Timeout time.Duration
	// Workers bounds the attempts in flight. Default 32.
	Workers int
	// PerSubscription bounds the attempts in flight to one endpoint, so a
	// slow endpoint cannot take every worker. Default 4.
	PerSubscription int
	// PerOwner bounds the attempts in flight to all the endpoints of one
	// user, so that one user with many slow endpoints (10 endpoints × 4)
	// cannot take every worker either. Default 8 (a quarter of 32).
	PerOwner int
	// Poll is how often due rows are looked for when nothing wakes the
	// scheduler. Default 500 ms.
	Poll time.Duration
}

func (c *SchedulerConfig) setDefaults() {
	if c.Workers <= 0 {
		c.Workers = 32
	}
	if c.PerSubscription <= 0 {
		c.PerSubscription = 4
	}
	if c.PerOwner <= 0 {
		c.PerOwner = 8
	}
	if c.Poll <= 0 {
		c.Poll = 500 * time.Millisecond
	}
}

// Validate reports every problem.
func (c SchedulerConfig) Validate() error {
	var errs []error
	if len(c.Schedule) == 0 {
		errs = append(errs, errors.New("empty retry schedule"))
	}
	if c.Timeout <= 0 {
		errs = append(errs, errors.New("delivery timeout must be positive"))
	}
	return errors.Join(errs...)
}

// Scheduler works through due delivery rows: it claims them from Postgres
// (next_attempt_at <= now, so a row that fell due while no scheduler ran is
// sent at start), runs each attempt on a bounded pool with a per-attempt
// timeout, and records the outcome and the next attempt time. Several
// schedulers may run against one database; a row is claimed by one of them.
type Scheduler struct {
	cfg      SchedulerConfig
	store    JobStore
	sender   Deliverer
	log      *slog.Logger
	now      func() time.Time
	wake     chan struct{}
	outcomes *prometheus.CounterVec
}

// NewScheduler builds a scheduler. reg receives its metrics.
func NewScheduler(cfg SchedulerConfig, st JobStore, sender Deliverer, reg prometheus.Registerer, log *slog.Logger, now func() time.Time) (*Scheduler, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if st == nil || sender == nil || reg == nil || log == nil || now == nil {
		return nil, errors.New("webhook scheduler: nil dependency")
	}
	outcomes := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "platform_webhook_attempts_total", Help: "Outbound webhook attempts by resulting status.",
	}, []string{"status"})
	if err := reg.Register(outcomes); err != nil {
		return nil, err
	}
	return &Scheduler{cfg: cfg, store: st, sender: sender, log: log.With("component", "webhook-scheduler"),
		now: now, wake: make(chan struct{}, 1), outcomes: outcomes}, nil
}

// Wake makes the scheduler look for due rows now (new deliveries were
// recorded, or an admin queued one). It never blocks.
func (s *Scheduler) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run schedules until ctx is cancelled, then waits for the attempts in
// flight (each bounded by the timeout) and records their outcomes.
func (s *Scheduler) Run(ctx context.Context) error {
	done := make(chan finished)
	perSub, perOwner := map[string]int{}, map[string]int{}
	// soonest is the earliest next attempt this scheduler scheduled itself,
	// so that short retry delays do not wait for the next poll.
	var soonest time.Time
	inFlight := 0
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		if free := s.cfg.Workers - inFlight; free > 0 && ctx.Err() == nil {
			jobs, err := s.claim(ctx, free, perSub, perOwner)
			if err != nil && ctx.Err() == nil {
				s.log.Warn("claiming due deliveries failed", "err", err)
			}
			for _, j := range jobs {
				inFlight++
				perSub[j.SubscriptionID]++
				perOwner[j.UserID]++
				go func(j store.Job) {
					next := s.attempt(context.WithoutCancel(ctx), j)
					done <- finished{subscription: j.SubscriptionID, owner: j.UserID, next: next}
				}(j)
			}
		}
		if ctx.Err() != nil {
			for ; inFlight > 0; inFlight-- {
				<-done
			}
			return nil
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		wait := s.cfg.Poll
		if !soonest.IsZero() {
			if d := soonest.Sub(s.now()); d > 0 {
				wait = min(wait, d)
			} else {
				wait, soonest = 0, time.Time{} // due now: claim again at once
			}
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
		case f := <-done:
			inFlight--
			if perSub[f.subscription]--; perSub[f.subscription] <= 0 {
				delete(perSub, f.subscription)
			}
			if perOwner[f.owner]--; perOwner[f.owner] <= 0 {
				delete(perOwner, f.owner)
			}
			if f.next != nil && (soonest.IsZero() || f.next.Before(soonest)) {
				soonest = *f.next
			}
		case <-s.wake:
		case <-timer.C:
		}
	}
}

func (s *Scheduler) claim(ctx context.Context, free int, perSub, perOwner map[string]int) ([]store.Job, error) {
	var busy []string
	for id, n := range perSub {
		if n >= s.cfg.PerSubscription {
			busy = append(busy, id)
		}
	}
	room := make(map[string]int, len(perOwner))
	for owner, n := range perOwner {
		room[owner] = s.cfg.PerOwner - n
	}
	now := s.now()
	return s.store.ClaimDue(ctx, store.Claim{
		Now: now, Limit: free, PerSubscription: s.cfg.PerSubscription, Exclude: busy,
		PerOwner: s.cfg.PerOwner, OwnerRoom: room,
		LeaseUntil: now.Add(s.cfg.Timeout + 30*time.Second), Token: schemas.NewID(),
	})
}

// finished is an attempt that ended, with the next attempt it scheduled.
type finished struct {
	subscription string
	owner        string
	next         *time.Time
}

// attempt delivers one job, records the outcome and returns the next
// attempt time it scheduled, if any. A failure to record the outcome leaves
// the row claimed until the lease ends, when it is attempted again:
// receivers deduplicate on the event id.
func (s *Scheduler) attempt(ctx context.Context, j store.Job) *time.Time {
	a := s.sender.Deliver(ctx, j)
	r := NextResult(j.Attempts, a, s.cfg.Schedule, s.now())
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	held, err := s.store.Finish(fctx, j.DeliveryID, j.ClaimToken, r)
	switch {
	case err != nil:
		s.log.Warn("recording a delivery attempt failed", "delivery", j.DeliveryID, "err", err)
		return nil
	case !held:
		s.log.Info("delivery was queued again during its attempt; outcome dropped", "delivery", j.DeliveryID)
		return nil
	}
	s.outcomes.WithLabelValues(r.Status).Inc()
	return r.NextAttemptAt
}

// NextResult is the state after attempt number prevAttempts+1 with outcome
// a: delivered on success; after a failure, failed with the next attempt
// due schedule[n] later while attempts remain, else dead_letter.
func NextResult(prevAttempts int, a Attempt, schedule []time.Duration, now time.Time) store.Result {
	n := prevAttempts + 1
	r := store.Result{Attempts: n, StatusCode: a.StatusCode, Error: a.Error, Duration: a.Duration, At: now}
	switch {
	case a.OK:
		r.Status = store.StatusDelivered
	case n >= len(schedule):
		r.Status = store.StatusDeadLetter
	default:
		next := now.Add(schedule[n])
		r.Status, r.NextAttemptAt = store.StatusFailed, &next
	}
	return r
}
