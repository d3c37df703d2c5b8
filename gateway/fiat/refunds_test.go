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
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
)

// TestBindRefund: the body is optional; an amount given must be a positive
// integer of minor units; reason is bounded text.
func TestBindRefund(t *testing.T) {
	t.Parallel()
	app := fiber.New()
	app.Post("/", func(c *fiber.Ctx) error {
		amount, reason, err := bindRefund(c)
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

// TestRefundOperation: the refund routes document the fee rule and the
// charge refunds their X-API-Key.
func TestRefundOperation(t *testing.T) {
	t.Parallel()
	op := map[string]any{}
	refundOperation(server.Route{Method: http.MethodPost, Path: Prefix + pathChargeRefunds, Class: ratelimit.Money}, op)
	if d, _ := op["description"].(string); !strings.Contains(d, "no fee is charged on a refund") ||
		!strings.Contains(d, "fee of the original payment is not returned") {
		t.Fatalf("description: %v", op["description"])
	}
	if ps := asList(op["parameters"]); len(ps) != 1 || ps[0].(map[string]any)["name"] != "X-API-Key" {
		t.Fatalf("parameters: %v", op["parameters"])
	}
	other := map[string]any{}
	refundOperation(server.Route{Method: http.MethodPost, Path: Prefix + "/transfer"}, other)
	if len(other) != 0 {
		t.Fatalf("a non-refund route was changed: %v", other)
	}
	if !publicRoutes["POST "+Prefix+pathChargeRefunds] || publicRoutes["POST "+Prefix+pathRequestRefunds] {
		t.Fatal("charge refunds authenticate by X-API-Key, request refunds by bearer token")
	}
}
