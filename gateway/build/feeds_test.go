package build

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/storage/build"
)

const hostile = `<script>alert(1)</script>"><img src=x onerror=alert(2)> & javascript:alert(3)`

func hostileVacancy(id string, at time.Time) build.Vacancy {
	return build.Vacancy{ID: id, ProjectID: "p1", ProjectName: hostile, EmployerID: "e1", Title: hostile, Description: hostile,
		Salary: 12345, SalaryCurrency: "KZT", Skills: []string{hostile}, City: "Almaty", Status: "OPEN",
		CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
}

func TestSitemapIndexBeyondTheCap(t *testing.T) {
	t.Parallel()
	var entries []build.SitemapEntry
	for i := 0; i < 7; i++ {
		entries = append(entries, build.SitemapEntry{Kind: "vacancy", ID: fmt.Sprintf("v%d", i), LastMod: testNow})
	}
	type set struct {
		XMLName xml.Name
		NS      string   `xml:"xmlns,attr"`
		URLs    []string `xml:"url>loc"`
		Maps    []string `xml:"sitemap>loc"`
	}
	parse := func(body string) set {
		var s set
		if err := xml.Unmarshal([]byte(body), &s); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		return s
	}
	// 1 product page + 7 vacancies with a cap of 3: an index of 3 sitemaps.
	srv := newTestServer(t, &fakeStore{entries: entries}, Config{SitemapMax: 3})
	status, body, _ := get(t, srv, "/sitemap.xml", nil)
	idx := parse(body)
	if status != http.StatusOK || idx.XMLName.Local != "sitemapindex" || idx.NS != SitemapNS || len(idx.Maps) != 3 ||
		idx.Maps[2] != "https://jobs.example/sitemap.xml?page=3" {
		t.Fatalf("index %d %+v", status, idx)
	}
	var all []string
	for i := 1; i <= 3; i++ {
		status, body, _ := get(t, srv, fmt.Sprintf("/sitemap.xml?page=%d", i), nil)
		s := parse(body)
		if status != http.StatusOK || s.XMLName.Local != "urlset" || len(s.URLs) > 3 {
			t.Fatalf("page %d: %d %+v", i, status, s)
		}
		all = append(all, s.URLs...)
	}
	if len(all) != 8 || all[0] != "https://jobs.example/build/vacancies" || all[7] != "https://jobs.example/build/vacancies/v6" {
		t.Fatalf("pages hold %v", all)
	}
	for _, q := range []string{"0", "4", "-1", "x", "1.0", "%201"} {
		if status, _, _ := get(t, srv, "/sitemap.xml?page="+q, nil); status != http.StatusNotFound {
			t.Errorf("page=%q: %d", q, status)
		}
	}
	// At the cap: a plain urlset.
	srv = newTestServer(t, &fakeStore{entries: entries[:2]}, Config{SitemapMax: 3})
	if _, body, _ := get(t, srv, "/sitemap.xml", nil); parse(body).XMLName.Local != "urlset" || len(parse(body).URLs) != 3 {
		t.Fatalf("at the cap: %s", body)
	}
}

func TestRSSEscapesUntrustedText(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, &fakeStore{open: []build.Vacancy{hostileVacancy("v1", testNow)}}, Config{})
	status, body, h := get(t, srv, "/api/build/public/rss/vacancies.xml", nil)
	if status != http.StatusOK || !strings.HasPrefix(h["Content-Type"][0], "application/rss+xml") {
		t.Fatalf("%d %v", status, h)
	}
	var doc rssDoc
	if err := xml.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	it := doc.Channel.Items[0]
	// After XML decoding a reader holds entity-encoded HTML: no markup.
	for _, s := range []string{it.Title, it.Description, it.Categories[0]} {
		if strings.ContainsAny(s, "<>") || !strings.Contains(s, "&lt;script&gt;") {
			t.Fatalf("field after XML decoding %q", s)
		}
	}
	if it.Link != "https://jobs.example/build/vacancies/v1" || it.PubDate != "Sun, 01 Mar 2026 12:00:00 +0000" {
		t.Fatalf("item %+v", it)
	}
}

func TestVacancyPageEscapes(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, &fakeStore{open: []build.Vacancy{hostileVacancy("v1", testNow)}}, Config{})
	status, body, h := get(t, srv, "/build/vacancies/v1", nil)
	if status != http.StatusOK || !strings.Contains(h["Content-Security-Policy"][0], "script-src 'nonce-") {
		t.Fatalf("%d %v", status, h)
	}
	if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img") || strings.Count(body, "</script>") != 1 {
		t.Fatalf("page carries markup from the data:\n%s", body)
	}
	if status, _, _ := get(t, srv, "/build/vacancies/nope", nil); status != http.StatusNotFound {
		t.Fatalf("unknown: %d", status)
	}
}
