package sign

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/gateway/server/servertest"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/sealed"
)

type noStore struct{ Store }

// TestOpenAPI builds the slice from the routes Register really declares.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	ring, err := sealed.NewKeyring("SIGNING_MASTER_KEY", "sign", strings.Repeat("k", 32))
	if err != nil {
		t.Fatal(err)
	}
	s := servertest.New()
	h, err := NewHandlers(noStore{}, ring, servertest.DB{}, servertest.Pass, time.Now, schemas.NewID, s.Routes)
	if err != nil {
		t.Fatal(err)
	}
	h.Register(s.Root())
	doc := servertest.Document(t, s, Prefix+"/openapi.json")
	raw, _ := json.Marshal(doc)
	var d struct {
		Paths map[string]map[string]struct {
			Security    []any          `json:"security"`
			RequestBody map[string]any `json:"requestBody"`
			Responses   map[string]any `json:"responses"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Required   []string                  `json:"required"`
				Properties map[string]map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Paths) != 7 {
		t.Fatalf("paths = %v", d.Paths)
	}
	tests := []struct {
		path, method string
		public       bool
		statuses     []string
	}{
		{"/api/sign/sign", "post", false, []string{"201", "401", "422"}},
		{"/api/sign/verify", "post", true, []string{"200", "422"}},
		{"/api/sign/keys", "get", false, []string{"200", "401"}},
		{"/api/sign/keys/rotate", "post", false, []string{"201", "401"}},
		{"/api/sign/keys/{keyId}", "get", true, []string{"200", "404"}},
	}
	for _, tt := range tests {
		op := d.Paths[tt.path][tt.method]
		if (len(op.Security) == 0) != tt.public {
			t.Errorf("%s %s security = %v", tt.method, tt.path, op.Security)
		}
		for _, st := range tt.statuses {
			if _, ok := op.Responses[st]; !ok {
				t.Errorf("%s %s lacks %s: %v", tt.method, tt.path, st, op.Responses)
			}
		}
	}
	sc := d.Components.Schemas
	payload := sc["SignRequest"].Properties["payload"]
	if payload["$ref"] != "#/components/schemas/PayloadObject" || sc["PayloadObject"].Properties != nil {
		t.Fatalf("SignRequest.payload = %v, PayloadObject = %v", payload, sc["PayloadObject"])
	}
	if sc["VerifyRequest"].Properties["signature"]["maxLength"] != float64(1000) {
		t.Fatalf("VerifyRequest = %v", sc["VerifyRequest"])
	}
	if sc["SigningKey"].Properties["keyId"]["pattern"] != "^[0-9A-Za-z]{27}$" {
		t.Fatalf("SigningKey.keyId = %v", sc["SigningKey"].Properties["keyId"])
	}
	if _, ok := sc["RotatedSigningKey"].Properties["previousKeyId"]; !ok {
		t.Fatalf("RotatedSigningKey = %v", sc["RotatedSigningKey"])
	}
}
