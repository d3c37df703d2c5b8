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
	// ImgData allows data: images (the inline icons of a vendored renderer).
	ImgData bool
	// WorkerBlob allows workers built from blob: URLs (the search worker of
	// the API reference page).
	WorkerBlob bool
	// StyleHashes allow inline <style> elements by the base64 SHA-256 of
	// their text: the fixed styles a vendored script inserts without the
	// nonce.
	StyleHashes []string
}

// CSP is the Content-Security-Policy header value for nonce.
func (p Policy) CSP(nonce string) string {
	style := "style-src 'nonce-" + nonce + "'"
	for _, h := range p.StyleHashes {
		style += " 'sha256-" + h + "'"
	}
	parts := []string{"default-src 'none'", "script-src 'nonce-" + nonce + "'", style,
		"base-uri 'none'", "frame-ancestors 'none'"}
	if p.Connect {
		parts = append(parts, "connect-src 'self'")
	}
	var img []string
	if p.ImgSelf {
		img = append(img, "'self'")
	}
	if p.ImgData {
		img = append(img, "data:")
	}
	if len(img) > 0 {
		parts = append(parts, "img-src "+strings.Join(img, " "))
	}
	if p.WorkerBlob {
		parts = append(parts, "worker-src blob:")
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
