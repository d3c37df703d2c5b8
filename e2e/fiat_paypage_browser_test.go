package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestFiatPayPageBrowser drives the HTML pay page of a payment request in
// headless Chromium: log in with e-mail and password, pick the wallet, pay,
// and see the paid state; the API then reports the request paid. The PNG
// screenshot goes to PAYPAGE_SCREENSHOT_DIR when set (else a temp dir).
func TestFiatPayPageBrowser(t *testing.T) {
	p := shared(t)
	recv, recvWallet := commerceFunded(t, p, "paypage-receiver", 0)
	payer, payerWallet := commerceFunded(t, p, "paypage-payer", 20_000)
	desc := `Concert <script>alert("x")</script> & "friends"`
	req := createRequest(t, p, recv, map[string]any{"walletId": recvWallet, "amount": 12_345, "description": desc})
	token, payURL := req["token"].(string), req["payUrl"].(string)

	ctx, dialogs := headlessBrowser(t, chromedp.WindowSize(900, 900))
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return v
	}
	step := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			errText, _ := chromedp.Run(ctx, chromedp.Text("#error"))
			t.Fatalf("%s: %v (page error: %q)", what, err, errText)
		}
	}

	step("open the pay page", chromedp.Navigate(payURL), chromedp.WaitVisible("#email"))
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	shownDesc, amount, before := text("#description"), text("#amount"), text("#status")
	step("log in", chromedp.SendKeys("#email", payer.Email), chromedp.SendKeys("#password", payer.Password),
		chromedp.Click("#login-btn"), chromedp.WaitVisible("#pay-btn"))
	step("pay", chromedp.Click("#pay-btn"), chromedp.WaitVisible("#result"))
	status, result := text("#status"), text("#result")
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dir := t.TempDir()
	if d := os.Getenv("PAYPAGE_SCREENSHOT_DIR"); d != "" {
		dir = d
	}
	shotPath := filepath.Join(dir, "paypage-paid.png")
	if err := os.WriteFile(shotPath, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", shotPath, len(shot))

	if shownDesc != desc {
		t.Errorf("description shown as %q, want the raw text %q", shownDesc, desc)
	}
	if !strings.Contains(title, "123.45 KZT") || !strings.Contains(amount, "123.45 KZT") {
		t.Errorf("title %q / amount %q do not show 123.45 KZT", title, amount)
	}
	if before != "open" || status != "paid" || !strings.Contains(result, "Paid 123.45 KZT") {
		t.Errorf("status before %q, after %q, result %q", before, status, result)
	}
	select {
	case m := <-dialogs:
		t.Errorf("the page opened a JavaScript dialog %q: user text was executed", m)
	default:
	}

	v := p.Get(t, "/api/fiat/requests/"+token, "")
	if v.Status != http.StatusOK || v.JSON(t)["status"] != "paid" {
		t.Fatalf("request after the browser paid: %d %s", v.Status, v.Body)
	}
	if got := fiatBalance(t, p, payer, payerWallet); got != 20_000-12_345-13 {
		t.Errorf("payer balance %d, want %d", got, 20_000-12_345-13)
	}
	if got := fiatBalance(t, p, recv, recvWallet); got != 12_345 {
		t.Errorf("receiver balance %d, want 12345", got)
	}
}
