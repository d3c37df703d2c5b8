package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// TestComposeMonitoring: docker-compose.yml runs Prometheus and
// Alertmanager (issue 46) with the configurations of deploy/prometheus
// (TestAlertRules checks them with promtool and amtool), without opening
// the control plane: Prometheus joins the metrics network only, and every
// target of deploy/prometheus/compose.yml is a service on that network at
// the port it serves its metrics on — a platform process's METRICS_ADDR, a
// Patroni member's /metrics-only proxy (PATRONI_METRICS_LISTEN, its metrics
// address), never the REST API, which listens on the control network only.
// Neither service is published.
func TestComposeMonitoring(t *testing.T) {
	f, _ := readCompose(t)
	prom, ok := f.Services["prometheus"]
	if !ok {
		t.Fatal("no prometheus service")
	}
	am, ok := f.Services["alertmanager"]
	if !ok {
		t.Fatal("no alertmanager service")
	}
	if !strings.HasPrefix(prom.Image, "prom/prometheus:v") || !strings.HasPrefix(am.Image, "prom/alertmanager:v") {
		t.Errorf("images %q, %q: want pinned prom/prometheus and prom/alertmanager", prom.Image, am.Image)
	}
	if len(prom.Ports) != 0 || len(am.Ports) != 0 {
		t.Errorf("prometheus publishes %v, alertmanager %v: only the proxy is published", prom.Ports, am.Ports)
	}
	mounts := func(vols []string) map[string]string {
		m := map[string]string{}
		for _, v := range vols {
			p := strings.Split(v, ":")
			if len(p) >= 2 {
				m[p[1]] = p[0]
			}
		}
		return m
	}
	pm, amm := mounts(prom.Volumes), mounts(am.Volumes)
	if pm["/etc/prometheus/prometheus.yml"] != "./deploy/prometheus/compose.yml" || pm["/etc/prometheus/alerts.yml"] != "./deploy/prometheus/alerts.yml" ||
		!strings.Contains(strings.Join(prom.Command, " "), "--config.file=/etc/prometheus/prometheus.yml") {
		t.Errorf("prometheus: volumes %v, command %v: want compose.yml as its configuration and alerts.yml beside it", prom.Volumes, prom.Command)
	}
	if amm["/etc/alertmanager/alertmanager.yml"] != "./deploy/prometheus/alertmanager.yml" ||
		!strings.Contains(strings.Join(am.Command, " "), "--config.file=/etc/alertmanager/alertmanager.yml") {
		t.Errorf("alertmanager: volumes %v, command %v: want deploy/prometheus/alertmanager.yml", am.Volumes, am.Command)
	}

	// Prometheus's configuration: every target on the metrics network.
	raw, err := os.ReadFile(filepath.Join(alertsDir, "compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		RuleFiles []string `yaml:"rule_files"`
		Alerting  struct {
			Alertmanagers []struct {
				StaticConfigs []struct {
					Targets []string `yaml:"targets"`
				} `yaml:"static_configs"`
			} `yaml:"alertmanagers"`
		} `yaml:"alerting"`
		ScrapeConfigs []struct {
			Job           string `yaml:"job_name"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
			DNS []struct {
				Names []string `yaml:"names"`
				Port  int      `yaml:"port"`
			} `yaml:"dns_sd_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(raw, &conf); err != nil {
		t.Fatal(err)
	}
	if len(conf.RuleFiles) != 1 || conf.RuleFiles[0] != "alerts.yml" {
		t.Errorf("compose.yml rule_files %v, want [alerts.yml] (mounted beside it)", conf.RuleFiles)
	}
	onMetrics := func(svc string) bool { _, ok := f.Services[svc].Networks["metrics"]; return ok }
	// port a service serves its metrics on
	metricsPort := func(svc string) (string, string) {
		e := f.Services[svc].Environment
		if v := e["PATRONI_METRICS_LISTEN"]; v != "" {
			host, port, _ := net.SplitHostPort(v)
			if host != f.Services[svc].Networks["metrics"] {
				t.Errorf("%s: PATRONI_METRICS_LISTEN %s is not its metrics address %q", svc, v, f.Services[svc].Networks["metrics"])
			}
			if strings.HasSuffix(e["PATRONI_RESTAPI_LISTEN"], ":"+port) {
				t.Errorf("%s: the metrics proxy and the REST API share port %s", svc, port)
			}
			return port, "patroni"
		}
		_, port, _ := net.SplitHostPort(e["METRICS_ADDR"])
		return port, "platform"
	}
	jobs := map[string][]string{}
	check := func(job, host, port string) {
		svc, ok := f.Services[host]
		switch {
		case !ok:
			t.Errorf("job %s: target %s:%s is no service", job, host, port)
		case !onMetrics(host):
			t.Errorf("job %s: %s is not on the metrics network (%s)", job, host, svc.Networks.names())
		default:
			if p, _ := metricsPort(host); p != port {
				t.Errorf("job %s: %s:%s, but it serves its metrics on port %q", job, host, port, p)
			}
		}
		jobs[job] = append(jobs[job], host)
	}
	for _, sc := range conf.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			for _, tg := range st.Targets {
				host, port, err := net.SplitHostPort(tg)
				if err != nil {
					t.Errorf("job %s: target %q: %v", sc.Job, tg, err)
					continue
				}
				check(sc.Job, host, port)
			}
		}
		for _, d := range sc.DNS {
			for _, n := range d.Names {
				check(sc.Job, n, strconv.Itoa(d.Port))
			}
		}
	}
	// Every long-running platform process and Patroni member is scraped.
	want := append([]string{"gateway-1", "gateway-2", "relay", "patroni-1", "patroni-2"}, composeGroups...)
	scraped := map[string]bool{}
	for _, hs := range jobs {
		for _, h := range hs {
			scraped[h] = true
		}
	}
	for _, w := range want {
		if !scraped[w] {
			t.Errorf("%s is not scraped by compose.yml (jobs %v)", w, jobs)
		}
	}
	for _, p := range []string{"patroni-1", "patroni-2"} {
		if len(jobs["patroni"]) != 2 || !strings.Contains(strings.Join(jobs["patroni"], ","), p) {
			t.Errorf("job patroni scrapes %v, want both members", jobs["patroni"])
		}
	}
	if len(conf.Alerting.Alertmanagers) != 1 || len(conf.Alerting.Alertmanagers[0].StaticConfigs) != 1 ||
		strings.Join(conf.Alerting.Alertmanagers[0].StaticConfigs[0].Targets, ",") != "alertmanager:9093" {
		t.Errorf("compose.yml alerting %+v, want the alertmanager service", conf.Alerting)
	} else if !onMetrics("alertmanager") {
		t.Error("alertmanager is not on the metrics network: Prometheus cannot reach it")
	}
	// The control network stays etcd's and the Patroni members'.
	for name, svc := range f.Services {
		if _, ok := svc.Networks["control"]; ok && name != "etcd" && name != "etcd-auth" && !strings.HasPrefix(name, "patroni-") {
			t.Errorf("%s joins the control network", name)
		}
	}
	if !strings.Contains(f.Services["patroni-1"].Environment["PATRONI_RESTAPI_LISTEN"], f.Services["patroni-1"].Networks["control"]) {
		t.Error("patroni-1's REST API does not listen on its control address only")
	}
}

// TestPatroniMetricsProxy: deploy/patroni/metrics_proxy.py answers GET
// /metrics with the member's REST API's /metrics and nothing else of the
// API: another path 404, a change (PATCH /config, POST /restart) 405, and it
// never reaches the API for them.
func TestPatroniMetricsProxy(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var asked []string
	rest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte("patroni_primary{scope=\"platform\"} 1\n"))
	}))
	defer rest.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command("python3", "../../deploy/patroni/metrics_proxy.py")
	cmd.Env = append(os.Environ(), "PATRONI_RESTAPI_LISTEN="+strings.TrimPrefix(rest.URL, "http://"), "PATRONI_METRICS_LISTEN="+addr)
	if err := cmd.Start(); err != nil {
		t.Fatalf("python3 metrics_proxy.py: %v", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	hc := &http.Client{Timeout: 5 * time.Second}
	do := func(method, path string) (int, string) {
		req, _ := http.NewRequest(method, "http://"+addr+path, strings.NewReader("{}"))
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b := new(strings.Builder)
		buf := make([]byte, 4096)
		n, _ := resp.Body.Read(buf)
		b.Write(buf[:n])
		return resp.StatusCode, b.String()
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if st, _ := do("GET", "/metrics"); st != 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if st, body := do("GET", "/metrics"); st != 200 || !strings.Contains(body, "patroni_primary") {
		t.Fatalf("GET /metrics: %d %q", st, body)
	}
	for _, c := range []struct {
		method, path string
		want         int
	}{{"GET", "/patroni", 404}, {"GET", "/config", 404}, {"PATCH", "/config", 405}, {"POST", "/restart", 405},
		{"POST", "/switchover", 405}, {"DELETE", "/metrics", 405}} {
		if st, body := do(c.method, c.path); st != c.want {
			t.Errorf("%s %s: %d %q, want %d", c.method, c.path, st, body, c.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(asked, ",") != "GET /metrics,GET /metrics" {
		t.Errorf("the REST API was asked %v, want GET /metrics only", asked)
	}
}
