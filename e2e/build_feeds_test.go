package e2e

import (
	"encoding/json"
	"encoding/xml"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/mmcdole/gofeed"
)

const (
	buildHostileTitle = `<script>alert(1)</script>"><img src=x onerror=alert(2)>`
	buildHostileDesc  = "Apply: javascript:alert(3) <a href=\"javascript:alert(4)\">here</a> </script><script>alert(5)</script> & more"
)

var (
	ldRe  = regexp.MustCompile(`(?s)<script type="application/ld\+json" nonce="([^"]+)">(.*?)</script>`)
	cspRe = regexp.MustCompile(`script-src 'nonce-([^']+)'`)
)

// TestBuildVacancyPage renders a vacancy with hostile text: the page shows
// it as text, its JSON-LD is a JobPosting that parses back to the same text,
// the CSP allows only the page's nonce, and closed or unknown vacancies 404.
func TestBuildVacancyPage(t *testing.T) {
	p := shared(t)
	emp := p.Register(t, "build-page")
	proj := buildProject(t, p, emp, "pagecorp")
	v := buildVacancy(t, p, emp, proj, map[string]any{"title": buildHostileTitle, "description": buildHostileDesc,
		"salary": 12_345, "skills": []string{"<b>Go</b>", "SQL"}})
	r := p.Get(t, "/build/vacancies/"+v["id"].(string), "")
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("page: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	body := string(r.Body)
	for _, bad := range []string{"<script>alert", "<img src=x", `<a href="javascript`, "<b>Go"} {
		if strings.Contains(body, bad) {
			t.Fatalf("page contains raw %q:\n%s", bad, body)
		}
	}
	if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") || !strings.Contains(body, "123.45 KZT") {
		t.Fatalf("page does not show the escaped title and salary:\n%s", body)
	}
	csp := r.Header.Get("Content-Security-Policy")
	cm := cspRe.FindStringSubmatch(csp)
	if cm == nil || !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe-inline") {
		t.Fatalf("CSP %q", csp)
	}
	if n := strings.Count(body, "<script"); n != 1 {
		t.Fatalf("page has %d script elements, want only the JSON-LD", n)
	}
	m := ldRe.FindStringSubmatch(body)
	if m == nil || m[1] != cm[1] {
		t.Fatalf("JSON-LD with the CSP nonce not found:\n%s", body)
	}
	var ld map[string]any
	if err := json.Unmarshal([]byte(m[2]), &ld); err != nil {
		t.Fatalf("JSON-LD does not parse: %v\n%s", err, m[2])
	}
	if strings.ContainsAny(m[2], "<>") {
		t.Fatalf("JSON-LD carries raw < or >: %s", m[2])
	}
	loc, _ := ld["jobLocation"].(map[string]any)
	addr, _ := loc["address"].(map[string]any)
	org, _ := ld["hiringOrganization"].(map[string]any)
	sal, _ := ld["baseSalary"].(map[string]any)
	val, _ := sal["value"].(map[string]any)
	if ld["@context"] != "https://schema.org" || ld["@type"] != "JobPosting" || ld["title"] != buildHostileTitle ||
		ld["description"] != buildHostileDesc || ld["datePosted"] != v["createdAt"] || ld["validThrough"] != v["expiresAt"] ||
		addr["addressLocality"] != "Almaty" || org["name"] != "pagecorp" || sal["currency"] != "KZT" || val["value"] != 123.45 {
		t.Fatalf("JSON-LD %v", ld)
	}

	if r := p.Get(t, "/build/projects/"+proj, ""); r.Status != http.StatusOK || !strings.Contains(string(r.Body), "/build/vacancies/"+v["id"].(string)) ||
		strings.Contains(string(r.Body), "<script>alert") {
		t.Fatalf("project page: %d %s", r.Status, r.Body)
	}
	if r := p.Get(t, "/build/employers/"+emp.ID, ""); r.Status != http.StatusOK || !strings.Contains(string(r.Body), v["id"].(string)) {
		t.Fatalf("employer page: %d %s", r.Status, r.Body)
	}
	for _, path := range []string{"/build/vacancies/nope", "/build/vacancies/%3Cscript%3E", "/build/projects/nope", "/build/employers/nope"} {
		if r := p.Get(t, path, ""); r.Status != http.StatusNotFound {
			t.Errorf("%s: %d", path, r.Status)
		}
	}
	p.Post(t, "/api/build/vacancies/"+v["id"].(string)+"/close", emp.Token, nil)
	if r := p.Get(t, "/build/vacancies/"+v["id"].(string), ""); r.Status != http.StatusNotFound {
		t.Fatalf("closed vacancy page: %d", r.Status)
	}
}

// TestBuildRSS parses the feed with a real feed parser: RSS 2.0, newest
// first, filtered by city and skill, hostile text escaped (a reader shows it
// as text), and current data on every request.
func TestBuildRSS(t *testing.T) {
	p := shared(t)
	emp := p.Register(t, "build-rss")
	proj := buildProject(t, p, emp, "rsscorp")
	city := buildCity("Rssville")
	a := buildVacancy(t, p, emp, proj, map[string]any{"title": "First", "city": city, "skills": []string{"Go"}})
	b := buildVacancy(t, p, emp, proj, map[string]any{"title": buildHostileTitle, "description": buildHostileDesc, "city": city, "skills": []string{"Rust"}})

	feed := func(query string) (*gofeed.Feed, string) {
		t.Helper()
		r := p.Get(t, "/api/build/public/rss/vacancies.xml?"+query, "")
		if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/rss+xml") {
			t.Fatalf("rss: %d %s", r.Status, r.Header.Get("Content-Type"))
		}
		f, err := gofeed.NewParser().ParseString(string(r.Body))
		if err != nil {
			t.Fatalf("parse feed: %v\n%s", err, r.Body)
		}
		return f, string(r.Body)
	}
	f, raw := feed("city=" + strings.ToUpper(city))
	if f.FeedType != "rss" || f.FeedVersion != "2.0" || len(f.Items) != 2 {
		t.Fatalf("feed %s %s with %d items:\n%s", f.FeedType, f.FeedVersion, len(f.Items), raw)
	}
	if f.Items[0].Link != b["url"] || f.Items[1].Link != a["url"] || f.Items[0].GUID != b["url"] || f.Items[0].PublishedParsed == nil {
		t.Fatalf("items %+v %+v", f.Items[0], f.Items[1])
	}
	for _, bad := range []string{"<script", "<img", "<a href"} {
		if strings.Contains(raw, bad) {
			t.Fatalf("raw feed carries markup %q:\n%s", bad, raw)
		}
	}
	// A reader decodes the entity-encoded HTML once and shows the text: the
	// hostile title arrives as escaped HTML, never as markup.
	if strings.Contains(f.Items[0].Description, "<script") || !strings.Contains(f.Items[0].Description, "&lt;/script&gt;") {
		t.Fatalf("description as a reader sees it: %q", f.Items[0].Description)
	}
	if strings.Contains(f.Items[0].Title, "<img") && !strings.Contains(f.Items[0].Title, "&lt;img") {
		t.Logf("title as parsed: %q", f.Items[0].Title)
	}
	if f2, _ := feed("city=" + city + "&skill=GO"); len(f2.Items) != 1 || f2.Items[0].Link != a["url"] {
		t.Fatalf("skill filter: %d items", len(f2.Items))
	}
	p.Post(t, "/api/build/vacancies/"+a["id"].(string)+"/close", emp.Token, nil)
	if f3, _ := feed("city=" + city); len(f3.Items) != 1 || f3.Items[0].Link != b["url"] {
		t.Fatalf("feed after close: %d items", len(f3.Items))
	}
	if r := p.Get(t, "/api/build/public/rss/vacancies.xml?city=%00", ""); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("NUL city: %d", r.Status)
	}
}

type buildURLSet struct {
	XMLName xml.Name `xml:"urlset"`
	NS      string   `xml:"xmlns,attr"`
	URLs    []struct {
		Loc     string `xml:"loc"`
		LastMod string `xml:"lastmod"`
	} `xml:"url"`
}

// TestBuildSitemap parses /sitemap.xml: a sitemaps.org urlset of absolute
// URLs under PUBLIC_BASE_URL with W3C datetimes, naming the open vacancy, its
// project, its employer and the product pages, and no closed vacancy; every
// named page answers.
func TestBuildSitemap(t *testing.T) {
	p := shared(t)
	emp := p.Register(t, "build-sitemap")
	proj := buildProject(t, p, emp, "mapcorp")
	open := buildVacancy(t, p, emp, proj, nil)
	closed := buildVacancy(t, p, emp, proj, nil)
	p.Post(t, "/api/build/vacancies/"+closed["id"].(string)+"/close", emp.Token, nil)

	r := p.Get(t, "/sitemap.xml", "")
	if r.Status != http.StatusOK || !strings.Contains(r.Header.Get("Content-Type"), "xml") {
		t.Fatalf("sitemap: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	var set buildURLSet
	if err := xml.Unmarshal(r.Body, &set); err != nil {
		t.Fatalf("sitemap is not a urlset: %v\n%s", err, r.Body)
	}
	if set.NS != "http://www.sitemaps.org/schemas/sitemap/0.9" || len(set.URLs) == 0 || len(set.URLs) > 5000 {
		t.Fatalf("urlset ns %q with %d urls", set.NS, len(set.URLs))
	}
	locs := map[string]bool{}
	for _, u := range set.URLs {
		if !strings.HasPrefix(u.Loc, p.BaseURL+"/") || len(u.Loc) > 2048 {
			t.Fatalf("loc %q is not an absolute URL under PUBLIC_BASE_URL", u.Loc)
		}
		if u.LastMod != "" && !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`).MatchString(u.LastMod) {
			t.Fatalf("lastmod %q", u.LastMod)
		}
		if locs[u.Loc] {
			t.Fatalf("duplicate loc %q", u.Loc)
		}
		locs[u.Loc] = true
	}
	want := []string{open["url"].(string), p.BaseURL + "/build/projects/" + proj, p.BaseURL + "/build/employers/" + emp.ID, p.BaseURL + "/build/vacancies"}
	for _, w := range want {
		if !locs[w] {
			t.Errorf("sitemap lacks %s", w)
		}
		if r := p.Get(t, strings.TrimPrefix(w, p.BaseURL), ""); r.Status != http.StatusOK {
			t.Errorf("%s answers %d", w, r.Status)
		}
	}
	if locs[closed["url"].(string)] {
		t.Errorf("sitemap names the closed vacancy")
	}
	if r := p.Get(t, "/sitemap.xml?page=2", ""); r.Status != http.StatusNotFound {
		t.Errorf("page 2 of a single sitemap: %d", r.Status)
	}
}
