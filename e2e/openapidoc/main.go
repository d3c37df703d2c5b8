// Command openapidoc prints the platform's full OpenAPI document
// (/api/openapi.json, the fintech modules), or with -full the complete one
// (/api/platform/openapi.full.json, every module), as the real binary
// serves it. The document is generated
// from the routes a running gateway registered, so the tool starts a fresh
// platform on the local stack (the e2e harness: its own database and ports),
// reads the document and stops it. `make sdk` feeds the output to the
// TypeScript SDK generator.
//
//	go run ./e2e/openapidoc [-full] [-o file] [-url http://127.0.0.1:8080]
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

func main() {
	out := flag.String("o", "", "write the document to this file instead of standard output")
	url := flag.String("url", "", "read the document from this running platform instead of starting one")
	full := flag.Bool("full", false, "print the complete document of every module ("+completePath+") instead of "+fintechPath)
	flag.Parse()
	path := fintechPath
	if *full {
		path = completePath
	}
	os.Exit(run(*out, *url, path))
}

// The documents the platform serves (gateway/platform.FullPath and
// CompletePath; the e2e tools read the binary's answers, not its packages).
const (
	fintechPath  = "/api/openapi.json"
	completePath = "/api/platform/openapi.full.json"
)

func run(out, base, path string) int {
	if base == "" {
		ptb := harness.NewProcessTB()
		defer ptb.Close()
		p := harness.Start(ptb, harness.Options{Env: map[string]string{"LOG_LEVEL": "error"}})
		defer p.Stop()
		base = p.BaseURL
	}
	doc, err := fetch(base + path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "openapidoc:", err)
		return 1
	}
	if out == "" {
		_, err = os.Stdout.Write(doc)
	} else {
		err = os.WriteFile(out, doc, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "openapidoc:", err)
		return 1
	}
	return 0
}

// fetch reads the document and indents it, so that it diffs well.
func fetch(url string) ([]byte, error) {
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("get %s: %d %s", url, resp.StatusCode, body)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, body, "", "  "); err != nil {
		return nil, fmt.Errorf("%s is not JSON: %w", url, err)
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}
