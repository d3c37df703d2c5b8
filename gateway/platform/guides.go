package platform

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/htmlpage"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
)

// guideFiles are the guides: Markdown files named NN-<slug>.md, served in
// the order of NN at /docs/guides/<slug>. Every ```sh and ```ts block in
// them is run against the real binary by e2e/guides_test.go.
//
//go:embed guides/*.md
var guideFiles embed.FS

// GuidesPath is the index of the guides.
const GuidesPath = docsPath + "/guides"

// Guide is one rendered guide.
type Guide struct {
	Slug, Title string
	// Source is the Markdown as written.
	Source []byte
	HTML   template.HTML
}

var guideName = regexp.MustCompile(`^[0-9]{2}-([a-z0-9-]+)\.md$`)

// LoadGuides reads and renders the embedded guides, in order. Goldmark
// renders no raw HTML from the Markdown (it is not given WithUnsafe), so a
// guide cannot bring script or style past the page's CSP.
func LoadGuides() ([]Guide, error) {
	entries, err := fs.ReadDir(guideFiles, "guides")
	if err != nil {
		return nil, fmt.Errorf("read guides: %w", err)
	}
	md := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithParserOptions(parser.WithAutoHeadingID()))
	var out []Guide
	for _, e := range entries {
		m := guideName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("guide %s: name is not NN-<slug>.md", e.Name())
		}
		src, err := guideFiles.ReadFile(path.Join("guides", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read guide %s: %w", e.Name(), err)
		}
		title, ok := strings.CutPrefix(strings.SplitN(string(src), "\n", 2)[0], "# ")
		if !ok {
			return nil, fmt.Errorf("guide %s: the first line is not a # title", e.Name())
		}
		var buf bytes.Buffer
		if err := md.Convert(src, &buf); err != nil {
			return nil, fmt.Errorf("render guide %s: %w", e.Name(), err)
		}
		out = append(out, Guide{Slug: m[1], Title: title, Source: src, HTML: template.HTML(buf.String())}) //nolint:gosec // goldmark escapes; raw HTML is omitted
	}
	return out, nil // fs.ReadDir sorts by name, so by NN
}

// guidesOnce renders the guides once: they are part of the binary.
var guidesOnce = sync.OnceValues(LoadGuides)

var guidePage = template.Must(template.New("guide").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · Fintech platform guides</title>
<link rel="icon" href="data:,">
<style nonce="{{.Nonce}}">
body { margin: 0; font: 16px/1.55 system-ui, sans-serif; color: #1d2330; display: flex; }
nav { flex: 0 0 15rem; padding: 1.5rem 1rem; background: #f4f6fa; min-height: 100vh; box-sizing: border-box; }
nav a { display: block; padding: .2rem 0; color: #2b4fb8; text-decoration: none; }
nav a.here { font-weight: 600; color: #1d2330; }
main { flex: 1; max-width: 52rem; padding: 1.5rem 2.5rem; }
pre { background: #1d2330; color: #e8ecf4; padding: .9rem 1rem; overflow-x: auto; border-radius: 6px; font-size: 14px; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
p code, li code, td code { background: #eef1f6; padding: 0 .25rem; border-radius: 3px; }
table { border-collapse: collapse; } th, td { border: 1px solid #d7dce5; padding: .3rem .6rem; text-align: left; vertical-align: top; }
</style>
</head>
<body>
<nav>
<a href="/docs">API reference</a>
<a href="/docs/guides"{{if not .Slug}} class="here"{{end}}>Guides</a>
{{range .Guides}}<a href="/docs/guides/{{.Slug}}"{{if eq .Slug $.Slug}} class="here"{{end}}>{{.Title}}</a>
{{end}}</nav>
<main>
{{if .Body}}{{.Body}}{{else}}<h1>Guides</h1>
<p>How to use the platform's API, from a first transfer to webhooks and the event stream. The reference of every operation is at <a href="/docs">/docs</a>, its document at <a href="/api/platform/openapi.full.json">/api/platform/openapi.full.json</a>.</p>
<ul>{{range .Guides}}<li><a href="/docs/guides/{{.Slug}}">{{.Title}}</a></li>{{end}}</ul>{{end}}
</main>
</body>
</html>
`))

// guidePolicy allows nothing beyond the page's own nonce'd style.
var guidePolicy = htmlpage.Policy{}

type guideRequest struct {
	Slug string `path:"slug" json:"-" maxLength:"64" description:"the guide, e.g. getting-started"`
}

// registerGuides mounts the guide pages.
func registerGuides(r server.Router) {
	server.Get(r, GuidesPath, server.Op[server.NoRequest]{
		Summary: "Guides: the index", Public: true,
		Description: "The HTML index of the guides (getting started, authentication, errors, idempotency, pagination, rate limits, webhooks, the event stream, analytics). Read-only.",
		Handle:      func(c *fiber.Ctx, _ *server.NoRequest) error { return renderGuide(c, "") },
		Responses:   []server.Response{{Status: http.StatusOK, Description: "the HTML page", ContentType: "text/html"}},
	})
	server.Get(r, GuidesPath+"/:slug", server.Op[guideRequest]{
		Summary: "Guides: one guide as an HTML page", Public: true,
		Description: "One guide, rendered from the Markdown embedded in the binary; its code blocks run as written against `make run`. Read-only.",
		Handle:      func(c *fiber.Ctx, req *guideRequest) error { return renderGuide(c, req.Slug) },
		Responses: []server.Response{
			{Status: http.StatusOK, Description: "the HTML page", ContentType: "text/html"},
			server.Fails(http.StatusNotFound, "not_found: no such guide"),
		},
	})
}

func renderGuide(c *fiber.Ctx, slug string) error {
	guides, err := guidesOnce()
	if err != nil {
		return err
	}
	data := struct {
		Title, Slug, Nonce string
		Body               template.HTML
		Guides             []Guide
	}{Title: "Guides", Slug: slug, Guides: guides}
	if slug != "" {
		i := slices.IndexFunc(guides, func(g Guide) bool { return g.Slug == slug })
		if i < 0 {
			return apierr.New(http.StatusNotFound, schemas.CodeNotFound, "no such guide; the index is at "+GuidesPath)
		}
		data.Title, data.Body = guides[i].Title, guides[i].HTML
	}
	c.Set(fiber.HeaderCacheControl, "public, max-age=300")
	return htmlpage.Render(c, fiber.StatusOK, guidePage, guidePolicy, func(nonce string) any {
		data.Nonce = nonce
		return data
	})
}
