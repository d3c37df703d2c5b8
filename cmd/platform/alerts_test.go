package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The alert rules (deploy/prometheus/alerts.yml), their promtool unit tests
// (alerts_test.yml) and runbook (RUNBOOK.md) are checked here, so that
// `make test` runs them: promtool's own checks, every alert covered both
// ways by a unit test, every alert's runbook section present, and every
// metric a rule reads exported by this binary or by a listed exporter.

const alertsDir = "../../deploy/prometheus"

type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Record      string            `yaml:"record"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

type ruleTestFile struct {
	RuleFiles []string `yaml:"rule_files"`
	Tests     []struct {
		Name      string `yaml:"name"`
		AlertTest []struct {
			EvalTime  string           `yaml:"eval_time"`
			AlertName string           `yaml:"alertname"`
			ExpAlerts []map[string]any `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

// readYAML decodes deploy/prometheus/name into v; strict refuses fields v
// does not name (a misspelt key in the rules).
func readYAML(t *testing.T, name string, v any, strict bool) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(alertsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	dec.KnownFields(strict)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// promtool finds promtool (Debian's prometheus package; make test's
// cluster-deps installs it). A missing promtool fails the test: the rules
// are not checked otherwise.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool not found (%v): apt-get install prometheus, or make cluster-deps", err)
	}
	return p
}

// TestAlertRules runs `promtool check rules` and `promtool test rules`, and
// checks compose's Prometheus and Alertmanager configurations (amtool comes
// with Debian's prometheus-alertmanager, which cluster-deps installs too).
func TestAlertRules(t *testing.T) {
	t.Parallel()
	bin := promtool(t)
	amtool, err := exec.LookPath("amtool")
	if err != nil {
		t.Fatalf("amtool not found (%v): apt-get install prometheus-alertmanager, or make cluster-deps", err)
	}
	for _, args := range [][]string{{bin, "check", "rules", "alerts.yml"}, {bin, "test", "rules", "alerts_test.yml"},
		{bin, "check", "config", "compose.yml"}, {amtool, "check-config", "alertmanager.yml"}} {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = alertsDir
		out, err := cmd.CombinedOutput()
		name := filepath.Base(args[0]) + " " + strings.Join(args[1:], " ")
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		t.Logf("%s:\n%s", name, out)
	}
}

// TestAlertRulesAreComplete: every alert has a severity, a summary, a
// description and a runbook_url naming a section of RUNBOOK.md, and the
// unit tests make it fire on some series and stay quiet on another.
func TestAlertRulesAreComplete(t *testing.T) {
	t.Parallel()
	var rules ruleFile
	readYAML(t, "alerts.yml", &rules, true)
	var tests ruleTestFile
	readYAML(t, "alerts_test.yml", &tests, false)
	if len(tests.RuleFiles) != 1 || tests.RuleFiles[0] != "alerts.yml" {
		t.Fatalf("alerts_test.yml tests %v, want [alerts.yml]", tests.RuleFiles)
	}
	runbook, err := os.ReadFile(filepath.Join(alertsDir, "RUNBOOK.md"))
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^## (\w+)\s*$`).FindAllStringSubmatch(string(runbook), -1) {
		sections[strings.ToLower(m[1])] = true
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, at := range tc.AlertTest {
			if len(at.ExpAlerts) > 0 {
				fires[at.AlertName] = true
			} else {
				quiet[at.AlertName] = true
			}
		}
	}
	seen := map[string]bool{}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			if seen[r.Alert] {
				t.Errorf("alert %s defined twice", r.Alert)
			}
			seen[r.Alert] = true
			if s := r.Labels["severity"]; s != "critical" && s != "warning" {
				t.Errorf("%s: severity %q, want critical or warning", r.Alert, s)
			}
			for _, a := range []string{"summary", "description", "runbook_url"} {
				if strings.TrimSpace(r.Annotations[a]) == "" {
					t.Errorf("%s: no %s annotation", r.Alert, a)
				}
			}
			want := "deploy/prometheus/RUNBOOK.md#" + strings.ToLower(r.Alert)
			if r.Annotations["runbook_url"] != want {
				t.Errorf("%s: runbook_url %q, want %q", r.Alert, r.Annotations["runbook_url"], want)
			}
			if !sections[strings.ToLower(r.Alert)] {
				t.Errorf("%s: RUNBOOK.md has no section \"## %s\"", r.Alert, r.Alert)
			}
			if !fires[r.Alert] {
				t.Errorf("%s: no case in alerts_test.yml where it fires", r.Alert)
			}
			if !quiet[r.Alert] {
				t.Errorf("%s: no case in alerts_test.yml where it stays quiet", r.Alert)
			}
		}
	}
	for name := range fires {
		if !seen[name] {
			t.Errorf("alerts_test.yml tests %s, which alerts.yml does not define", name)
		}
	}
	if len(seen) == 0 {
		t.Fatal("alerts.yml defines no alert")
	}
}

// externalMetrics are the series the rules read that other programs export.
var externalMetrics = map[string]string{
	"up": "Prometheus, per scrape target",
	// Patroni's REST API, GET /metrics (patroni/api.py); checked against
	// the installed Patroni when there is one.
	"patroni_primary":                "Patroni",
	"patroni_replica":                "Patroni",
	"patroni_sync_standby":           "Patroni",
	"patroni_cluster_unlocked":       "Patroni",
	"patroni_xlog_location":          "Patroni",
	"patroni_xlog_replayed_location": "Patroni",
}

// pendingMetrics are registered by work on other branches (issue 43's relay
// and background audit); a name here that the binary registers is fine, and
// the entry can go once it does.
var pendingMetrics = map[string]string{
	"platform_outbox_last_publish_timestamp_seconds": "the relay (issue 43)",
	"platform_outbox_backlog":                        "the relay (issue 43)",
	"platform_audit_last_run_timestamp_seconds":      "the background audit (issue 43)",
	"platform_audit_failed_checks":                   "the background audit (issue 43)",
}

// TestAlertRulesReadExportedMetrics: every metric name in a rule's
// expression is registered by this binary (a prometheus *Opts Name or a
// NewDesc name in the repository's Go code), or exported by a listed
// exporter: a renamed series fails here instead of silencing its alert.
func TestAlertRulesReadExportedMetrics(t *testing.T) {
	t.Parallel()
	var rules ruleFile
	readYAML(t, "alerts.yml", &rules, true)
	registered := registeredMetricNames(t, "../..")
	if !registered["platform_http_requests_total"] || !registered["platform_consumer_lag"] {
		t.Fatalf("the scan of the Go code found %d names, not the HTTP and consumer ones", len(registered))
	}
	patroni, _ := os.ReadFile("/usr/lib/python3/dist-packages/patroni/api.py")
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			for _, name := range exprMetricNames(r.Expr) {
				base := name
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					if b, ok := strings.CutSuffix(name, suffix); ok && registered[b] {
						base = b
					}
				}
				switch {
				case registered[base]:
				case externalMetrics[name] != "":
					if strings.HasPrefix(name, "patroni_") && len(patroni) > 0 && !strings.Contains(string(patroni), name) {
						t.Errorf("%s reads %s, which the installed Patroni does not export", r.Alert, name)
					}
				case pendingMetrics[name] != "":
					t.Logf("%s reads %s, registered by %s", r.Alert, name, pendingMetrics[name])
				default:
					t.Errorf("%s reads %s, which neither the binary nor a listed exporter exports", r.Alert, name)
				}
			}
		}
	}
}

func TestExprMetricNames(t *testing.T) {
	t.Parallel()
	got := exprMetricNames(`sum by (group, topic) (increase(platform_consumer_dlq_total{topic=~"a.b|platform_x"}[15m])) > 0
	  and on() (time() - max(patroni_primary == 1)) > 3 * 3600 or absent(up{job="x"})
	  unless histogram_quantile(0.99, sum without (instance) (rate(platform_http_request_seconds_bucket[5m:1m])))`)
	want := []string{"patroni_primary", "platform_consumer_dlq_total", "platform_http_request_seconds_bucket", "up"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("exprMetricNames = %v, want %v", got, want)
	}
}

// exprMetricNames returns the metric names a PromQL expression selects,
// sorted: what is left once strings, label matchers, range selectors,
// grouping clauses, numbers, durations, keywords and function names are
// taken out.
func exprMetricNames(expr string) []string {
	s := regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`).ReplaceAllString(expr, `""`)
	s = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]`).ReplaceAllString(s, " ")
	s = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`).ReplaceAllString(s, " ")
	keywords := map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "inf": true, "nan": true}
	set := map[string]bool{}
	for _, m := range regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*(\s*\()?`).FindAllStringSubmatchIndex(s, -1) {
		tok := strings.TrimRight(strings.TrimSuffix(strings.TrimSpace(s[m[0]:m[1]]), "("), " ")
		if m[2] >= 0 || keywords[strings.ToLower(tok)] {
			continue // a function call, or a keyword
		}
		if m[0] > 0 && (s[m[0]-1] >= '0' && s[m[0]-1] <= '9' || s[m[0]-1] == '.') {
			continue // the unit of a number (3h, 1e9)
		}
		set[tok] = true
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// registeredMetricNames scans the Go code under root (tests and vendored
// tools aside) for the names the binary registers: the Name of a
// prometheus.*Opts literal and the first argument of prometheus.NewDesc.
func registeredMetricNames(t *testing.T, root string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "e2e" || n == "sdk" || n == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if sel, ok := n.Type.(*ast.SelectorExpr); !ok || !strings.HasSuffix(sel.Sel.Name, "Opts") {
					return true
				}
				for _, el := range n.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok {
						if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Name" {
							if s, ok := stringLit(kv.Value); ok {
								names[s] = true
							}
						}
					}
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "NewDesc" && len(n.Args) > 0 {
					if s, ok := stringLit(n.Args[0]); ok {
						names[s] = true
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}
