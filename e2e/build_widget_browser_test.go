package e2e

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

const buildXSSTitle = `<img src=x onerror=alert(1)>`

// TestBuildWidgetBrowser embeds the widget in a plain third-party page
// served from another origin and loads it in headless Chromium (the
// chromiumPath of the pay-page test): the widget fetches the partner API
// across origins with its key, renders the cards newest first, honours
// data-limit, data-skill and data-vacancy-id, shows a hostile title as text
// (no <img> element, no dialog) and links only to the vacancies' pages.
// A missing Chromium fails the test: it is installed by `make test`.
func TestBuildWidgetBrowser(t *testing.T) {
	p := shared(t)
	emp := p.Register(t, "build-widget")
	proj := buildProject(t, p, emp, "widgetcorp")
	city := buildCity("Widgetown")
	plain := buildVacancy(t, p, emp, proj, map[string]any{"title": "Widget role", "city": city, "skills": []string{"Go"}, "salary": 1_000_005})
	evil := buildVacancy(t, p, emp, proj, map[string]any{"title": buildXSSTitle, "city": city, "skills": []string{`<b onmouseover=alert(2)>x</b>`},
		"description": `"><script>alert(3)</script> javascript:alert(4)`})
	_, key := buildKey(t, p, emp)
	// Seven vacancies in another city, from two employers (plans of 5), for
	// the default of six cards.
	many := buildCity("Manyville")
	emp2 := p.Register(t, "build-widget-2")
	proj2 := buildProject(t, p, emp2, "widgetcorp2")
	for i := 0; i < 7; i++ {
		owner, project := emp, proj
		if i >= 2 {
			owner, project = emp2, proj2
		}
		buildVacancy(t, p, owner, project, map[string]any{"title": fmt.Sprintf("Many %d", i), "city": many})
	}

	attr := html.EscapeString
	partner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Partner jobs</title></head>
<body>
<h1>Jobs on a partner site</h1>
<div id="list" data-build-widget data-key="%[1]s" data-city="%[2]s"></div>
<div id="limited" data-build-widget data-key="%[1]s" data-city="%[2]s" data-limit="1"></div>
<div id="skill" data-build-widget data-key="%[1]s" data-city="%[2]s" data-skill="GO"></div>
<div id="one" data-build-widget data-key="%[1]s" data-vacancy-id="%[3]s"></div>
<div id="default" data-build-widget data-key="%[1]s" data-city="%[5]s"></div>
<div id="badkey" data-build-widget data-key="qb_pk_not-a-real-key-000000000000"></div>
<script defer src="%[4]s/api/build/public/widget.js"></script>
</body></html>`, attr(key), attr(city), attr(plain["id"].(string)), attr(p.BaseURL), attr(many))
	}))
	defer partner.Close()
	if strings.HasPrefix(partner.URL, p.BaseURL) {
		t.Fatalf("the partner page must be on another origin: %s vs %s", partner.URL, p.BaseURL)
	}

	ctx, dialogs := headlessBrowser(t)

	if err := chromedp.Do(ctx, chromedp.Navigate(partner.URL),
		chromedp.WaitReady(`#list[data-build-state="ready"]`),
		chromedp.WaitReady(`#limited[data-build-state="ready"]`),
		chromedp.WaitReady(`#skill[data-build-state="ready"]`),
		chromedp.WaitReady(`#one[data-build-state="ready"]`),
		chromedp.WaitReady(`#default[data-build-state="ready"]`),
		chromedp.WaitReady(`#badkey[data-build-state="error"]`),
	); err != nil {
		select {
		case m := <-dialogs:
			t.Fatalf("a JavaScript dialog opened (%q): vacancy text was executed", m)
		default:
		}
		states, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('[data-build-widget]')).map(e => e.id + '=' + e.getAttribute('data-build-state'))`))
		t.Fatalf("widgets did not render: %v (states %v)", err, states)
	}
	eval := func(expr string) []string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](expr))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		return v
	}
	titles := func(id string) []string {
		return eval(`Array.from(document.querySelectorAll('#` + id + ` .build-widget-title')).map(e => e.textContent)`)
	}
	if got := titles("list"); strings.Join(got, "|") != buildXSSTitle+"|Widget role" {
		t.Fatalf("list titles %q, want the hostile title as text, then Widget role", got)
	}
	if got := titles("limited"); len(got) != 1 || got[0] != buildXSSTitle {
		t.Fatalf("data-limit=1 rendered %q", got)
	}
	if got := titles("skill"); len(got) != 1 || got[0] != "Widget role" {
		t.Fatalf("data-skill=GO rendered %q", got)
	}
	if got := titles("default"); strings.Join(got, ",") != "Many 6,Many 5,Many 4,Many 3,Many 2,Many 1" {
		t.Fatalf("default data-limit rendered %q, want the newest six", got)
	}
	if got := titles("one"); len(got) != 1 || got[0] != "Widget role" {
		t.Fatalf("data-vacancy-id rendered %q", got)
	}
	if n := eval(`Array.from(document.querySelectorAll('img, script:not([src]), b, [onerror], [onmouseover]')).map(e => e.outerHTML)`); len(n) != 0 {
		t.Fatalf("vacancy text became markup: %q", n)
	}
	hrefs := eval(`Array.from(document.querySelectorAll('#list a')).map(a => a.href)`)
	if len(hrefs) != 2 || hrefs[0] != evil["url"] || hrefs[1] != plain["url"] {
		t.Fatalf("links %q, want the vacancy pages %s and %s", hrefs, evil["url"], plain["url"])
	}
	meta := eval(`Array.from(document.querySelectorAll('#one .build-widget-meta')).map(e => e.textContent)`)
	if len(meta) != 1 || !strings.Contains(meta[0], "10000.05 KZT") || !strings.Contains(meta[0], city) {
		t.Fatalf("meta %q", meta)
	}
	skills := eval(`Array.from(document.querySelectorAll('#list .build-widget-skill')).map(e => e.textContent)`)
	if len(skills) == 0 || skills[0] != `<b onmouseover=alert(2)>x</b>` {
		t.Fatalf("skills %q", skills)
	}
	if x := eval(`[String(typeof window.__xss)]`); x[0] != "undefined" {
		t.Fatalf("unexpected global %v", x)
	}
	select {
	case m := <-dialogs:
		t.Fatalf("a JavaScript dialog opened (%q): vacancy text was executed", m)
	default:
	}
}
