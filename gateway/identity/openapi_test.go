package identity

import (
	"fmt"
	"testing"
	"time"

	"github.com/fintech/platform/gateway/server/servertest"

	"github.com/fintech/platform/gateway/auth/authtest"
)

type noUsers struct{ UserStore }
type noRoles struct{ Roles }
type noMailer struct{ Mailer }
type noVault struct{ Sealer }

// TestOpenAPI builds the slice from the routes Register really declares.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	s := servertest.New()
	tokens := authtest.New(t)
	h, err := NewHandlers(noUsers{}, tokens.Authenticator, noRoles{}, noMailer{}, servertest.DB{}, time.Now, s.Routes, Config{BaseURL: "http://localhost", Vault: noVault{}})
	if err != nil {
		t.Fatal(err)
	}
	h.Register(s.Root())
	doc := servertest.Document(t, s, Prefix+"/openapi.json")
	paths := doc["paths"].(map[string]any)
	if len(paths) != 16 {
		t.Fatalf("paths = %v", paths)
	}
	public := map[string]bool{"post /register": true, "post /login": true, "get /verify-email": true, "get /health": true,
		"get /openapi.json": true, "get /me": false, "post /verify-email": false,
		"post /logout": false, "get /sessions": false, "delete /sessions": false, "delete /sessions/{id}": false,
		"post /password": false, "post /password/forgot": true, "post /password/reset": true,
		"post /mfa/totp": false, "post /mfa/totp/confirm": false, "delete /mfa/totp": false, "post /verify-email/confirm": true}
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
	if op := paths[ResetPagePath].(map[string]any)["get"].(map[string]any); len(op["security"].([]any)) != 0 {
		t.Errorf("the reset page is not public: %v", op["security"])
	}
	login := paths[Prefix+"/login"].(map[string]any)["post"].(map[string]any)
	enum := login["responses"].(map[string]any)["401"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)["allOf"].([]any)[1].(map[string]any)["properties"].(map[string]any)["error"].(map[string]any)["enum"]
	if fmt.Sprint(enum) != "[invalid_credentials mfa_required]" {
		t.Errorf("login 401 codes = %v", enum)
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
