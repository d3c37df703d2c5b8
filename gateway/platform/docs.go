package platform

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"html/template"
	"net/http"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/htmlpage"
	"github.com/fintech/platform/gateway/server"
)

// RedocVersion is the version of the vendored Redoc standalone bundle
// (npm package redoc, bundles/redoc.standalone.js; `make redoc` refreshes it).
const RedocVersion = "2.5.4"

// redocJS is the renderer of the API reference page, served from the
// platform's own origin: the page loads nothing from elsewhere.
//
//go:embed assets/redoc.standalone.js
var redocJS []byte

// redocCDNLogo is the one resource the bundle loads from another origin: the
// Redocly logo beside the "API docs by Redocly" credit. The served bundle
// shows an empty inline SVG instead, so the page loads nothing from
// elsewhere (the credit and its link stay).
const redocCDNLogo = "https://cdn.redoc.ly/redoc/logo-mini.svg"

// redocServed is the bundle as served: the vendored file with the logo's
// URL replaced.
var redocServed = bytes.Replace(redocJS, []byte(redocCDNLogo),
	[]byte(`data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E`), 1)

// redocStyleHashes are the SHA-256 of the two <style> elements the bundle
// inserts when it loads, before Redoc.init hands it the nonce: an empty one,
// then its scrollbar CSS. They change with the bundle; the /docs browser
// test reports a new hash.
var redocStyleHashes = []string{
	"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
	"QMIg+bpjm3JdElJ388KYke01izlUW0UoNOeKjpMxdgc=",
}

// redocPath is the asset's URL; the version in it lets browsers cache it
// for good.
const redocPath = docsPath + "/redoc-" + RedocVersion + ".standalone.js"

// docsPage renders the complete document (CompletePath) with Redoc. The page's scripts run by
// its nonce; Redoc gets the nonce too and puts it on the styles it injects.
var docsPage = template.Must(template.New("docs").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Fintech platform API reference</title>
<link rel="icon" href="data:,">
<style nonce="{{.Nonce}}">body { margin: 0; } a.guides { position: fixed; top: 8px; right: 16px; z-index: 10; padding: 4px 10px; border-radius: 4px; background: #32329f; color: #fff; font: 14px system-ui, sans-serif; text-decoration: none; }</style>
</head>
<body>
<a class="guides" href="/docs/guides">Guides</a>
<div id="redoc"></div>
<script nonce="{{.Nonce}}" src="{{.Script}}"></script>
<script nonce="{{.Nonce}}">
Redoc.init({{.Spec}}, { nonce: {{.Nonce}}, expandResponses: "200,201", sortPropsAlphabetically: false }, document.getElementById("redoc"));
</script>
</body>
</html>
`))

// docsPolicy is the page's CSP: its nonce'd scripts and styles, the
// bundle's fixed load-time styles by hash, fetches of the document from this
// origin, Redoc's blob: search worker and its data: icons.
var docsPolicy = htmlpage.Policy{Connect: true, ImgSelf: true, ImgData: true, WorkerBlob: true, StyleHashes: redocStyleHashes}

// docsPath is the API reference page.
const docsPath = "/docs"

func registerDocs(r server.Router) {
	server.Get(r, docsPath, server.Op[server.NoRequest]{
		Summary: "API reference: the complete document rendered by Redoc", Public: true,
		Description: "The HTML API reference of every module (" + CompletePath + "), one section per module. Read-only.",
		Handle: func(c *fiber.Ctx, _ *server.NoRequest) error {
			return htmlpage.Render(c, fiber.StatusOK, docsPage, docsPolicy, func(nonce string) any {
				return map[string]string{"Nonce": nonce, "Script": redocPath, "Spec": CompletePath}
			})
		},
		Responses: []server.Response{{Status: http.StatusOK, Description: "the HTML page", ContentType: "text/html"}},
	})
	server.Get(r, redocPath, server.Op[server.NoRequest]{
		Summary:     "The vendored Redoc bundle of the API reference page",
		Description: "The Redoc script of /docs, served from this origin and cached for good. Read-only.",
		Public:      true, Handle: serveRedoc,
		Responses: []server.Response{{Status: http.StatusOK, Description: "the script (gzip-encoded when the client accepts it)", ContentType: "text/javascript"}},
	})
}

// serveRedoc answers the vendored bundle, cached for good.
func serveRedoc(c *fiber.Ctx, _ *server.NoRequest) error {
	c.Set(fiber.HeaderContentType, "text/javascript; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderVary, fiber.HeaderAcceptEncoding)
	if gz := redocGzip(); gz != nil && strings.Contains(c.Get(fiber.HeaderAcceptEncoding), "gzip") {
		c.Set(fiber.HeaderContentEncoding, "gzip")
		return c.Send(gz)
	}
	return c.Send(redocServed)
}

// redocGzip is the bundle gzipped once, on first use (a third of its size);
// nil if compressing failed, and then the plain bundle is served.
var redocGzip = sync.OnceValue(func() []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(redocServed); err != nil {
		return nil
	}
	if err := zw.Close(); err != nil {
		return nil
	}
	return buf.Bytes()
})
