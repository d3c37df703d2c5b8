package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// modulePath is the import path of this module.
const modulePath = "github.com/fintech/platform"

// layerRule forbids the packages under from (a folder of the module) to
// depend on those under to (a folder of the module, or an import path
// prefix outside it), directly or through any chain of imports, their
// tests' imports included.
type layerRule struct {
	from, to string
	// except is a folder under to that from may reach all the same.
	except string
	why    string
}

// layers is the package layering of architecture.md, bottom up: schemas
// (the contracts) imports nothing of the module; topics (topic names, the
// franz-go clients) builds on schemas and never on storage; storage
// (Postgres, ClickHouse) stores bytes, reaches no Kafka client and knows
// neither the consumers nor the HTTP layer; the gateway and the consumers
// sit side by side above them and meet only through Kafka and schemas.
var layers = []layerRule{
	{from: "schemas", to: "", except: "schemas", why: "schemas is the bottom layer and imports nothing else of the module"},
	{from: "topics", to: "storage", why: "topics is below storage; a topic name storage needs comes from topics/names"},
	{from: "storage", to: "github.com/twmb/franz-go", why: "storage stores bytes and builds no Kafka record; that is for consumers and topics (topic names come from topics/names, which imports no Kafka client)"},
	{from: "storage", to: "consumers", why: "storage is below the consumers that call it"},
	{from: "storage", to: "gateway", why: "storage does not depend on the HTTP layer"},
	{from: "gateway", to: "consumers", why: "the gateway reaches consumers only through Kafka; share the contract in schemas/<module>.go"},
	{from: "consumers", to: "gateway", why: "consumers answer through Kafka, not the HTTP layer; a helper both need goes below both (schemas, topics, storage), and a consumer test drives the HTTP contract, not the gateway's code"},
}

// TestLayering enforces layers on what `go list -deps -test` says every
// package of the module (and every test of it) links, so an import that
// reaches a forbidden layer through others fails too, named by its chain.
func TestLayering(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "list", "-deps", "-test", "-json=ImportPath,Imports", modulePath+"/...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	graph := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding go list: %v", err)
		}
		graph[p.ImportPath] = p.Imports
	}
	if len(graph[modulePath+"/cmd/platform"]) == 0 {
		t.Fatalf("go list named no imports of cmd/platform; the graph is not the module's")
	}
	for _, v := range layerViolations(graph, layers) {
		t.Error(v)
	}
	for _, b := range operatorImports(t) {
		t.Error(b)
	}
}

// pkgPath is the import path of a `go list -test` package id: "p [q.test]"
// (p compiled for q's tests) is p.
func pkgPath(id string) string {
	if i := strings.IndexByte(id, ' '); i >= 0 {
		return id[:i]
	}
	return id
}

// within reports whether import path p is dir of the module (module
// relative; "" is the whole module) or below it, or, for a dir that is an
// import path outside the module, that path or below it.
func within(p, dir string) bool {
	full := dir
	switch {
	case dir == "":
		full = modulePath
	case !strings.Contains(strings.SplitN(dir, "/", 2)[0], "."):
		full = modulePath + "/" + dir
	}
	if p == full || strings.HasPrefix(p, full+"/") {
		return true
	}
	// An external test package (p_test) is its folder's.
	return strings.HasSuffix(p, "_test") && within(strings.TrimSuffix(p, "_test"), dir)
}

// shortName is an id as a failure names it: module relative, its test
// variant said in words.
func shortName(id string) string {
	p, variant, _ := strings.Cut(id, " ")
	name := strings.TrimPrefix(p, modulePath+"/")
	if variant != "" && !strings.HasSuffix(name, "_test") {
		name += " (test build)"
	}
	return name
}

// layerViolations walks graph (package id -> the ids it imports, as `go
// list -deps -test -json` gives them) from every package of the module and
// returns, per rule broken, the shortest import chain from a package under
// rule.from to one under rule.to, starting at the last package of the chain
// still under rule.from (so a chain through a sibling is told once, from
// the sibling), sorted.
func layerViolations(graph map[string][]string, rules []layerRule) []string {
	seen := map[string]bool{}
	var out []string
	roots := make([]string, 0, len(graph))
	for id := range graph {
		roots = append(roots, id)
	}
	slices.Sort(roots)
	for _, root := range roots {
		p := pkgPath(root)
		if !within(p, "") || strings.HasSuffix(p, ".test") {
			continue
		}
		for _, r := range rules {
			if !within(p, r.from) {
				continue
			}
			chain := forbiddenChain(graph, root, r)
			if chain == nil {
				continue
			}
			last := 0
			for i, id := range chain[:len(chain)-1] {
				if within(pkgPath(id), r.from) {
					last = i
				}
			}
			names := make([]string, 0, len(chain)-last)
			for _, id := range chain[last:] {
				names = append(names, shortName(id))
			}
			msg := r.from + " may not depend on " + cmp.Or(r.to, "the rest of the module") + ": " +
				strings.Join(names, " -> ") + " (" + r.why + ")"
			if !seen[msg] {
				seen[msg] = true
				out = append(out, msg)
			}
		}
	}
	slices.Sort(out)
	return out
}

// forbiddenChain is the shortest import chain (ids, root first) from root to
// a package rule r forbids it, or nil.
func forbiddenChain(graph map[string][]string, root string, r layerRule) []string {
	parent := map[string]string{root: ""}
	queue := []string{root}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		for _, imp := range graph[id] {
			if _, ok := parent[imp]; ok {
				continue
			}
			parent[imp] = id
			if p := pkgPath(imp); within(p, r.to) && (r.except == "" || !within(p, r.except)) {
				chain := []string{imp}
				for at := id; at != ""; at = parent[at] {
					chain = append(chain, at)
				}
				slices.Reverse(chain)
				return chain
			}
			queue = append(queue, imp)
		}
	}
	return nil
}

func TestLayerViolations(t *testing.T) {
	t.Parallel()
	m := func(p string) string { return modulePath + "/" + p }
	kgo := "github.com/twmb/franz-go/pkg/kgo"
	// The tree before topics/names: storage/fiat imports topics for a topic
	// name, and topics imports franz-go; storage/webhooks reaches it through
	// storage/fiat; topics/dlq imports storage/dlq; a consumer's test imports
	// the gateway through a test helper.
	graph := map[string][]string{
		m("storage/fiat"):     {"context", m("topics")},
		m("storage/webhooks"): {m("storage/fiat"), m("schemas")},
		m("storage/dlq"):      {"context"},
		m("topics"):           {kgo, m("schemas")},
		m("topics/dlq"):       {m("storage/dlq"), m("topics")},
		m("schemas"):          {"encoding/json"},
		kgo:                   {"github.com/twmb/franz-go/pkg/kmsg"},
		m("consumers/fiat"):   {m("storage/fiat")},
		m("consumers/fiat [" + m("consumers/fiat.test") + "]"):      {m("storage/fiat"), m("internal/testkit")},
		m("consumers/fiat_test [" + m("consumers/fiat.test") + "]"): {m("consumers/fiat [" + m("consumers/fiat.test") + "]")},
		m("consumers/fiat.test"):                                    {m("consumers/fiat_test [" + m("consumers/fiat.test") + "]")},
		m("internal/testkit"):                                       {m("gateway/server")},
		m("gateway/server"):                                         {m("schemas")},
		m("gateway/fiat"):                                           {m("storage/fiat"), m("topics")},
	}
	got := layerViolations(graph, layers)
	want := []string{
		"consumers may not depend on gateway: consumers/fiat (test build) -> internal/testkit -> gateway/server",
		"storage may not depend on github.com/twmb/franz-go: storage/fiat -> topics -> github.com/twmb/franz-go/pkg/kgo",
		"topics may not depend on storage: topics/dlq -> storage/dlq",
	}
	if len(got) != len(want) {
		t.Fatalf("layerViolations = %d:\n%s\nwant %d", len(got), strings.Join(got, "\n"), len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]+" (") {
			t.Errorf("violation %d = %q, want %q (why)", i, got[i], want[i])
		}
	}
	// Fixed as the tree is: storage names its topics from a leaf, the DLQ
	// tooling sits above storage, the consumer test's helper moved below.
	graph[m("storage/fiat")] = []string{"context", m("topics/names")}
	graph[m("topics/names")] = nil
	delete(graph, m("topics/dlq"))
	graph[m("gateway/dlq")] = []string{m("storage/dlq"), m("topics")}
	graph[m("internal/testkit")] = []string{m("schemas")}
	if got := layerViolations(graph, layers); len(got) != 0 {
		t.Errorf("layerViolations of a clean graph = %q", got)
	}
	// schemas may import itself and the standard library, nothing else of
	// the module.
	graph[m("schemas")] = []string{"encoding/json", m("schemas/testdata")}
	if got := layerViolations(graph, layers); len(got) != 0 {
		t.Errorf("schemas importing schemas/testdata: %q", got)
	}
	graph[m("schemas")] = []string{m("topics/names")}
	if got := layerViolations(graph, layers); len(got) != 1 || !strings.HasPrefix(got[0], "schemas may not depend on the rest of the module: schemas -> topics/names") {
		t.Errorf("schemas importing topics/names: %q", got)
	}
}

func TestWithin(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		p, dir string
		want   bool
	}{
		{modulePath + "/gateway/fiat", "gateway", true},
		{modulePath + "/gateway", "gateway", true},
		{modulePath + "/gatewayx", "gateway", false},
		{modulePath + "/storage/dlq_test", "storage", true},
		{modulePath + "/storage_test", "storage", true},
		{modulePath + "/schemas", "", true},
		{"github.com/twmb/franz-go/pkg/kgo", "github.com/twmb/franz-go", true},
		{"github.com/twmb/franz-go-x", "github.com/twmb/franz-go", false},
		{"encoding/json", "", false},
		{"github.com/fintech/platformx", "", false},
	} {
		if got := within(tt.p, tt.dir); got != tt.want {
			t.Errorf("within(%s, %q) = %v, want %v", tt.p, tt.dir, got, tt.want)
		}
	}
}

// operatorGateway is what the operator commands of cmd/platform (the
// *_cmd.go files) may import from gateway/: they run beside the HTTP layer,
// not through it. admin create still checks passwords and e-mails with the
// gateway's rules, and dlq calls the dead-letter tooling the console serves
// (gateway/dlq: Kafka and Postgres, no HTTP), so a shell and the console act
// and audit the same way; nothing else may join them.
var operatorGateway = map[string][]string{
	"admin_cmd.go": {"gateway/auth", "gateway/bind", "gateway/identity"},
	"dlq_cmd.go":   {"gateway/dlq"},
}

// operatorImports lists the gateway imports of the operator command files
// that operatorGateway does not allow.
func operatorImports(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*_cmd.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no operator command files (%v)", err)
	}
	var bad []string
	for _, f := range files {
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range parsed.Imports {
			imp := strings.Trim(spec.Path.Value, `"`)
			if !within(imp, "gateway") {
				continue
			}
			if !slices.Contains(operatorGateway[f], strings.TrimPrefix(imp, modulePath+"/")) {
				bad = append(bad, "cmd/platform/"+f+" imports "+imp+": an operator command reaches the platform through its own packages (storage, topics), not the HTTP layer")
			}
		}
	}
	return bad
}

// sqlText matches the statements a re-anchoring source or a store would
// hold; keywords are upper case as our SQL is written, so prose in a help
// text ("select the ...") does not match.
var sqlText = regexp.MustCompile(`\bSELECT\b[\s\S]*\bFROM\b|\bINSERT INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE FROM\b|\b(CREATE|ALTER|DROP) (TABLE|INDEX)\b`)

// TestWiringHoldsNoSQL keeps SQL in storage/<module> (README, "Adding a
// module", step 6): cmd/platform/wire_*.go only wires, so a query written
// there (a re-anchoring source's, say) fails here, named by file and line.
func TestWiringHoldsNoSQL(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("wire_*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no wire_*.go files (%v)", err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && sqlText.MatchString(s) {
				t.Errorf("%s holds SQL; move it to storage/<module> and refer to it by name", fset.Position(lit.Pos()))
			}
			return true
		})
	}
}

func TestSQLText(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"SELECT a FROM t":                    true,
		"\nSELECT x,\n y\nFROM t WHERE z":    true,
		"INSERT INTO t VALUES (1)":           true,
		"UPDATE t SET a = 1":                 true,
		"DELETE FROM t":                      true,
		"select the admins of a module":      false,
		"ledger: subcommands: reanchor":      false,
		"UPDATE the keys, then SELECT a row": false,
	} {
		if got := sqlText.MatchString(s); got != want {
			t.Errorf("sqlText(%q) = %v, want %v", s, got, want)
		}
	}
}
