package webhooks

import (
	"context"
	"fmt"
	"time"

	"github.com/fintech/platform/schemas"
)

// PruneFinished deletes the deliveries that finished (delivered or
// dead-lettered) before before, and the webhook.test ones before testBefore
// (a test delivery is only worth reading for a while), then the events no
// delivery names any more that were recorded before before. A pending or
// failed delivery is never pruned: it still has attempts to make.
func (s *Store) PruneFinished(ctx context.Context, before, testBefore time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, `
DELETE FROM webhook_deliveries d
WHERE d.status IN ('delivered', 'dead_letter')
  AND (d.updated_at < $1
       OR (d.updated_at < $2 AND EXISTS (SELECT 1 FROM webhook_events e WHERE e.event_id = d.event_id AND e.type = $3)))`,
		before, testBefore, schemas.TypeWebhookTest)
	if err != nil {
		return 0, fmt.Errorf("prune finished webhook deliveries: %w", err)
	}
	n := tag.RowsAffected()
	tag, err = s.pool.Exec(ctx, `
DELETE FROM webhook_events e
WHERE (e.created_at < $1 OR (e.type = $3 AND e.created_at < $2))
  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.event_id)`, before, testBefore, schemas.TypeWebhookTest)
	if err != nil {
		return n, fmt.Errorf("prune delivered webhook events: %w", err)
	}
	return n + tag.RowsAffected(), nil
}
