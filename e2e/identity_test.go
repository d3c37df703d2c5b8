package e2e

import (
	"net/http"
	"testing"

	"github.com/fintech/platform/e2e/harness"
)

func TestIdentityRegisterLoginMe(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "alice")

	login := p.Post(t, "/api/auth/login", "", map[string]string{"email": u.Email, "password": u.Password})
	if login.Status != http.StatusOK {
		t.Fatalf("login: %d %s", login.Status, login.Body)
	}
	token := login.JSON(t)["token"].(string)

	me := p.Get(t, "/api/auth/me", token)
	if me.Status != http.StatusOK {
		t.Fatalf("me: %d %s", me.Status, me.Body)
	}
	body := me.JSON(t)
	if body["id"] != u.ID || body["email"] != u.Email || body["role"] != "user" || body["name"] != "alice" {
		t.Fatalf("me = %v", body)
	}

	tests := []struct {
		name   string
		header string
	}{
		{"missing", ""},
		{"lowercase scheme", "bearer " + token},
		{"two spaces", "Bearer  " + token},
		{"forged", "Bearer " + token[:len(token)-4] + "AAAA"},
		{"garbage", "Bearer not.a.jwt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := p.Do(t, harness.Request{Method: http.MethodGet, Path: "/api/auth/me", Headers: map[string]string{"Authorization": tt.header}})
			if r.Status != http.StatusUnauthorized || r.JSON(t)["error"] != "auth_required" {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
		})
	}
}

func TestIdentityErrors(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "bob")
	tests := []struct {
		name   string
		path   string
		body   any
		status int
		code   string
	}{
		{"duplicate e-mail, other case", "/api/auth/register", map[string]string{"email": upper(u.Email), "password": "password-2"}, 409, "email_taken"},
		{"short password", "/api/auth/register", map[string]string{"email": "x@example.com", "password": "short"}, 422, "validation_failed"},
		{"bad e-mail", "/api/auth/register", map[string]string{"email": "nope", "password": "password-2"}, 422, "validation_failed"},
		{"wrong password", "/api/auth/login", map[string]string{"email": u.Email, "password": "wrong-password"}, 401, "invalid_credentials"},
		{"unknown e-mail", "/api/auth/login", map[string]string{"email": "ghost@example.com", "password": "wrong-password"}, 401, "invalid_credentials"},
		{"malformed JSON", "/api/auth/login", []byte(`{"email":`), 400, "invalid_json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := p.Post(t, tt.path, "", tt.body)
			if r.Status != tt.status || r.JSON(t)["error"] != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, tt.status, tt.code)
			}
		})
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}
