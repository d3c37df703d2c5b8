// Package htmlpage renders the platform's HTML pages (checkout, pay page,
// admin stream, vacancy pages) under one strict Content-Security-Policy: a
// fresh nonce per response, and only the page's own nonce'd scripts and
// styles run, so text a user supplied can never execute.
package htmlpage

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"html/template"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// Policy names what a page may do beyond running its own nonce'd script
// and style.
type Policy struct {
	// Connect allows fetch and EventSource to this origin.
	Connect bool
	// FormSelf allows forms to post to this origin.
	FormSelf bool
	// ImgSelf allows images from this origin.
	ImgSelf bool
}

// CSP is the Content-Security-Policy header value for nonce.
func (p Policy) CSP(nonce string) string {
	parts := []string{"default-src 'none'", "script-src 'nonce-" + nonce + "'", "style-src 'nonce-" + nonce + "'",
		"base-uri 'none'", "frame-ancestors 'none'"}
	if p.Connect {
		parts = append(parts, "connect-src 'self'")
	}
	if p.ImgSelf {
		parts = append(parts, "img-src 'self'")
	}
	if p.FormSelf {
		parts = append(parts, "form-action 'self'")
	} else {
		parts = append(parts, "form-action 'none'")
	}
	return strings.Join(parts, "; ")
}

// NewNonce draws a CSP nonce (128 random bits).
func NewNonce() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("draw CSP nonce: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// Render executes tmpl with the data that data builds around a fresh nonce
// and writes it with the policy's CSP and the usual hardening headers.
func Render(c *fiber.Ctx, status int, tmpl *template.Template, p Policy, data func(nonce string) any) error {
	nonce, err := NewNonce()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, data(nonce)); err != nil {
		return fmt.Errorf("render %s: %w", tmpl.Name(), err)
	}
	c.Set(fiber.HeaderContentSecurityPolicy, p.CSP(nonce))
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	c.Set(fiber.HeaderReferrerPolicy, "no-referrer")
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Status(status).Send(buf.Bytes())
}
