package e2e

import (
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// TestDocsPageInBrowser opens the API reference page in headless Chromium:
// the vendored Redoc renders every operation of the complete document
// (/api/platform/openapi.full.json), one section per module tag, under the
// page's strict CSP, with no console error or CSP violation and no request
// leaving the platform's origin.
func TestDocsPageInBrowser(t *testing.T) {
	p := shared(t)

	page := p.Get(t, "/docs", "")
	if page.Status != http.StatusOK || !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("/docs: %d %s %.300s", page.Status, page.Header.Get("Content-Type"), page.Body)
	}
	csp := page.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'nonce-", "worker-src blob:", "connect-src 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP lacks %q: %s", want, csp)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("CSP allows inline or eval: %s", csp)
	}
	if strings.Contains(string(page.Body), "//cdn") || strings.Contains(string(page.Body), "https://") {
		t.Errorf("the page loads something from elsewhere:\n%s", page.Body)
	}

	ctx, _ := headlessBrowser(t, chromedp.WindowSize(1280, 900))
	var mu sync.Mutex
	var problems, offOrigin []string
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning || e.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				problems = append(problems, "console."+string(e.Type)+": "+strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			d := e.ExceptionDetails
			text := d.Text
			if d.Exception != nil {
				text += " " + d.Exception.Description
			}
			problems = append(problems, "exception: "+text)
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError || e.Entry.Source == cdplog.EntrySourceSecurity {
				problems = append(problems, "log "+string(e.Entry.Source)+": "+e.Entry.Text)
			}
		case *network.EventRequestWillBeSent:
			u := e.Request.URL
			if !strings.HasPrefix(u, p.BaseURL+"/") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "blob:"+p.BaseURL) {
				offOrigin = append(offOrigin, u)
			}
		}
	}); err != nil {
		t.Fatalf("listen: %v", err)
	}

	const want = "Transfer to another user by e-mail"
	fail := func(what string, err error) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("docs page: %s: %v\nproblems: %v", what, err, problems)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(p.BaseURL+"/docs"),
		chromedp.Poll[chromedp.Void](`document.body.innerText.includes(`+"`"+want+"`"+`)`)); err != nil {
		fail("render "+want, err)
	}
	if path := os.Getenv("DOCS_SCREENSHOT"); path != "" {
		// For a person to look at the page as it opens (not an assertion).
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			fail("screenshot", err)
		}
		if err := os.WriteFile(path, png, 0o600); err != nil {
			t.Fatal(err)
		}
		// And the first operation, its code samples beside it
		// (<name>-operation.png).
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("[data-section-id^='operation/']").scrollIntoView() === undefined`)); err != nil {
			fail("scroll to the first operation", err)
		}
		if png, err = chromedp.Run(ctx, chromedp.CaptureScreenshot()); err != nil {
			fail("screenshot", err)
		}
		if err := os.WriteFile(strings.TrimSuffix(path, ".png")+"-operation.png", png, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil {
		fail("title", err)
	}
	operations, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("[data-section-id^='operation/']").length`))
	if err != nil {
		fail("count operations", err)
	}
	tags, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("[data-section-id^='tag/']")].map(e => e.getAttribute("data-section-id")).filter(id => !id.includes("/operation/"))`))
	if err != nil {
		fail("list tags", err)
	}
	// The search runs in Redoc's blob: worker: a hit proves the worker is
	// allowed and works.
	if err := chromedp.Do(ctx, chromedp.SendKeys(`input[placeholder="Search..."]`, "transfer"),
		chromedp.Poll[chromedp.Void](`[...document.querySelectorAll("[data-role='search:results']")].some(e => e.innerText.includes(`+"`"+want+"`"+`))`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		fail("search", err)
	}
	if !strings.Contains(title, "API reference") {
		t.Errorf("title = %q", title)
	}
	var doc struct {
		Tags  []struct{ Name string } `json:"tags"`
		Paths map[string]map[string]any
	}
	p.Get(t, "/api/platform/openapi.full.json", "").Decode(t, &doc)
	ops := 0
	for _, item := range doc.Paths {
		ops += len(item)
	}
	if operations != ops {
		t.Errorf("Redoc rendered %d operations; the complete document has %d", operations, ops)
	}
	rendered := map[string]bool{}
	for _, id := range tags {
		rendered[strings.TrimPrefix(id, "tag/")] = true
	}
	for _, tag := range doc.Tags {
		if !rendered[tag.Name] {
			t.Errorf("no section of the %s module among %v", tag.Name, tags)
		}
	}
	if len(doc.Tags) < 15 {
		t.Errorf("the complete document has %d module tags", len(doc.Tags))
	}
	// Let the page's pending work reach the browser before reading the
	// problems (a round trip, not a sleep).
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.readyState`)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("console errors or CSP violations on /docs:\n%s", strings.Join(problems, "\n"))
	}
	if len(offOrigin) > 0 {
		t.Errorf("requests left the platform's origin: %v", offOrigin)
	}
}
