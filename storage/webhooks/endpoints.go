package webhooks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
)

// ErrNotRetryable means a delivery is not in a state an owner may retry
// (pending or delivered).
var ErrNotRetryable = errors.New("delivery is not failed or dead-lettered")

// ListSubscriptions returns the user's subscriptions, the primary one
// included, newest first (creation time, then id), starting after before.
func (s *Store) ListSubscriptions(ctx context.Context, userID string, before schemas.Position, limit int) ([]Subscription, error) {
	rows, err := s.pool.Query(ctx, `
SELECT `+subColumns+` FROM webhook_subscriptions
WHERE user_id = $1 AND ($2 = '' OR (created_at, id) < ($3, $2))
ORDER BY created_at DESC, id DESC LIMIT $4`, userID, before.ID, before.At, limit)
	if err != nil {
		return nil, fmt.Errorf("list webhooks of %s: %w", userID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Subscription, error) { return scanSub(r) })
	if err != nil {
		return nil, fmt.Errorf("list webhooks of %s: %w", userID, err)
	}
	return out, nil
}

// ownedSQL selects the user's subscription with id $2, or the primary one
// when $2 is empty.
const ownedSQL = `user_id = $1 AND (CASE WHEN $2 = '' THEN is_primary ELSE id = $2 END)`

// Subscription returns one of the user's subscriptions (the primary one for
// id ""); another user's or an unknown id is postgres.ErrNotFound.
func (s *Store) Subscription(ctx context.Context, userID, id string) (Subscription, error) {
	sub, err := scanSub(s.pool.QueryRow(ctx, `SELECT `+subColumns+` FROM webhook_subscriptions WHERE `+ownedSQL, userID, id))
	if err != nil {
		return Subscription{}, fmt.Errorf("get webhook %q of %s: %w", id, userID, postgres.Translate(err))
	}
	return sub, nil
}

// Patch holds the fields of an update; nil leaves a field as it is.
// ClearEvents sets events to all (NULL).
type Patch struct {
	URL         *string
	Secret      *string
	Events      []string
	ClearEvents bool
	Enabled     *bool
	// AllEvents is whether the subscription receives every event from now
	// on; it is applied only with URL (a new destination keeps the
	// all-events audience only when the caller may give it one).
	AllEvents bool
	// PreviousUntil is how long the secret a new Secret replaces keeps
	// signing beside it (nil: it stops at once); unused without Secret.
	PreviousUntil *time.Time
}

// Update changes the given fields of one of the user's subscriptions (the
// primary one for id ""); another user's or an unknown id is
// postgres.ErrNotFound.
func (s *Store) Update(ctx context.Context, userID, id string, p Patch, now time.Time) (Subscription, error) {
	setEvents := p.Events != nil || p.ClearEvents
	sub, err := scanSub(s.pool.QueryRow(ctx, `
UPDATE webhook_subscriptions SET
    url = COALESCE($3, url), secret = COALESCE($4, secret),
    events = CASE WHEN $5 THEN $6::text[] ELSE events END,
    enabled = COALESCE($7, enabled), updated_at = $8,
    all_events = CASE WHEN $3::text IS NULL THEN all_events ELSE $10 END,
    previous_secret = CASE WHEN $4::text IS NULL THEN previous_secret
        WHEN $9::timestamptz IS NULL THEN NULL ELSE secret END,
    previous_secret_expires_at = CASE WHEN $4::text IS NULL THEN previous_secret_expires_at ELSE $9::timestamptz END
WHERE `+ownedSQL+` RETURNING `+subColumns, userID, id, p.URL, p.Secret, setEvents, p.Events, p.Enabled, now, p.PreviousUntil, p.AllEvents))
	if err != nil {
		return Subscription{}, fmt.Errorf("update webhook %q of %s: %w", id, userID, postgres.Translate(err))
	}
	return sub, nil
}

// Delete removes one of the user's subscriptions (the primary one for id
// "") with its deliveries; another user's or an unknown id is
// postgres.ErrNotFound.
func (s *Store) Delete(ctx context.Context, userID, id string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM webhook_subscriptions WHERE `+ownedSQL, userID, id)
	if err != nil {
		return fmt.Errorf("delete webhook %q of %s: %w", id, userID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("delete webhook %q of %s: %w", id, userID, postgres.ErrNotFound)
	}
	return nil
}

// Delivery returns one delivery of a subscription; one of another
// subscription or an unknown id is postgres.ErrNotFound.
func (s *Store) Delivery(ctx context.Context, subscriptionID, id string) (Delivery, error) {
	d, err := scanDelivery(s.pool.QueryRow(ctx, `
SELECT `+deliveryColumns+`
FROM webhook_deliveries d JOIN webhook_events e ON e.event_id = d.event_id
WHERE d.id = $1 AND d.subscription_id = $2`, id, subscriptionID))
	if err != nil {
		return Delivery{}, fmt.Errorf("get webhook delivery %s: %w", id, postgres.Translate(err))
	}
	return d, nil
}

// RetryOwned queues a failed or dead-lettered delivery of the subscription
// for an attempt at now (recorded for the analytics copy like every change
// of a delivery). A delivery of another subscription or an unknown id is
// postgres.ErrNotFound; a pending or delivered one ErrNotRetryable.
func (s *Store) RetryOwned(ctx context.Context, subscriptionID, id string, now time.Time) (Delivery, error) {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `
UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $3, claim_token = NULL, updated_at = $3
WHERE id = $1 AND subscription_id = $2 AND status IN ('failed', 'dead_letter')`, id, subscriptionID, now)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			var exists bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_deliveries WHERE id = $1 AND subscription_id = $2)`,
				id, subscriptionID).Scan(&exists); err != nil {
				return err
			}
			if !exists {
				return postgres.ErrNotFound
			}
			return ErrNotRetryable
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
	return s.Delivery(ctx, subscriptionID, id)
}

// QueueEvent stores an event made for one subscription (a test event) and
// queues its delivery, due at now, through the same rows the scheduler
// works on.
func (s *Store) QueueEvent(ctx context.Context, subscriptionID string, ev Event, now time.Time) (Delivery, error) {
	id := schemas.NewID()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `
INSERT INTO webhook_events (event_id, type, module, data, occurred_at) VALUES ($1, $2, $3, $4, $5)`,
			ev.ID, ev.Type, ev.Module, ev.Data, ev.OccurredAt); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `
INSERT INTO webhook_deliveries (id, subscription_id, event_id, next_attempt_at, created_at, updated_at)
VALUES ($1, $2, $3, $4, $4, $4)`, id, subscriptionID, ev.ID, now); err != nil {
			return err
		}
		c, err := changedDelivery(ctx, tx, id)
		if err != nil {
			return err
		}
		return appendDeliveryChanges(ctx, tx, []deliveryChange{c})
	})
	if err != nil {
		return Delivery{}, fmt.Errorf("queue %s for webhook %s: %w", ev.Type, subscriptionID, postgres.Translate(err))
	}
	return s.Delivery(ctx, subscriptionID, id)
}
