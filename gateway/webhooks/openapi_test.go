package webhooks

import (
	"context"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/server/servertest"

	"github.com/fintech/platform/gateway/auth/authtest"
	"github.com/fintech/platform/gateway/openapi"
)

type noStore struct{ Store }
type noStream struct{ Stream }
type noAudience struct{ Audience }
type noWaker struct{}
type noVault struct{ Vault }

func (noWaker) Wake() {}

// TestOpenAPI documents the routes Register really declares (they are part
// of the fiat slice, whose prefix they share).
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	s := servertest.New()
	tokens := authtest.New(t)
	h, err := NewHandlers(noStore{}, noStream{}, noAudience{}, noWaker{}, tokens.Authenticator, servertest.Pass, noVault{}, time.Now, Config{Reauth: noReauth{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Register(s.Root()); err != nil {
		t.Fatal(err)
	}
	doc := openapi.Build(s.Routes(), openapi.Doc{Title: "webhooks", Prefixes: []string{"/api/fiat"}})
	paths := doc["paths"].(map[string]any)
	if len(paths) != 16 { // and the stream ticket
		t.Fatalf("paths = %v", paths)
	}
	me := paths["/api/fiat/me/webhook"].(map[string]any)
	for _, m := range []string{"post", "patch"} {
		if _, ok := me[m].(map[string]any)["requestBody"]; !ok {
			t.Errorf("%s /me/webhook has no body", m)
		}
	}
	list := paths["/api/fiat/admin/webhook-deliveries"].(map[string]any)["get"].(map[string]any)
	if list["x-required-role"] != fiatAdmin {
		t.Errorf("delivery log = %v", list)
	}
	if _, ok := list["responses"].(map[string]any)["403"]; !ok {
		t.Errorf("delivery log lacks 403")
	}
	retry := paths["/api/fiat/admin/webhook-deliveries/{id}/retry"].(map[string]any)["post"].(map[string]any)
	if _, ok := retry["responses"].(map[string]any)["202"]; !ok {
		t.Errorf("retry lacks 202: %v", retry["responses"])
	}
	page := paths["/api/fiat/admin/stream"].(map[string]any)["get"].(map[string]any)
	if sec := page["security"].([]any); len(sec) != 0 {
		t.Errorf("the stream page needs a token")
	}
	events := paths["/api/fiat/admin/events"].(map[string]any)["get"].(map[string]any)
	ok200 := events["responses"].(map[string]any)["200"].(map[string]any)
	if _, ok := ok200["content"].(map[string]any)["text/event-stream"]; !ok {
		t.Errorf("events 200 = %v", ok200)
	}
	comps := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for _, name := range []string{"SubscribeRequest", "RotateRequest", "WebhookSubscriptionMinted", "WebhookSubscriptionDetailPage", "WebhookDeliveryPage"} {
		if _, ok := comps[name]; !ok {
			t.Errorf("no %s among %v", name, comps)
		}
	}
}

// noReauth admits every re-authentication and mails nothing.
type noReauth struct{}

func (noReauth) Reauthenticate(*fiber.Ctx, string, string, string) error { return nil }
func (noReauth) Notify(context.Context, string, string)                  {}
