package build

import (
	"encoding/json"
	"errors"
	"html/template"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/htmlpage"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/storage/build"
	"github.com/fintech/platform/storage/postgres"
)

// pageListMax is how many vacancies an HTML list page shows.
const pageListMax = 100

// formatMinor shows an amount of minor units as major units with two
// decimals, e.g. 12345 KZT → "123.45 KZT", with integer arithmetic only.
func formatMinor(amount int64, currency string) string {
	return strconv.FormatInt(amount/100, 10) + "." + strconv.FormatInt(100+amount%100, 10)[1:] + " " + currency
}

// majorUnits is the amount in major units as a JSON number ("123.45").
func majorUnits(amount int64) json.Number {
	return json.Number(strconv.FormatInt(amount/100, 10) + "." + strconv.FormatInt(100+amount%100, 10)[1:])
}

// jobPosting is the schema.org JobPosting of a vacancy, for search engines.
func (h *Handlers) jobPosting(v build.Vacancy) map[string]any {
	org := map[string]any{"@type": "Organization", "name": v.ProjectName,
		"url": h.cfg.PublicBaseURL + PagePrefix + "/projects/" + v.ProjectID}
	return map[string]any{
		"@context":           "https://schema.org",
		"@type":              "JobPosting",
		"title":              v.Title,
		"description":        v.Description,
		"datePosted":         rfc3339(v.CreatedAt),
		"validThrough":       rfc3339(v.ExpiresAt),
		"url":                h.vacancyURL(v.ID),
		"identifier":         map[string]any{"@type": "PropertyValue", "name": "build", "value": v.ID},
		"hiringOrganization": org,
		"jobLocation": map[string]any{"@type": "Place", "address": map[string]any{
			"@type": "PostalAddress", "addressLocality": v.City}},
		"baseSalary": map[string]any{"@type": "MonetaryAmount", "currency": v.SalaryCurrency,
			"value": map[string]any{"@type": "QuantitativeValue", "value": majorUnits(v.Salary), "unitText": "MONTH"}},
		"skills": strings.Join(v.Skills, ", "),
	}
}

type pageLink struct {
	Href, Text, Meta string
}

type pageData struct {
	Nonce     string
	Title     string
	Canonical string
	JSONLD    template.JS
	Vacancy   *vacancyView
	Heading   string
	Intro     string
	ExtLink   string
	Links     []pageLink
	Empty     string
}

type vacancyView struct {
	Title, Description, Salary, City, Skills, Project, ProjectHref, Posted, Expires string
}

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<link rel="canonical" href="{{.Canonical}}">
{{if .JSONLD}}<script type="application/ld+json" nonce="{{.Nonce}}">{{.JSONLD}}</script>
{{end}}<style nonce="{{.Nonce}}">
body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b;line-height:1.5}
h1{font-size:1.6rem;margin-bottom:.25rem}.meta{color:#555}.desc{white-space:pre-wrap}ul{padding-left:1.2rem}
</style>
</head>
<body>
{{with .Vacancy}}<article>
<h1 id="title">{{.Title}}</h1>
<p class="meta"><span id="city">{{.City}}</span> · <span id="salary">{{.Salary}}</span> · <a id="project" href="{{.ProjectHref}}">{{.Project}}</a></p>
<p class="meta">Skills: <span id="skills">{{.Skills}}</span></p>
<div class="desc" id="description">{{.Description}}</div>
<p class="meta">Posted <time>{{.Posted}}</time> · open until <time>{{.Expires}}</time></p>
</article>{{else}}<h1 id="title">{{.Heading}}</h1>
{{if .Intro}}<p class="desc" id="intro">{{.Intro}}</p>{{end}}
{{if .ExtLink}}<p><a rel="nofollow noopener" href="{{.ExtLink}}">{{.ExtLink}}</a></p>{{end}}
{{if .Links}}<ul id="vacancies">{{range .Links}}<li><a href="{{.Href}}">{{.Text}}</a> <span class="meta">{{.Meta}}</span></li>{{end}}</ul>{{else}}<p>{{.Empty}}</p>{{end}}
{{end}}</body>
</html>
`))

// renderPage writes an HTML page under the strict CSP of htmlpage: nothing
// loads from anywhere, and only the page's own nonce'd style and JSON-LD are
// allowed.
func renderPage(c *fiber.Ctx, d pageData) error {
	return htmlpage.Render(c, fiber.StatusOK, pageTemplate, htmlpage.Policy{ImgSelf: true}, func(nonce string) any {
		d.Nonce = nonce
		return d
	})
}

// vacancyPage is the public page of an open vacancy, the vacancy's url.
func (h *Handlers) vacancyPage(c *fiber.Ctx, req *idPath) error {
	v, err := h.store.OpenVacancy(c.UserContext(), req.id(), h.now().UTC())
	if errors.Is(err, postgres.ErrNotFound) {
		return errVacancyNotFound()
	}
	if err != nil {
		return err
	}
	ld, err := json.Marshal(h.jobPosting(v)) // escapes <, > and & as \u003c…: safe inside <script>
	if err != nil {
		return err
	}
	return renderPage(c, pageData{
		Title: v.Title + " · " + v.City, Canonical: h.vacancyURL(v.ID), JSONLD: template.JS(ld),
		Vacancy: &vacancyView{
			Title: v.Title, Description: v.Description, Salary: formatMinor(v.Salary, v.SalaryCurrency), City: v.City,
			Skills: strings.Join(v.Skills, ", "), Project: v.ProjectName,
			ProjectHref: PagePrefix + "/projects/" + v.ProjectID, Posted: rfc3339(v.CreatedAt), Expires: rfc3339(v.ExpiresAt),
		},
	})
}

func (h *Handlers) links(vs []build.Vacancy) []pageLink {
	out := make([]pageLink, len(vs))
	for i, v := range vs {
		out[i] = pageLink{Href: PagePrefix + "/vacancies/" + v.ID, Text: v.Title,
			Meta: v.City + " · " + formatMinor(v.Salary, v.SalaryCurrency)}
	}
	return out
}

// indexPage lists the newest open vacancies.
func (h *Handlers) indexPage(c *fiber.Ctx, _ *server.NoRequest) error {
	vs, _, err := h.store.ListOpen(c.UserContext(), build.Filter{}, h.now().UTC(), pageListMax, 0)
	if err != nil {
		return err
	}
	return renderPage(c, pageData{Title: "Open vacancies", Canonical: h.cfg.PublicBaseURL + PagePrefix + "/vacancies",
		Heading: "Open vacancies", Links: h.links(vs), Empty: "No open vacancies right now."})
}

// projectPage shows a project and its open vacancies.
func (h *Handlers) projectPage(c *fiber.Ctx, req *idPath) error {
	id := req.id()
	p, err := h.store.Project(c.UserContext(), id)
	if errors.Is(err, postgres.ErrNotFound) {
		return errProjectNotFound()
	}
	if err != nil {
		return err
	}
	vs, err := h.store.OpenOfProject(c.UserContext(), id, h.now().UTC(), pageListMax)
	if err != nil {
		return err
	}
	d := pageData{Title: p.Name, Canonical: h.cfg.PublicBaseURL + PagePrefix + "/projects/" + p.ID,
		Heading: p.Name, Intro: strings.TrimSpace(p.City + "\n" + p.Description), Links: h.links(vs),
		Empty: "This project has no open vacancies right now."}
	if httpURL(p.URL) {
		d.ExtLink = p.URL
	}
	return renderPage(c, d)
}

// employerPage lists an employer's open vacancies.
func (h *Handlers) employerPage(c *fiber.Ctx, req *idPath) error {
	id := req.id()
	vs, err := h.store.OpenOfEmployer(c.UserContext(), id, h.now().UTC(), pageListMax)
	if err != nil {
		return err
	}
	if len(vs) == 0 {
		return errEmployerNotFound()
	}
	return renderPage(c, pageData{Title: "Vacancies of employer " + id, Canonical: h.cfg.PublicBaseURL + PagePrefix + "/employers/" + id,
		Heading: "Open vacancies", Links: h.links(vs)})
}
