// Package e2e drives the real platform binary over HTTP.
package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/fintech/platform/e2e/harness"
)

// sharedP is one platform for the tests of this package that do not restart
// or reconfigure it; each test uses its own users.
var sharedP *harness.Platform

// processCleanups stop the platforms that tests start once for the whole
// process (after m.Run).
var processCleanups []func()

func TestMain(m *testing.M) {
	os.Exit(func() int {
		ptb := harness.NewProcessTB()
		defer ptb.Close()
		sharedP = harness.Start(ptb, harness.Options{})
		defer func() {
			for _, c := range processCleanups {
				c()
			}
		}()
		code := m.Run()
		req, resp, undocumented, failed := harness.ConformanceStats()
		fmt.Printf("conformance: %d requests and %d responses validated against the served OpenAPI documents, %d calls to undocumented paths, %d mismatches\n",
			req, resp, undocumented, failed)
		fmt.Printf("conformance: calls to undocumented paths by prefix: %v\n", harness.UndocumentedPrefixes())
		return code
	}())
}

// Parallel tests: the package's tests run one after another, except the
// longest (a cluster's failover, crash recoveries, a restore drill, the
// TypeScript compiles of the SDK, guides and samples), which call
// t.Parallel and so run two at a time (-parallel defaults to GOMAXPROCS)
// once the others are done. Each starts its own platform, Postgres or
// cluster, or only reads from sharedP with users of its own, and most of
// their time is spent waiting (on a kill, a promotion, a restore, node),
// so pairing them keeps `make test` under 15 minutes on 2 cores.

func shared(t *testing.T) *harness.Platform {
	t.Helper()
	return sharedP
}
