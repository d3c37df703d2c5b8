package identity

import (
	"testing"
	"time"

	"github.com/fintech/platform/gateway/server/servertest"

	"github.com/fintech/platform/gateway/auth"
)

type noUsers struct{ UserStore }
type noRoles struct{ Roles }
type noMailer struct{ Mailer }

// TestOpenAPI builds the slice from the routes Register really declares.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	s := servertest.New()
	tokens, err := auth.NewTokens([]byte("0123456789abcdef0123456789abcdef"), time.Hour, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHandlers(noUsers{}, tokens, noRoles{}, noMailer{}, servertest.DB{}, time.Now, s.Routes, Config{BaseURL: "http://localhost"})
	if err != nil {
		t.Fatal(err)
	}
	h.Register(s.Root())
	doc := servertest.Document(t, s, Prefix+"/openapi.json")
	paths := doc["paths"].(map[string]any)
	if len(paths) != 7 {
		t.Fatalf("paths = %v", paths)
	}
	public := map[string]bool{"post /register": true, "post /login": true, "get /verify-email": true, "get /health": true,
		"get /openapi.json": true, "get /me": false, "post /verify-email": false, "post /verify-email/confirm": true}
	for key, want := range public {
		var method, path string
		for i := range key {
			if key[i] == ' ' {
				method, path = key[:i], key[i+1:]
			}
		}
		op := paths[Prefix+path].(map[string]any)[method].(map[string]any)
		if got := len(op["security"].([]any)) == 0; got != want {
			t.Errorf("%s public = %v, want %v", key, got, want)
		}
	}
	register := paths[Prefix+"/register"].(map[string]any)["post"].(map[string]any)
	for _, status := range []string{"201", "409", "422", "429"} {
		if _, ok := register["responses"].(map[string]any)[status]; !ok {
			t.Errorf("register lacks %s", status)
		}
	}
	comps := doc["components"].(map[string]any)["schemas"].(map[string]any)
	pw := comps["RegisterRequest"].(map[string]any)["properties"].(map[string]any)["password"].(map[string]any)
	if pw["minLength"] != float64(8) || pw["maxLength"] != float64(128) {
		t.Errorf("password = %v", pw)
	}
	role := comps["Profile"].(map[string]any)["properties"].(map[string]any)["role"].(map[string]any)
	if len(role["enum"].([]any)) != 2 {
		t.Errorf("role = %v", role)
	}
}
