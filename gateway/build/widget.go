package build

import (
	_ "embed"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/server"
)

// widgetJS is the drop-in widget, embedded in the binary.
//
//go:embed static/widget.js
var widgetJS []byte

// widget serves the widget script to any page: cacheable for five minutes,
// loadable cross-origin.
func (h *Handlers) widget(c *fiber.Ctx, _ *server.NoRequest) error {
	c.Set(fiber.HeaderContentType, "text/javascript; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "public, max-age=300")
	c.Set(fiber.HeaderAccessControlAllowOrigin, "*")
	c.Set("Cross-Origin-Resource-Policy", "cross-origin")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	return c.Send(widgetJS)
}
