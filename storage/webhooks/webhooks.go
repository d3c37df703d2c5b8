// Package webhooks stores outbound webhook subscriptions, the events they
// matched and the durable delivery rows the scheduler works through.
package webhooks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
)

// Delivery statuses.
const (
	StatusPending    = "pending"
	StatusFailed     = "failed"
	StatusDelivered  = "delivered"
	StatusDeadLetter = "dead_letter"
)

// ErrLimit means the user holds the maximum number of subscriptions.
var ErrLimit = errors.New("subscription limit reached")

// Subscription is one endpoint that receives signed deliveries. Events nil
// means all events.
type Subscription struct {
	ID      string
	UserID  string
	URL     string
	Secret  string
	Events  []string
	Primary bool
	// Enabled is false while the owner has paused the endpoint: no new
	// deliveries are queued for it and queued ones wait.
	Enabled bool
	// AllEvents is set only on a subscription a fiat admin made from a
	// login session (with two-factor where required), never from an API
	// key: with its owner still an admin (and still enrolled) at delivery
	// time, it receives every event, not only its owner's.
	AllEvents bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Event is what a delivery carries: the event id (stable across retries),
// its type, the module it came from and its data as produced.
type Event struct {
	ID         string
	Type       string
	Module     string
	Data       []byte
	OccurredAt time.Time
	// TraceParent is the W3C traceparent of the request that caused the
	// event ("" when none): every attempt sends it, so a partner's logs and
	// ours name the same trace.
	TraceParent string
}

// Delivery is one row of the delivery log.
type Delivery struct {
	ID             string
	WebhookID      string
	EventID        string
	Type           string
	Status         string
	Attempts       int
	LastStatusCode *int
	LastError      string
	NextAttemptAt  *time.Time
	// LastDurationMs is how long the last attempt took; nil before one.
	LastDurationMs *int
	CreatedAt      time.Time
}

// Store is the webhook repository.
type Store struct {
	pool *pgxpool.Pool
	// adminMFA, when set (production), gives the all-events audience only
	// to an admin whose account has two-factor on at delivery time.
	adminMFA bool
}

// RequireAdminMFA makes Candidates re-check, at every batch, that the owner
// of an all-events subscription still has two-factor on; production turns
// it on. Call it at wiring, before the dispatcher runs.
func (s *Store) RequireAdminMFA(on bool) { s.adminMFA = on }

// NewStore builds the repository.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

const subColumns = `id, user_id, url, secret, events, is_primary, enabled, all_events, created_at, updated_at`

func scanSub(row pgx.Row) (Subscription, error) {
	var s Subscription
	err := row.Scan(&s.ID, &s.UserID, &s.URL, &s.Secret, &s.Events, &s.Primary, &s.Enabled, &s.AllEvents, &s.CreatedAt, &s.UpdatedAt)
	return s, err
}

const savePrimarySQL = `
INSERT INTO webhook_subscriptions (id, user_id, url, secret, events, is_primary, all_events, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, true, $7, $6, $6)
ON CONFLICT (user_id) WHERE is_primary DO UPDATE
SET url = EXCLUDED.url, secret = EXCLUDED.secret, events = EXCLUDED.events, enabled = true, updated_at = EXCLUDED.updated_at,
    all_events = EXCLUDED.all_events,
    previous_secret = NULL, previous_secret_expires_at = NULL
RETURNING ` + subColumns + `, (xmax = 0) AS inserted`

// SavePrimary creates the user's primary subscription, or replaces its url,
// secret and events (keeping its id and creation time). created reports
// which happened.
func (s *Store) SavePrimary(ctx context.Context, sub Subscription) (saved Subscription, created bool, err error) {
	err = s.pool.QueryRow(ctx, savePrimarySQL, sub.ID, sub.UserID, sub.URL, sub.Secret, sub.Events, sub.CreatedAt, sub.AllEvents).
		Scan(&saved.ID, &saved.UserID, &saved.URL, &saved.Secret, &saved.Events, &saved.Primary, &saved.Enabled, &saved.AllEvents,
			&saved.CreatedAt, &saved.UpdatedAt, &created)
	if err != nil {
		return Subscription{}, false, fmt.Errorf("save primary webhook of %s: %w", sub.UserID, postgres.Translate(err))
	}
	return saved, created, nil
}

// SavePrimaryWithin is SavePrimary counted against max: creating the
// primary subscription when the user already holds max subscriptions of
// any kind is ErrLimit (replacing it adds nothing and is always allowed).
func (s *Store) SavePrimaryWithin(ctx context.Context, sub Subscription, max int) (saved Subscription, created bool, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		n, hasPrimary, err := lockAndCount(ctx, tx, sub.UserID)
		if err != nil {
			return err
		}
		if !hasPrimary && n >= max {
			return ErrLimit
		}
		return tx.QueryRow(ctx, savePrimarySQL, sub.ID, sub.UserID, sub.URL, sub.Secret, sub.Events, sub.CreatedAt, sub.AllEvents).
			Scan(&saved.ID, &saved.UserID, &saved.URL, &saved.Secret, &saved.Events, &saved.Primary, &saved.Enabled, &saved.AllEvents,
				&saved.CreatedAt, &saved.UpdatedAt, &created)
	})
	if err != nil {
		return Subscription{}, false, fmt.Errorf("save primary webhook of %s: %w", sub.UserID, postgres.Translate(err))
	}
	return saved, created, nil
}

// lockAndCount serializes a user's subscription writes and counts what the
// user holds.
func lockAndCount(ctx context.Context, tx pgx.Tx, userID string) (n int, hasPrimary bool, err error) {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('webhook-subs:' || $1))`, userID); err != nil {
		return 0, false, err
	}
	err = tx.QueryRow(ctx, `SELECT count(*), coalesce(bool_or(is_primary), false) FROM webhook_subscriptions WHERE user_id = $1`,
		userID).Scan(&n, &hasPrimary)
	return n, hasPrimary, err
}

// Add creates a further (non-primary) subscription, refusing with ErrLimit
// when the user already holds max subscriptions of any kind.
func (s *Store) Add(ctx context.Context, sub Subscription, max int) (Subscription, error) {
	out, _, err := s.AddIdempotent(ctx, sub, max, nil)
	return out, err
}

// AddIdempotent is Add with the request's idempotency record: when idem is
// set, its answer is recorded in the same transaction, and a command id
// recorded before creates nothing and returns the earlier record (prior),
// also when two requests race.
func (s *Store) AddIdempotent(ctx context.Context, sub Subscription, max int, idem *pipeline.Processed) (Subscription, *pipeline.Processed, error) {
	var out Subscription
	var prior *pipeline.Processed
	lookup := func(q postgres.Querier) error {
		found, err := pipeline.LookupProcessed(ctx, q, []string{idem.CommandID})
		if err != nil {
			return err
		}
		if r, ok := found[idem.CommandID]; ok {
			prior = &r
		}
		return nil
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		n, _, err := lockAndCount(ctx, tx, sub.UserID)
		if err != nil {
			return err
		}
		if idem != nil {
			if err := lookup(tx); err != nil || prior != nil {
				return err
			}
		}
		if n >= max {
			return ErrLimit
		}
		out, err = scanSub(tx.QueryRow(ctx, `
INSERT INTO webhook_subscriptions (id, user_id, url, secret, events, is_primary, all_events, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, false, $7, $6, $6) RETURNING `+subColumns,
			sub.ID, sub.UserID, sub.URL, sub.Secret, sub.Events, sub.CreatedAt, sub.AllEvents))
		if err != nil || idem == nil {
			return err
		}
		return pipeline.InsertProcessed(ctx, tx, []pipeline.Processed{*idem})
	})
	if idem != nil && errors.Is(postgres.Translate(err), postgres.ErrConflict) {
		err = lookup(s.pool)
	}
	if err != nil {
		return Subscription{}, nil, fmt.Errorf("add webhook of %s: %w", sub.UserID, postgres.Translate(err))
	}
	return out, prior, nil
}

// RotateSecret replaces the signing secret of one of the user's
// subscriptions: the one with id, or the primary one when id is empty.
// Deliveries attempted from now on, pending retries included, are signed
// with the new secret, and until previousUntil with the replaced one too
// (nil: the replaced one stops at once). An unknown id is
// postgres.ErrNotFound.
func (s *Store) RotateSecret(ctx context.Context, userID, id, secret string, previousUntil *time.Time, now time.Time) (Subscription, error) {
	// The SET expressions read the row as it was: previous_secret takes
	// the secret being replaced.
	sub, err := scanSub(s.pool.QueryRow(ctx, `
UPDATE webhook_subscriptions SET secret = $3, updated_at = $4,
    previous_secret = CASE WHEN $5::timestamptz IS NULL THEN NULL ELSE secret END,
    previous_secret_expires_at = $5::timestamptz
WHERE user_id = $1 AND (CASE WHEN $2 = '' THEN is_primary ELSE id = $2 END)
RETURNING `+subColumns, userID, id, secret, now, previousUntil))
	if err != nil {
		return Subscription{}, fmt.Errorf("rotate webhook secret of %s: %w", userID, postgres.Translate(err))
	}
	return sub, nil
}

// Candidate is a subscription that may match a batch of events; Admin marks
// one that receives every event: made as an all-events subscription (an
// admin's login session made it) and its owner, now, a confirmed fiat
// admin (with two-factor on where required).
type Candidate struct {
	Subscription
	Admin bool
}

const candidatesSQL = `
WITH admins AS (SELECT u.id FROM users u WHERE lower(u.email) = ANY($2) AND u.email_verified_at IS NOT NULL
                AND u.role_confirmed_at IS NOT NULL
                AND (NOT $3 OR EXISTS (SELECT 1 FROM user_totp t WHERE t.user_id = u.id AND t.confirmed_at IS NOT NULL)))
SELECT s.id, s.user_id, s.url, '', s.events, s.is_primary, s.enabled, s.all_events, s.created_at, s.updated_at,
       s.all_events AND s.user_id IN (SELECT id FROM admins)
FROM webhook_subscriptions s
WHERE s.enabled AND (s.user_id = ANY($1) OR (s.all_events AND s.user_id IN (SELECT id FROM admins)))`

// Candidates returns the enabled subscriptions owned by any of userIDs, and
// the all-events ones whose owner's (lower-cased) e-mail is in adminEmails
// and who is a confirmed admin now (with two-factor on, under
// RequireAdminMFA): whether a subscription gets every event is re-checked
// at every batch, never kept from when it was made. Secrets are left empty.
func (s *Store) Candidates(ctx context.Context, userIDs, adminEmails []string) ([]Candidate, error) {
	rows, err := s.pool.Query(ctx, candidatesSQL, userIDs, adminEmails, s.adminMFA)
	if err != nil {
		return nil, fmt.Errorf("load webhook candidates: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Candidate, error) {
		var c Candidate
		err := r.Scan(&c.ID, &c.UserID, &c.URL, &c.Secret, &c.Events, &c.Primary, &c.Enabled, &c.AllEvents, &c.CreatedAt, &c.UpdatedAt, &c.Admin)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("load webhook candidates: %w", err)
	}
	return out, nil
}

// HasSubscriptions reports whether any subscription exists: the dispatcher
// skips all matching work while none does.
func (s *Store) HasSubscriptions(ctx context.Context) (bool, error) {
	var ok bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_subscriptions)`).Scan(&ok); err != nil {
		return false, fmt.Errorf("check webhook subscriptions: %w", err)
	}
	return ok, nil
}

// walletTables are the tables, in order of preference, that may hold the
// fiat module's wallets with columns id and user_id.
var walletTables = []string{"fiat_wallets", "wallets"}

// WalletOwners maps wallet ids to their owners through the fiat module's
// wallet table (fiat_wallets, or wallets; columns id and user_id). It
// returns an empty map when no such table exists (the fiat module is not
// installed) or it has another shape.
func (s *Store) WalletOwners(ctx context.Context, walletIDs []string) (map[string]string, error) {
	out := map[string]string{}
	if len(walletIDs) == 0 {
		return out, nil
	}
	// One round trip: the first of walletTables that exists, or NULL.
	var table *string
	if err := s.pool.QueryRow(ctx, `SELECT COALESCE(to_regclass($1), to_regclass($2))::text`,
		walletTables[0], walletTables[1]).Scan(&table); err != nil {
		return nil, fmt.Errorf("look for the wallets table: %w", err)
	}
	if table == nil || (*table != walletTables[0] && *table != walletTables[1]) {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT id::text, user_id::text FROM `+*table+` WHERE id::text = ANY($1)`, walletIDs)
	if err == nil {
		defer rows.Close()
		for rows.Next() {
			var id, owner string
			if err := rows.Scan(&id, &owner); err != nil {
				return nil, fmt.Errorf("scan wallet owner: %w", err)
			}
			out[id] = owner
		}
		err = rows.Err()
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "42703" || pgErr.Code == "42P01") {
		return map[string]string{}, nil // another shape: no owners to resolve
	}
	if err != nil {
		return nil, fmt.Errorf("resolve wallet owners: %w", err)
	}
	return out, nil
}

// NewDelivery is a (subscription, event) pair to deliver.
type NewDelivery struct {
	SubscriptionID string
	EventID        string
}

// Record stores the events and queues one pending delivery per pair, due at
// now, in one transaction. A pair recorded before (a redelivered event) is
// skipped: deliveries are unique on (subscription, event). It returns how
// many deliveries were queued.
func (s *Store) Record(ctx context.Context, events []Event, pairs []NewDelivery, now time.Time) (int64, error) {
	if len(pairs) == 0 {
		return 0, nil
	}
	ids, types, modules, datas, times := make([]string, len(events)), make([]string, len(events)),
		make([]string, len(events)), make([][]byte, len(events)), make([]time.Time, len(events))
	traces := make([]string, len(events))
	for i, e := range events {
		ids[i], types[i], modules[i], datas[i], times[i] = e.ID, e.Type, e.Module, e.Data, e.OccurredAt
		traces[i] = e.TraceParent
	}
	typeOf, at := make(map[string]string, len(events)), make(map[string]time.Time, len(events))
	for _, e := range events {
		typeOf[e.ID], at[e.ID] = e.Type, e.OccurredAt
	}
	// A delivery's id is derived from its event and subscription: recorded
	// again (a database restored to before it, the events re-read), it is
	// the same delivery.
	dids, subs, evs := make([]string, len(pairs)), make([]string, len(pairs)), make([]string, len(pairs))
	for i, p := range pairs {
		dids[i], subs[i], evs[i] = schemas.DerivedID(p.EventID, "delivery:"+p.SubscriptionID, at[p.EventID]), p.SubscriptionID, p.EventID
	}
	var n int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `
INSERT INTO webhook_events (event_id, type, module, data, occurred_at, traceparent)
SELECT e, t, m, d, o, NULLIF(tp, '')
FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[], $5::timestamptz[], $6::text[]) AS u(e, t, m, d, o, tp)
ON CONFLICT (event_id) DO NOTHING`, ids, types, modules, datas, times, traces); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `
INSERT INTO webhook_deliveries (id, subscription_id, event_id, next_attempt_at, created_at, updated_at)
SELECT d, s, e, $4, $4, $4 FROM unnest($1::text[], $2::text[], $3::text[]) AS t(d, s, e)
ON CONFLICT (subscription_id, event_id) DO NOTHING
RETURNING id, subscription_id, event_id`, dids, subs, evs, now)
		if err != nil {
			return err
		}
		changes, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (deliveryChange, error) {
			c := deliveryChange{status: StatusPending, at: now}
			if err := r.Scan(&c.id, &c.webhookID, &c.eventID); err != nil {
				return c, err
			}
			c.eventType = typeOf[c.eventID]
			c.envID = schemas.DerivedID(c.id, "recorded", at[c.eventID])
			return c, nil
		})
		if err != nil {
			return err
		}
		n = int64(len(changes))
		return appendDeliveryChanges(ctx, tx, changes)
	})
	if err != nil {
		return 0, fmt.Errorf("record %d webhook deliveries: %w", len(pairs), err)
	}
	return n, nil
}

// Job is a claimed delivery with everything an attempt needs: the endpoint,
// its current secret and the event.
type Job struct {
	DeliveryID     string
	ClaimToken     string
	SubscriptionID string
	// UserID owns the subscription; it binds the sealed secret to its owner.
	UserID string
	URL    string
	// Secret is the subscription's signing secret as stored: sealed
	// (storage/sealed) with the aad SecretAAD(UserID).
	Secret string
	// PreviousSecret is the secret a rotation replaced, sealed like Secret,
	// while its overlap lasts at the claim's Now ("" otherwise): attempts
	// are signed with both so receivers can switch secrets.
	PreviousSecret string
	Attempts       int
	Status         string
	Event          Event
}

// Claim is how ClaimDue picks work.
type Claim struct {
	// Now is the scheduler's clock: rows with next_attempt_at <= Now are due.
	Now time.Time
	// Limit caps the rows claimed.
	Limit int
	// PerSubscription caps the rows of one subscription in this claim.
	PerSubscription int
	// Exclude lists subscriptions whose rows are not claimed (they have
	// enough attempts in flight).
	Exclude []string
	// PerOwner caps the rows of one subscription owner in this claim;
	// OwnerRoom lowers it for owners with attempts already in flight (0:
	// none). 0 means no cap.
	PerOwner  int
	OwnerRoom map[string]int
	// LeaseUntil becomes next_attempt_at while the attempt runs: if the
	// claimer dies, the row is due again then.
	LeaseUntil time.Time
	// Token marks the claim; Finish applies only with the same token.
	Token string
}

const claimSQL = `
WITH ranked AS (
    SELECT d.id, s.user_id,
           row_number() OVER (PARTITION BY d.subscription_id ORDER BY d.next_attempt_at, d.id) AS rn,
           row_number() OVER (PARTITION BY s.user_id ORDER BY d.next_attempt_at, d.id) AS rn_owner
    FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
    WHERE d.status IN ('pending', 'failed') AND d.next_attempt_at <= $1 AND NOT (d.subscription_id = ANY($4))
      AND s.enabled
), room AS (
    SELECT * FROM unnest($7::text[], $8::int[]) AS r(user_id, room)
), due AS (
    SELECT d.id FROM webhook_deliveries d
    WHERE d.id IN (SELECT k.id FROM ranked k LEFT JOIN room r ON r.user_id = k.user_id
                   WHERE k.rn <= $3 AND ($9 <= 0 OR k.rn_owner <= coalesce(r.room, $9)))
      AND d.status IN ('pending', 'failed') AND d.next_attempt_at <= $1
    ORDER BY d.next_attempt_at, d.id
    LIMIT $2
    FOR UPDATE SKIP LOCKED
)
UPDATE webhook_deliveries d
SET next_attempt_at = $5, claim_token = $6
FROM due, webhook_subscriptions s, webhook_events e
WHERE d.id = due.id AND s.id = d.subscription_id AND e.event_id = d.event_id
RETURNING d.id, d.subscription_id, s.user_id, s.url, s.secret,
          CASE WHEN s.previous_secret_expires_at > $1 THEN COALESCE(s.previous_secret, '') ELSE '' END,
          d.attempts, d.status, e.event_id, e.type, e.module, e.data, e.occurred_at, COALESCE(e.traceparent, '')`

// ClaimDue takes up to c.Limit due deliveries (oldest due first) for this
// scheduler. Concurrent schedulers never claim the same row.
func (s *Store) ClaimDue(ctx context.Context, c Claim) ([]Job, error) {
	exclude := c.Exclude
	if exclude == nil {
		exclude = []string{}
	}
	owners, room := make([]string, 0, len(c.OwnerRoom)), make([]int32, 0, len(c.OwnerRoom))
	for o, n := range c.OwnerRoom {
		owners, room = append(owners, o), append(room, int32(max(n, 0)))
	}
	rows, err := s.pool.Query(ctx, claimSQL, c.Now, c.Limit, c.PerSubscription, exclude, c.LeaseUntil, c.Token,
		owners, room, c.PerOwner)
	if err != nil {
		return nil, fmt.Errorf("claim due webhook deliveries: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Job, error) {
		j := Job{ClaimToken: c.Token}
		err := r.Scan(&j.DeliveryID, &j.SubscriptionID, &j.UserID, &j.URL, &j.Secret, &j.PreviousSecret, &j.Attempts, &j.Status,
			&j.Event.ID, &j.Event.Type, &j.Event.Module, &j.Event.Data, &j.Event.OccurredAt, &j.Event.TraceParent)
		return j, err
	})
	if err != nil {
		return nil, fmt.Errorf("claim due webhook deliveries: %w", err)
	}
	return out, nil
}

// Result is the state a delivery moves to after an attempt.
type Result struct {
	Status     string
	Attempts   int
	StatusCode int // 0 when no HTTP answer came
	Error      string
	// Duration is how long the attempt took.
	Duration      time.Duration
	NextAttemptAt *time.Time
	At            time.Time
}

// Finish records the outcome of an attempt made under token. It reports
// false when the claim is no longer held (an admin queued the delivery again
// meanwhile), in which case nothing changes.
func (s *Store) Finish(ctx context.Context, id, token string, r Result) (bool, error) {
	var code *int
	if r.StatusCode != 0 {
		code = &r.StatusCode
	}
	var deliveredAt *time.Time
	if r.Status == StatusDelivered {
		deliveredAt = &r.At
	}
	var held bool
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `
UPDATE webhook_deliveries
SET status = $3, attempts = $4, last_status_code = $5, last_error = $6, next_attempt_at = $7,
    claim_token = NULL, delivered_at = COALESCE($8, delivered_at), updated_at = $9, last_duration_ms = $10
WHERE id = $1 AND claim_token = $2`, id, token, r.Status, r.Attempts, code, r.Error, r.NextAttemptAt, deliveredAt, r.At,
			r.Duration.Milliseconds())
		if err != nil || tag.RowsAffected() != 1 {
			return err
		}
		held = true
		c, err := changedDelivery(ctx, tx, id)
		if err != nil {
			return err
		}
		return appendDeliveryChanges(ctx, tx, []deliveryChange{c})
	})
	if err != nil {
		return false, fmt.Errorf("record attempt of delivery %s: %w", id, err)
	}
	return held, nil
}

const deliveryColumns = `d.id, d.subscription_id, d.event_id, e.type, d.status, d.attempts,
       d.last_status_code, d.last_error, d.next_attempt_at, d.last_duration_ms, d.created_at`

func scanDelivery(row pgx.Row) (Delivery, error) {
	var d Delivery
	err := row.Scan(&d.ID, &d.WebhookID, &d.EventID, &d.Type, &d.Status, &d.Attempts,
		&d.LastStatusCode, &d.LastError, &d.NextAttemptAt, &d.LastDurationMs, &d.CreatedAt)
	return d, err
}

// Filter selects deliveries for a delivery log.
type Filter struct {
	WebhookID string // empty: all
	Status    string // empty: all
	// Before is the cursor: only deliveries created before it (by creation
	// time, then id). Zero: from the newest.
	Before schemas.Position
	Limit  int
}

// List returns deliveries newest first: by creation time, then id.
func (s *Store) List(ctx context.Context, f Filter) ([]Delivery, error) {
	rows, err := s.pool.Query(ctx, `
SELECT `+deliveryColumns+`
FROM webhook_deliveries d JOIN webhook_events e ON e.event_id = d.event_id
WHERE ($1 = '' OR d.subscription_id = $1) AND ($2 = '' OR d.status = $2)
  AND ($3 = '' OR (d.created_at, d.id) < ($4, $3))
ORDER BY d.created_at DESC, d.id DESC LIMIT $5`, f.WebhookID, f.Status, f.Before.ID, f.Before.At, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("list webhook deliveries: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Delivery, error) { return scanDelivery(r) })
	if err != nil {
		return nil, fmt.Errorf("list webhook deliveries: %w", err)
	}
	return out, nil
}

// Get returns one delivery; an unknown id is postgres.ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (Delivery, error) {
	d, err := scanDelivery(s.pool.QueryRow(ctx, `
SELECT `+deliveryColumns+`
FROM webhook_deliveries d JOIN webhook_events e ON e.event_id = d.event_id WHERE d.id = $1`, id))
	if err != nil {
		return Delivery{}, fmt.Errorf("get webhook delivery %s: %w", id, postgres.Translate(err))
	}
	return d, nil
}

// Retry queues a delivery for an attempt at now, whatever its state: a
// dead-lettered one gets one more attempt (dead_letter again if it fails), a
// failed one has its next attempt brought forward. An attempt in flight
// loses its claim. An unknown id is postgres.ErrNotFound.
func (s *Store) Retry(ctx context.Context, id string, now time.Time) (Delivery, error) {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `
UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $2, claim_token = NULL, updated_at = $2
WHERE id = $1`, id, now)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return postgres.ErrNotFound
		}
		c, err := changedDelivery(ctx, tx, id)
		if err != nil {
			return err
		}
		return appendDeliveryChanges(ctx, tx, []deliveryChange{c})
	})
	if err != nil {
		return Delivery{}, fmt.Errorf("queue webhook delivery %s again: %w", id, err)
	}
	return s.Get(ctx, id)
}

// SecretAAD binds a subscription's sealed signing secret to its owner.
func SecretAAD(userID string) string { return "webhook-secret:" + userID }
