package webhooks

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/topics/names"
)

// deliveryChange is a delivery row as a write left it.
type deliveryChange struct {
	id, webhookID, eventID, eventType, status string
	attempts                                  int
	statusCode                                *int
	at                                        time.Time
	// envID, when set, is the change event's id (a derived one, so that a
	// change recorded again is the same event); else a new one.
	envID string
}

// appendDeliveryChanges puts one webhook.delivery.updated per change on the
// event log inside tx, so the analytics copy of the delivery log changes
// exactly when the row does.
func appendDeliveryChanges(ctx context.Context, tx pgx.Tx, changes []deliveryChange) error {
	if len(changes) == 0 {
		return nil
	}
	rows := make([]pipeline.OutboxRow, 0, len(changes))
	for _, c := range changes {
		d := schemas.WebhookDeliveryUpdated{DeliveryID: c.id, WebhookID: c.webhookID, EventID: c.eventID,
			EventType: c.eventType, Status: c.status, Attempts: c.attempts, UpdatedAt: c.at.UTC()}
		if c.statusCode != nil {
			d.LastStatusCode = *c.statusCode
		}
		env, err := schemas.New(schemas.TypeWebhookDeliveryUpdated, c.webhookID, "", d, c.at)
		if err != nil {
			return err
		}
		if c.envID != "" {
			env.ID = c.envID
		}
		row, err := pipeline.EventRow(names.AnalyticsWebhooks, env)
		if err != nil {
			return fmt.Errorf("encode delivery change: %w", err)
		}
		rows = append(rows, row)
	}
	return pipeline.InsertOutbox(ctx, tx, rows)
}

// changedDelivery reads the row a write just changed, for its change event.
const changedDeliverySQL = `
SELECT d.id, d.subscription_id, d.event_id, e.type, d.status, d.attempts, d.last_status_code, d.updated_at
FROM webhook_deliveries d JOIN webhook_events e ON e.event_id = d.event_id
WHERE d.id = $1`

func changedDelivery(ctx context.Context, tx pgx.Tx, id string) (deliveryChange, error) {
	var c deliveryChange
	err := tx.QueryRow(ctx, changedDeliverySQL, id).Scan(&c.id, &c.webhookID, &c.eventID, &c.eventType, &c.status,
		&c.attempts, &c.statusCode, &c.at)
	return c, err
}
