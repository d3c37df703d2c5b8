package e2e

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// chromiumPath is Debian's Chromium, installed by `make test`.
const chromiumPath = "/usr/bin/chromium"

// headlessBrowser starts Chromium headless (with the flags this closed
// network needs) and returns a tab's context, bounded by 60 s and closed
// when the test ends, and the messages of the JavaScript dialogs the page
// opens (alert, confirm): a page that runs injected script shows there.
func headlessBrowser(t *testing.T, extra ...chromedp.ExecAllocatorOption) (context.Context, <-chan string) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("the browser test needs Chromium at %s (Debian package chromium; make test installs it): %v", chromiumPath, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:0:0],
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	opts = append(opts, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(cancelCtx)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	dialogs := make(chan string, 8)
	if err := chromedp.Listen(ctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			select {
			case dialogs <- d.Message:
			default:
			}
		}
	}); err != nil {
		t.Fatalf("listen: %v", err)
	}
	return ctx, dialogs
}
