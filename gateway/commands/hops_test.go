package commands

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/schemas"
)

// TestRespondHops: an answer carries the reply's hops between the request's
// read and its write only when the request asked for them.
func TestRespondHops(t *testing.T) {
	app := fiber.New()
	app.Get("/x", func(c *fiber.Ctx) error {
		now := time.Now().UnixNano()
		return Respond(c, schemas.Reply{Status: 200, Body: []byte(`{}`), Hops: []int64{now, now, now, now, now, now, now}})
	})
	for _, ask := range []bool{true, false} {
		req := httptest.NewRequest("GET", "/x", nil)
		if ask {
			req.Header.Set(HeaderHops, "1")
		}
		before := time.Now().UnixNano()
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		after := time.Now().UnixNano()
		got := resp.Header.Get(HeaderHops)
		if resp.StatusCode != http.StatusOK || !ask && got != "" {
			t.Fatalf("asked %v: %d, %q", ask, resp.StatusCode, got)
		}
		if !ask {
			continue
		}
		f := strings.Split(got, ",")
		if len(f) != 9 {
			t.Fatalf("%q: want 9 times", got)
		}
		prev := int64(0)
		for _, s := range f {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil || v < before || v > after || v < prev {
				t.Fatalf("%q: %q not an ordered time within the request", got, s)
			}
			prev = v
		}
	}
}
