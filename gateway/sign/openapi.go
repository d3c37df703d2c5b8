package sign

import (
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/server"
)

// openapi answers the module's OpenAPI 3.0 slice, generated from the routes
// the server actually registered under Prefix.
func (h *Handlers) openapi(c *fiber.Ctx) error {
	return c.JSON(OpenAPI(h.routes(), Prefix, publicPaths))
}

// OpenAPI builds an OpenAPI 3.0 document of the routes under prefix; routes
// not in public need a bearer token.
func OpenAPI(routes []server.Route, prefix string, public map[string]bool) map[string]any {
	return openapi.Build(routes, openapi.Doc{
		Title: "Signing",
		Description: "Ed25519 signatures over the RFC 8785 canonical JSON of a payload object. " +
			"Public keys are published as RFC 8037 JWKs for offline verification.",
		Prefixes:  []string{prefix},
		Public:    func(_, path string) bool { return public[path] },
		Schemas:   componentSchemas,
		Bodies:    requestBodies,
		Responses: responsesFor,
	})
}

var requestBodies = map[string]string{
	"POST " + Prefix + "/sign":   "SignRequest",
	"POST " + Prefix + "/verify": "VerifyRequest",
}

func responsesFor(method, path string) map[string]any {
	content := openapi.JSONContent
	errResp := openapi.ErrorAnswer
	ok := openapi.Answer
	out := map[string]any{}
	switch method + " " + path {
	case "POST " + Prefix + "/sign":
		out["201"] = ok("the signature", "SignResult")
		out["422"] = errResp("validation_failed: payload is not a JSON object")
	case "POST " + Prefix + "/verify":
		out["200"] = ok("the verdict and digests", "VerifyResult")
		out["422"] = errResp("validation_failed")
	case "GET " + Prefix + "/keys/:keyId":
		out["200"] = ok("the public key", "Key")
		out["404"] = errResp("not_found")
	case "GET " + Prefix + "/keys":
		out["200"] = map[string]any{"description": "the caller's keys", "content": content(map[string]any{
			"type": "object", "required": []string{"items", "total", "nextCursor"}, "properties": map[string]any{
				"items":      map[string]any{"type": "array", "items": openapi.Ref("Key")},
				"total":      openapi.Int64,
				"nextCursor": map[string]any{"type": "string", "nullable": true}}})}
	case "POST " + Prefix + "/keys/rotate":
		out["201"] = ok("the new active key", "Key")
	default:
		out["200"] = map[string]any{"description": "OK"}
	}
	if !publicPaths[path] {
		out["401"] = errResp("auth_required")
	}
	return out
}

var (
	object = map[string]any{"type": "object", "additionalProperties": true}
	digest = map[string]any{"type": "string", "pattern": "^[0-9a-f]{64}$"}
)

var componentSchemas = map[string]any{
	"SignRequest": map[string]any{"type": "object", "required": []string{"payload"},
		"properties": map[string]any{"payload": object}},
	"SignResult": map[string]any{"type": "object", "required": []string{"payload", "signature", "algo", "createdAt"},
		"properties": map[string]any{"payload": object, "signature": map[string]any{"type": "string",
			"pattern": "^[0-9A-Za-z]+\\.[A-Za-z0-9_-]{86}$"}, "algo": map[string]any{"type": "string", "enum": []string{"Ed25519"}},
			"keyId": openapi.Str, "createdAt": openapi.DateTime}},
	"VerifyRequest": map[string]any{"type": "object", "required": []string{"payload", "signature"},
		"properties": map[string]any{"payload": object, "signature": openapi.Str}},
	"VerifyResult": map[string]any{"type": "object", "required": []string{"valid", "expected", "provided"},
		"properties": map[string]any{"valid": openapi.Bool, "expected": digest,
			"provided": map[string]any{"type": "string", "pattern": "^[0-9a-f]{64}$", "nullable": true},
			"keyId":    map[string]any{"type": "string", "nullable": true}}},
	"Key": map[string]any{"type": "object", "required": []string{"keyId", "algo", "publicKey", "status", "jwk"},
		"properties": map[string]any{"keyId": openapi.Str, "algo": openapi.Str, "publicKey": openapi.Str,
			"status":    map[string]any{"type": "string", "enum": []string{"active", "retired"}},
			"createdAt": openapi.DateTime, "retiredAt": map[string]any{"type": "string", "format": "date-time", "nullable": true},
			"previousKeyId": map[string]any{"type": "string", "nullable": true},
			"jwk": map[string]any{"type": "object", "required": []string{"kty", "crv", "x"}, "properties": map[string]any{
				"kty": map[string]any{"type": "string", "enum": []string{"OKP"}},
				"crv": map[string]any{"type": "string", "enum": []string{"Ed25519"}},
				"x":   openapi.Str, "kid": openapi.Str, "alg": openapi.Str, "use": openapi.Str}}}},
}
