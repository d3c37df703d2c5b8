package commands

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
)

// fakeSender records the commands it is given and answers each with rep.
type fakeSender struct {
	got []Command
	rep schemas.Reply
}

func (f *fakeSender) Send(_ context.Context, cmd Command) (schemas.Reply, error) {
	f.got = append(f.got, cmd)
	return f.rep, nil
}

// exchange runs Exchange in a handler for one request and returns what was
// sent and the response.
func exchange(t *testing.T, key, body string, idem func(c *fiber.Ctx) Idempotency) (Command, *http.Response) {
	t.Helper()
	s := &fakeSender{rep: schemas.Reply{Status: http.StatusCreated, Body: []byte(`{"ok":true}`), Replayed: true}}
	app := fiber.New()
	app.Post("/x", func(c *fiber.Ctx) error {
		env, err := schemas.New(schemas.TypeMaskRevoke, "k", "u1", schemas.MaskRevoke{MaskID: "m"}, time.Now())
		if err != nil {
			return err
		}
		return Exchange(c, s, "mask.commands", env, idem(c))
	})
	req := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(body))
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := app.Test(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.got) != 1 {
		t.Fatalf("sent %d commands, want 1", len(s.got))
	}
	return s.got[0], resp
}

func TestExchange(t *testing.T) {
	t.Parallel()
	fromRequest := func(c *fiber.Ctx) Idempotency { return RequestIdempotency(c, "u1", "POST /x") }

	cmd, resp := exchange(t, "k1", `{"a":1}`, fromRequest)
	if cmd.Topic != "mask.commands" {
		t.Fatalf("topic %q", cmd.Topic)
	}
	if want := IdempotentID("u1", "POST /x", "k1"); cmd.Env.ID != want {
		t.Fatalf("id %q, want %q", cmd.Env.ID, want)
	}
	if want := RequestHash([]byte(`{"a":1}`)); cmd.Env.RequestHash != want {
		t.Fatalf("request hash %q, want %q", cmd.Env.RequestHash, want)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated || string(body) != `{"ok":true}` ||
		resp.Header.Get(server.HeaderIdempotentReplayed) != "true" {
		t.Fatalf("response %d %s %v", resp.StatusCode, body, resp.Header)
	}

	again, _ := exchange(t, "k1", `{"a":2}`, fromRequest)
	if again.Env.ID != cmd.Env.ID || again.Env.RequestHash == cmd.Env.RequestHash {
		t.Fatal("the same key with another body must be the same command with another hash")
	}

	// Without a key the envelope's fresh id stands and nothing is guarded.
	fresh, _ := exchange(t, "", `{"a":1}`, fromRequest)
	if strings.HasPrefix(fresh.Env.ID, "idem-") || fresh.Env.RequestHash != "" {
		t.Fatalf("keyless command %q hash %q", fresh.Env.ID, fresh.Env.RequestHash)
	}

	// A reference key without a hash (a paymentRef).
	ref, _ := exchange(t, "ignored", `{}`, func(*fiber.Ctx) Idempotency {
		return Idempotency{Caller: "u1", Endpoint: "charge", Key: "ref"}
	})
	if ref.Env.ID != IdempotentID("u1", "charge", "ref") || ref.Env.RequestHash != "" {
		t.Fatalf("reference command %q hash %q", ref.Env.ID, ref.Env.RequestHash)
	}
}

func TestKeyOf(t *testing.T) {
	t.Parallel()
	app := fiber.New()
	app.Post("/x", func(c *fiber.Ctx) error {
		key, err := KeyOf(c)
		if err != nil {
			return c.Status(422).SendString(err.Error())
		}
		return c.SendString(key)
	})
	for _, tt := range []struct {
		key  string
		want int
	}{{strings.Repeat("k", 255), 200}, {strings.Repeat("k", 256), 422}, {"", 200}} {
		req := httptest.NewRequest(http.MethodPost, "/x", nil)
		if tt.key != "" {
			req.Header.Set("Idempotency-Key", tt.key)
		}
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != tt.want {
			t.Errorf("key of %d characters: %d, want %d", len(tt.key), resp.StatusCode, tt.want)
		}
	}
}
