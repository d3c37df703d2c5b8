package bind

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
)

type requestUnderTest struct {
	Paging
	ID     string `path:"id" json:"-"`
	Tag    string `query:"tag" json:"-"`
	Count  int    `query:"count" json:"-"`
	Trace  string `header:"X-Trace" json:"-"`
	Amount Amount `json:"amount"`
	Note   string `json:"note"`
}

type optionalBodyRequest struct {
	Reason string `json:"reason"`
}

func (optionalBodyRequest) BodyIsOptional() {}

func TestRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, url, contentType, body string
		optional                     bool
		wantStatus                   int
		wantField                    string
		check                        func(t *testing.T, got requestUnderTest)
	}{
		{name: "all parts", url: "/x/abc?tag=t1&count=3&limit=5", contentType: "application/json", body: `{"amount":7,"note":"n","id":"ignored"}`,
			check: func(t *testing.T, got requestUnderTest) {
				if got.ID != "abc" || got.Tag != "t1" || got.Count != 3 || got.Trace != "tr" || got.Amount.Value != 7 || got.Note != "n" {
					t.Fatalf("bound %+v", got)
				}
				if err := got.Validate(); err != nil || got.Page().Limit != 5 {
					t.Fatalf("page %+v %v", got.Page(), err)
				}
			}},
		{name: "bad integer query", url: "/x/abc?count=many", contentType: "application/json", body: `{}`, wantStatus: 422, wantField: "count"},
		{name: "body needs JSON content type", url: "/x/abc", contentType: "text/plain", body: `{}`, wantStatus: 400},
		{name: "body of the wrong type names the field", url: "/x/abc", contentType: "application/json", body: `{"note":1}`, wantStatus: 422, wantField: "note"},
		{name: "optional body may be empty", url: "/o", optional: true},
		{name: "optional body is still checked when sent", url: "/o", optional: true, contentType: "application/json", body: `[1]`, wantStatus: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			app := fiber.New(fiber.Config{ErrorHandler: func(c *fiber.Ctx, err error) error {
				var e *apierr.Error
				if !errors.As(err, &e) {
					return c.Status(500).SendString(err.Error())
				}
				return c.Status(e.Status).SendString(strings.Join(keys(e.Fields), ","))
			}})
			var got requestUnderTest
			app.Post("/x/:id", func(c *fiber.Ctx) error { return Request(c, &got) })
			app.Post("/o", func(c *fiber.Ctx) error { var o optionalBodyRequest; return Request(c, &o) })
			req := httptest.NewRequest("POST", tt.url, strings.NewReader(tt.body))
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			req.Header.Set("X-Trace", "tr")
			resp, err := app.Test(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			want := tt.wantStatus
			if want == 0 {
				want = 200
			}
			if resp.StatusCode != want || (tt.wantField != "" && string(body) != tt.wantField) {
				t.Fatalf("status %d body %q, want %d %q", resp.StatusCode, body, want, tt.wantField)
			}
			if tt.check != nil {
				tt.check(t, got)
			}
		})
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

type rawBodyRequest struct {
	Signature string `header:"X-Signature" json:"-"`
	ID        string `json:"id"`
}

func (rawBodyRequest) BodyIsRaw() {}

// TestRequestRawBody: a RawBody request binds its parameters and leaves the
// body, whatever it is, to the handler.
func TestRequestRawBody(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{"id":"e1"}`, `not json`, ``, `{"id":5}`} {
		app := fiber.New()
		var got rawBodyRequest
		app.Post("/", func(c *fiber.Ctx) error {
			if err := Request(c, &got); err != nil {
				return err
			}
			return c.SendString(string(c.Body()))
		})
		req := httptest.NewRequest("POST", "/", strings.NewReader(body))
		req.Header.Set("X-Signature", "sig")
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || string(raw) != body || got.Signature != "sig" || got.ID != "" {
			t.Fatalf("body %q: %d %q, bound %+v", body, resp.StatusCode, raw, got)
		}
	}
}
