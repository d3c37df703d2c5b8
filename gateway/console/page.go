package console

import (
	_ "embed"
	"html/template"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/htmlpage"
	"github.com/fintech/platform/gateway/server"
)

// UPlotVersion is the version of the vendored uPlot (npm package uplot,
// dist/uPlot.iife.min.js and dist/uPlot.min.css; `make uplot` refreshes
// them).
const UPlotVersion = "1.6.32"

// uplotJS draws the console's charts, served from the platform's own origin:
// the page loads nothing from elsewhere.
//
//go:embed assets/uPlot.iife.min.js
var uplotJS []byte

// uplotCSS is uPlot's stylesheet, inlined into the page's nonce'd style.
//
//go:embed assets/uPlot.min.css
var uplotCSS string

//go:embed static/console.html
var consoleHTML string

// consolePage is the console; its style and scripts carry the response's
// CSP nonce. It holds no data: it asks for an admin login and reads the
// data routes with the token in the Authorization header.
var consolePage = template.Must(template.New("console").Parse(consoleHTML))

// uplotPath is the script's URL; the version in it lets browsers cache it
// for good.
const uplotPath = PagePath + "/uplot-" + UPlotVersion + ".min.js"

// pagePolicy lets the page fetch the data routes from this origin and show
// its empty data: icon; uPlot
// sizes its elements through the CSSOM, which a style-src policy allows.
var pagePolicy = htmlpage.Policy{Connect: true, ImgData: true}

func registerPage(r server.Router) {
	server.Get(r, PagePath, server.Op[server.NoRequest]{
		Summary:     "The admin console page (it holds no data; every data call needs a fiat admin token)",
		Description: "An HTML page under a strict CSP: it signs a fiat admin in and draws the console from the data routes. Read-only.",
		Public:      true,
		Handle: func(c *fiber.Ctx, _ *server.NoRequest) error {
			c.Set(fiber.HeaderCacheControl, "no-store")
			return htmlpage.Render(c, fiber.StatusOK, consolePage, pagePolicy, func(nonce string) any {
				return struct {
					Nonce, Script string
					UPlotCSS      template.CSS
				}{nonce, uplotPath, template.CSS(uplotCSS)}
			})
		},
		Responses: []server.Response{{Status: http.StatusOK, Description: "the HTML page", ContentType: "text/html"}},
	})
	server.Get(r, uplotPath, server.Op[server.NoRequest]{
		Summary:     "The vendored uPlot chart library of the admin console",
		Description: "The uPlot script (MIT), served from the platform's own origin. Read-only.",
		Public:      true,
		Handle: func(c *fiber.Ctx, _ *server.NoRequest) error {
			c.Set(fiber.HeaderContentType, "text/javascript; charset=utf-8")
			c.Set(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
			c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
			return c.Send(uplotJS)
		},
		Responses: []server.Response{{Status: http.StatusOK, Description: "the script", ContentType: "text/javascript"}},
	})
}
