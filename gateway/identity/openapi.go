package identity

import (
	"net/http"

	"github.com/fintech/platform/gateway/openapi"
)

// Prefix is where the identity routes are mounted.
const Prefix = "/api/auth"

// OpenAPIDoc describes the identity slice (/api/auth/openapi.json), which
// the full document also carries so that a client SDK can register and log
// in.
var OpenAPIDoc = openapi.Doc{
	Title:       "Identity",
	Description: "Registration, login, the caller's profile and e-mail verification. Tokens are HS256 JWTs sent as `Authorization: Bearer <token>`.",
	Prefixes:    []string{Prefix},
	Public: func(method, path string) bool {
		return path != Prefix+"/me" && !(method == http.MethodPost && path == Prefix+"/verify-email")
	},
	Bodies:    map[string]string{"POST " + Prefix + "/register": "RegisterRequest", "POST " + Prefix + "/login": "LoginRequest"},
	Responses: responsesFor,
	Schemas: map[string]any{
		"RegisterRequest": openapi.Obj([]string{"email", "password"}, map[string]any{
			"email": map[string]any{"type": "string", "format": "email"}, "password": openapi.Text(maxPassword),
			"name": openapi.Text(200)}),
		"LoginRequest": openapi.Obj([]string{"email", "password"}, map[string]any{
			"email": openapi.Str, "password": openapi.Text(maxPassword)}),
		"Token": openapi.Obj([]string{"token", "user"}, map[string]any{"token": openapi.Str,
			"user": openapi.Obj([]string{"id", "email"}, map[string]any{"id": openapi.KSUID, "email": openapi.Str})}),
		"Me": openapi.Obj([]string{"id", "email", "name", "role"}, map[string]any{"id": openapi.KSUID, "email": openapi.Str,
			"name": openapi.Str, "role": map[string]any{"type": "string", "enum": []string{"user", "admin"}}}),
		"VerificationSent": openapi.Obj([]string{"sent", "email", "expiresAt"}, map[string]any{"sent": openapi.Bool,
			"email": openapi.Str, "expiresAt": openapi.DateTime}),
		"Verified": openapi.Obj([]string{"verified", "email"}, map[string]any{"verified": openapi.Bool, "email": openapi.Str}),
		"Health":   openapi.Obj([]string{"status", "database"}, map[string]any{"status": openapi.Str, "database": openapi.Str}),
	},
}

func responsesFor(method, path string) map[string]any {
	ok, errResp := openapi.Answer, openapi.ErrorAnswer
	out := map[string]any{}
	switch method + " " + path {
	case "GET " + Prefix + "/health":
		out["200"] = ok("liveness and database reachability", "Health")
		out["503"] = openapi.Degraded()
	case "GET " + Prefix + "/openapi.json":
		out["200"] = map[string]any{"description": "this document", "content": openapi.JSONContent(map[string]any{"type": "object"})}
	case "POST " + Prefix + "/register":
		out["201"] = ok("the new account and its token", "Token")
		out["409"] = errResp("email_taken")
	case "POST " + Prefix + "/login":
		out["200"] = ok("a token", "Token")
		out["401"] = errResp("invalid_credentials")
	case "GET " + Prefix + "/me":
		out["200"] = ok("the caller's profile and role", "Me")
	case "POST " + Prefix + "/verify-email":
		out["200"] = ok("a one-time link was mailed to the caller's address", "VerificationSent")
		out["502"] = errResp("mail_unavailable")
	case "GET " + Prefix + "/verify-email":
		out["200"] = ok("the address is verified", "Verified")
		out["404"] = errResp("verification_invalid: the link is unknown, used or expired")
	}
	return out
}
