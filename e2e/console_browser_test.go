package e2e

import (
	"bytes"
	"fmt"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/fintech/platform/e2e/harness"
)

// consoleMemo is a transfer memo with markup: the console must show it as
// text.
const consoleMemo = `<img src=x onerror=alert("xss")><b>bold</b> memo`

// TestConsoleBrowser logs in to /admin as a fiat admin in headless Chromium,
// runs a short transfer load, waits until the transfers chart has drawn the
// load's transfers (from the data routes) and the latest events list shows
// the memo with markup as text, refunds a deposit in needs_review from its
// list, and saves a screenshot whose chart area is checked not to be blank.
// The PNG goes to CONSOLE_SCREENSHOT_DIR when set (else the test's temp
// dir); its path is in the test log.
func TestConsoleBrowser(t *testing.T) {
	p := shared(t)
	admin := p.RegisterEmail(t, harness.FiatAdminEmail)
	payer, payerWallet := commerceFunded(t, p, "console-payer", 1_000_000)
	payee, _ := commerceFunded(t, p, "console-payee", 0)
	review := consoleNeedsReview(t, p, admin)

	ctx, dialogs := headlessBrowser(t, chromedp.WindowSize(1400, 1500))
	var mu sync.Mutex
	var problems []string
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				problems = append(problems, "console."+string(e.Type)+": "+strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Text)
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError || e.Entry.Source == cdplog.EntrySourceSecurity {
				problems = append(problems, "log "+string(e.Entry.Source)+": "+e.Entry.Text)
			}
		case *network.EventRequestWillBeSent:
			if u := e.Request.URL; !strings.HasPrefix(u, p.BaseURL+"/") && !strings.HasPrefix(u, "data:") {
				problems = append(problems, "request off the origin: "+u)
			}
		}
	}); err != nil {
		t.Fatalf("listen: %v", err)
	}
	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			errText, _ := chromedp.Run(ctx, chromedp.Text("#error"))
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("%s: %v (page error %q, problems %v)", what, err, errText, problems)
		}
	}

	step("open the console", chromedp.Navigate(p.BaseURL+"/admin"), chromedp.WaitVisible("#email"))
	step("sign in", chromedp.SendKeys("#email", admin.Email), chromedp.SendKeys("#password", admin.Password),
		chromedp.Click("#login-btn"),
		chromedp.Poll[chromedp.Void](`document.getElementById("status").textContent === "live"`))
	// The charts exist once the first answers came back.
	step("first charts", chromedp.Poll[chromedp.Void](`document.querySelector("#chart-tps canvas") !== null`,
		chromedp.WithPollingTimeout(15*time.Second)))

	// A short load: 4 clients, 40 transfers, one with the memo.
	const transfers = 40
	var wg sync.WaitGroup
	errs := make(chan string, transfers)
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := c; i < transfers; i += 4 {
				memo := fmt.Sprintf("load %d", i)
				if i == 7 {
					memo = consoleMemo
				}
				r := p.Post(t, "/api/fiat/transfer", payer.Token, map[string]any{
					"fromWalletId": payerWallet, "toEmail": payee.Email, "amountKzt": 1_000 + i, "memo": memo})
				if r.Status != http.StatusOK {
					errs <- fmt.Sprintf("transfer %d: %d %s", i, r.Status, r.Body)
				}
			}
		}(c)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}

	// The chart holds the load once the points it drew add up to it (other
	// tests on the shared platform may add more).
	step("the transfers chart draws the load", chromedp.Poll[chromedp.Void](
		fmt.Sprintf(`Number(document.getElementById("chart-tps").dataset.points || 0) >= %d`, transfers),
		chromedp.WithPollingTimeout(30*time.Second)))
	step("the memo is listed", chromedp.Poll[chromedp.Void](
		`document.getElementById("events").textContent.includes("onerror=alert")`, chromedp.WithPollingTimeout(15*time.Second)))
	step("the deposit in needs_review is listed", chromedp.Poll[chromedp.Void](
		`document.getElementById("deposits").textContent.includes(`+jsString(review)+`)`, chromedp.WithPollingTimeout(15*time.Second)))
	step("the slow-requests panel answers", chromedp.Poll[chromedp.Void](
		`document.getElementById("slow-threshold").textContent.includes("answered in 1000 ms or more")`, chromedp.WithPollingTimeout(15*time.Second)))
	// One more round of every chart, so the screenshot has them all.
	step("lag and volume drawn", chromedp.Poll[chromedp.Void](
		`document.querySelector("#chart-lag canvas") !== null && document.querySelector("#chart-volume canvas") !== null && document.querySelectorAll("#parked .row").length > 0`,
		chromedp.WithPollingTimeout(15*time.Second)))

	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dir := t.TempDir()
	if d := os.Getenv("CONSOLE_SCREENSHOT_DIR"); d != "" {
		dir = d
	}
	shotPath := filepath.Join(dir, "admin-console.png")
	if err := os.WriteFile(shotPath, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", shotPath, len(shot))

	step("refund it from the console", chromedp.Evaluate[chromedp.Void](
		`[...document.querySelectorAll("#deposits tr")].find((tr) => tr.textContent.includes(`+jsString(review)+`)).querySelector("button.alt").click()`))
	harness.Eventually(t, 15*time.Second, "the deposit refunded", func() bool {
		r := p.Get(t, "/api/fiat/admin/deposits?status=refunded&limit=200", admin.Token)
		return r.Status == http.StatusOK && strings.Contains(string(r.Body), review)
	})
	// The transfers chart's canvas, as pixels: the series (stroke #2454d6)
	// must rise above its baseline, which a chart of zeros would not.
	chart, err := chromedp.Run(ctx, chromedp.Screenshot("#chart-tps canvas"))
	if err != nil {
		t.Fatalf("chart screenshot: %v", err)
	}
	colours, raised, inked := pixelStats(t, chart, [3]uint8{0x24, 0x54, 0xd6})
	t.Logf("transfers chart: %d distinct colours, %d series pixels above the baseline, %d non-white pixels", colours, raised, inked)
	if colours < 8 || raised < 20 || inked < 400 {
		t.Errorf("the transfers chart looks blank: %d colours, %d series pixels above the baseline, %d non-white pixels", colours, raised, inked)
	}

	// The memo is text: the cell holds the markup as characters, and no
	// element came out of it.
	cellText, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`[...document.querySelectorAll("#events td")].map((td) => td.textContent).find((s) => s.includes("onerror")) || ""`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cellText, `<img src=x onerror=alert(\"xss\")><b>bold</b> memo`) {
		t.Errorf("the memo is not shown as its text: %q", cellText)
	}
	elements, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("img, b").length`))
	if err != nil {
		t.Fatal(err)
	}
	if elements != 0 {
		t.Errorf("the page holds %d <img>/<b> elements: event data was rendered as markup", elements)
	}
	mu.Lock()
	if len(problems) > 0 {
		t.Errorf("console errors, CSP violations or off-origin requests on /admin:\n%s", strings.Join(problems, "\n"))
	}
	problems = nil
	mu.Unlock()

	// A signed-in user who is not a fiat admin gets nothing: the first data
	// call answers 403 and the page says so.
	outsider := p.Register(t, "console-outsider")
	step("sign in as a non-admin", chromedp.Evaluate[chromedp.Void](`sessionStorage.clear()`),
		chromedp.Navigate(p.BaseURL+"/admin"), chromedp.WaitVisible("#email"),
		chromedp.SendKeys("#email", outsider.Email), chromedp.SendKeys("#password", outsider.Password), chromedp.Click("#login-btn"),
		chromedp.Poll[chromedp.Void](`document.getElementById("status").textContent.startsWith("refused (403)")`))
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#events tr, #chart-tps canvas").length`)); err != nil || n != 0 {
		t.Errorf("the non-admin's console shows %d rows or charts (%v)", n, err)
	}
	select {
	case m := <-dialogs:
		t.Errorf("the page opened a JavaScript dialog %q: event data was executed", m)
	default:
	}
	mu.Lock()
	defer mu.Unlock()
	for _, pr := range problems {
		// The refused data calls are logged by the browser, as they should be.
		if !strings.Contains(pr, "status of 403") {
			t.Errorf("problem on the non-admin's /admin: %s", pr)
		}
	}
}

// consoleNeedsReview makes a paid deposit wait in needs_review (its wallet
// was frozen before the payment) and returns its deposit id.
func consoleNeedsReview(t *testing.T, p *harness.Platform, admin harness.User) string {
	t.Helper()
	u := p.Register(t, "console-frozen")
	w := fiatCreateWallet(t, p, u, "KZT")
	r := p.Post(t, "/api/fiat/deposit", u.Token, map[string]any{"walletId": w, "amount": 4_321})
	if r.Status != http.StatusCreated {
		t.Fatalf("deposit: %d %s", r.Status, r.Body)
	}
	dep := r.JSON(t)["depositId"].(string)
	if r := p.Post(t, "/api/fiat/admin/wallets/"+w+"/freeze", admin.Token, map[string]any{}); r.Status != http.StatusOK {
		t.Fatalf("freeze: %d %s", r.Status, r.Body)
	}
	paid := fiatSignedWebhook(t, p, fiatSecret(t, p), fiatEvent(t, "evt_"+harness.NewID(), dep, 4_321, "kzt"))
	if paid.Status != http.StatusOK || paid.JSON(t)["status"] != "needs_review" {
		t.Fatalf("payment to a frozen wallet: %d %s", paid.Status, paid.Body)
	}
	return dep
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// pixelStats decodes a PNG and returns its count of distinct colours, of
// pixels close to stroke lying more than 5 rows above the lowest such pixel
// (the series above its baseline), and of pixels that are not (near) white.
func pixelStats(t *testing.T, shot []byte, stroke [3]uint8) (colours, raised, inked int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("decode screenshot: %v", err)
	}
	seen := map[[3]uint8]bool{}
	near := func(a, b uint8) bool { d := int(a) - int(b); return d > -40 && d < 40 }
	var strokeRows []int
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			c := [3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8)}
			seen[c] = true
			if near(c[0], stroke[0]) && near(c[1], stroke[1]) && near(c[2], stroke[2]) {
				strokeRows = append(strokeRows, y)
			}
			if c[0] < 235 || c[1] < 235 || c[2] < 235 {
				inked++
			}
		}
	}
	baseline := b.Min.Y
	for _, y := range strokeRows {
		baseline = max(baseline, y)
	}
	for _, y := range strokeRows {
		if y < baseline-5 {
			raised++
		}
	}
	return len(seen), raised, inked
}
