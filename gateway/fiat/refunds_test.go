package fiat

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
)

// TestRefundBody: the body is optional; an amount given must be a positive
// integer of minor units; reason is bounded text.
func TestRefundBody(t *testing.T) {
	t.Parallel()
	app := fiber.New()
	app.Post("/", func(c *fiber.Ctx) error {
		var req refundRequestRequest
		err := bind.Request(c, &req)
		if err == nil {
			err = bind.CheckRules(&req) // the declared tags, as the server checks them
		}
		if err == nil {
			err = req.Validate()
		}
		amount, reason := req.amount, req.reason
		var ae *apierr.Error
		switch {
		case errors.As(err, &ae):
			return c.Status(ae.Status).SendString(ae.Code)
		case err != nil:
			return err
		}
		return c.JSON(fiber.Map{"amount": amount, "reason": reason})
	})
	for _, tc := range []struct {
		name, body, ctype string
		status            int
		want              string
	}{
		{"no body: the whole remaining amount", "", "", 200, `{"amount":0,"reason":""}`},
		{"empty object", "{}", "application/json", 200, `{"amount":0,"reason":""}`},
		{"amount and reason", `{"amount": 1500, "reason": " damaged "}`, "application/json", 200, `{"amount":1500,"reason":"damaged"}`},
		{"null amount", `{"amount": null}`, "application/json", 200, `{"amount":0,"reason":""}`},
		{"zero", `{"amount": 0}`, "application/json", 422, "validation_failed"},
		{"negative", `{"amount": -1}`, "application/json", 422, "validation_failed"},
		{"fraction", `{"amount": 1.5}`, "application/json", 422, "validation_failed"},
		{"string", `{"amount": "12"}`, "application/json", 422, "validation_failed"},
		{"too large", `{"amount": 1000000000000001}`, "application/json", 422, "validation_failed"},
		{"reason too long", `{"reason": "` + strings.Repeat("é", 501) + `"}`, "application/json", 422, "validation_failed"},
		{"reason not a string", `{"reason": 5}`, "application/json", 422, "validation_failed"},
		{"not JSON", `amount=5`, "application/json", 400, "invalid_json"},
		{"body without content type", `{"amount": 5}`, "text/plain", 400, "content_type_required"},
	} {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tc.body))
		if tc.ctype != "" {
			req.Header.Set("Content-Type", tc.ctype)
		}
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		buf := new(strings.Builder)
		_, _ = io.Copy(buf, resp.Body)
		if resp.StatusCode != tc.status || buf.String() != tc.want {
			t.Errorf("%s: %d %s, want %d %s", tc.name, resp.StatusCode, buf, tc.status, tc.want)
		}
	}
}
