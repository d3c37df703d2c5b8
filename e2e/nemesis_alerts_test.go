package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

// Issue 46: the nemesis pages. The cluster's Prometheus evaluates the
// alert rules of deploy/prometheus/alerts.yml and its Alertmanager posts
// every alert, firing and resolved, to a webhook receiver in the test — so
// "paged" means Alertmanager sent it. Per fault the test asserts that the
// fault kind's alert reached the receiver within its bound and resolved
// after the recovery, that no other alert reached it (an alert no fault
// explains, e.g. in the quiet stretch before the first fault, fails the
// test), and prints the table fault → alert → fired after → resolved after.

// nemesisAlertScale divides the `for:` of the availability rules (those
// whose `for:` is at most nemesisAlertScaledMax) in the nemesis's copy of
// the rules: a nemesis fault lasts seconds, the production rules wait 1–2
// minutes before paging (1m → 5 s, 2m → 10 s: one and two of the cluster's
// 5 s scrape and evaluation intervals). The rules with longer `for:` (error
// ratio, latency, lag growth, WAL, backups, disk) keep theirs: their
// conditions are over 5-minute to 6-hour windows, which a shorter `for:`
// would not compress, and a nemesis fault does not reach them. Production's
// alerts.yml is unchanged; promtool's unit tests (alerts_test.yml) hold it
// to its own `for:`.
const (
	nemesisAlertScale     = 12
	nemesisAlertScaledMax = 2 * time.Minute
)

// The cluster's Prometheus scrapes and evaluates every 5 s (cluster.sh
// prometheus_conf); Alertmanager groups by alertname with group_wait 2 s
// and group_interval 10 s (alertmanager_conf).
const (
	nemesisScrapeEval = 10 * time.Second // a scrape to see it, an evaluation to count it
	nemesisAMDelay    = 10 * time.Second // group_wait / group_interval
	// nemesisAlertFireSlack is added to onset + for: the bound within
	// which a required alert reaches the receiver.
	nemesisAlertFireSlack = nemesisScrapeEval + nemesisAMDelay + 5*time.Second
	// nemesisAlertResolveBound: after the fault's end (the member back), the
	// next scrape sees it, the next evaluation resolves, Alertmanager's next
	// group interval sends it.
	nemesisAlertResolveBound = nemesisScrapeEval + nemesisAMDelay + 10*time.Second
)

// nemesisAlertSpec is what a fault kind pages.
type nemesisAlertSpec struct {
	alert string // "": no rule watches this fault (why says why)
	job   string // the alert's job label, when it has one
	// onset: the condition begins at most this long after the fault's
	// start; hold: it lasts at most this long (0: until the fault's end).
	// The condition's length, min(end-start-onset, hold, and for a kill
	// back-start-onset: its process started again, for a lost machine or
	// both promoted-start-onset: a primary again), against the alert's
	// for: decides whether the alert must fire.
	onset, hold time.Duration
	// tolerated may also fire during the fault (a consequence, not a false
	// page), never required.
	tolerated []string
	why       string
}

// nemesisRunAlerts are the rules whose condition is over a window spanning
// many faults (their for: unscaled): the 503s and slow answers of faults one
// after another add up over 5 minutes. During a run with faults they may
// fire — an operator would be paged for it — without one fault to blame
// and without resolving within a fault's bound (their window must first
// pass); in a quiet run (no fault) they fail it like any other.
var nemesisRunAlerts = map[string]string{
	"GatewayErrorRatio":           "the faults' 503s over its 5-minute window",
	"GatewayLatencyP99OverBudget": "the faults' slow answers over its 5-minute window",
	"ConsumerLagGrowing":          "the faults' stalls over its 5-minute window",
}

var nemesisAlertSpecs = map[string]nemesisAlertSpec{
	// The killed gateway refuses its scrape until cluster.sh up restarted it.
	"gateway-kill": {alert: "GatewayInstanceDown", job: "platform-gateway"},
	"consumer-kill": {alert: "PlatformProcessDown", job: "platform-consumer",
		tolerated: []string{"ConsumerGroupWithoutMembers"}},
	// A stopped process accepts the scrape's connection and never answers:
	// up is 0 once a scrape timed out (5 s); the stop lasts the session
	// timeout and up to 5 s more (the rest of the fault is cluster.sh up).
	"consumer-stop": {alert: "PlatformProcessDown", job: "platform-consumer", onset: 5 * time.Second,
		hold: nemesisSessionTimeout + 5*time.Second, tolerated: []string{"ConsumerGroupWithoutMembers"}},
	// The promotion (RTO target 15 s), then a primary without a synchronous
	// standby until the old primary is back as one (the fault's end).
	"primary-kill": {alert: "PatroniNoSyncStandby", onset: 15 * time.Second, tolerated: []string{"PatroniNoLeader", "RelayNotPublishing"}},
	"relay-lock":   {why: "the relay re-takes its lock within seconds; RelayNotPublishing waits minutes"},
	// The broker's scrape is refused until it is back; the groups rejoin.
	// The broker is down 1-3 s, then cluster.sh up starts it first of the
	// platform's processes (after checking etcd and Patroni); the rest of
	// the fault is up waiting for every other member to settle.
	"broker-kill": {alert: "PlatformProcessDown", job: "platform-broker", hold: 10 * time.Second,
		tolerated: []string{"ConsumerGroupWithoutMembers", "RelayNotPublishing"}},
	// No member is primary until the standby takes the leader key after its
	// 20 s TTL; then no synchronous standby until the machine is back.
	"machine-kill": {alert: "PatroniNoLeader", hold: 20 * time.Second, tolerated: []string{"PatroniNoSyncStandby", "RelayNotPublishing"}},
	"postgres-both-down": {alert: "PatroniNoLeader", tolerated: []string{"PatroniNoSyncStandby",
		"PlatformProcessDown", "GatewayInstanceDown", "GatewayDown", "RelayNotPublishing"}},
	// The cut primary demotes itself (+5 s); the standby takes the key
	// after its TTL (+20 s).
	"etcd-cut-primary": {alert: "PatroniNoLeader", onset: 5 * time.Second, hold: 15 * time.Second,
		tolerated: []string{"PatroniNoSyncStandby", "RelayNotPublishing"}},
	// Patroni drops the cut standby from synchronous_standby_names after
	// wal_sender_timeout (10 s) and its next loop.
	"replication-cut":    {alert: "PatroniNoSyncStandby", onset: 15 * time.Second},
	"gateway-broker-cut": {why: "a gateway cut from the broker answers 503 (GatewayErrorRatio needs 5 minutes)"},
	"consumer-pg-cut":    {why: "the group moves the cut consumer's partitions; lag alerts need 10 minutes"},
	"relay-broker-cut":   {why: "the relay retries; RelayNotPublishing waits 3 minutes"},
	"pg-loss":            {why: "5% loss slows statements; nothing stops"},
	"clock-skew":         {why: "nothing waits on a Postgres machine's clock"},
}

// nemesisAlertRules writes the nemesis's copy of deploy/prometheus/alerts.yml
// to dir (nemesisAlertScale) and returns its path and every rule's for:
// there.
func nemesisAlertRules(t *testing.T, dir string) (string, map[string]time.Duration) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "deploy", "prometheus", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	alertRe := regexp.MustCompile(`^\s*- alert:\s*(\S+)\s*$`)
	forRe := regexp.MustCompile(`^(\s*for:\s*)(\S+)\s*$`)
	fors := map[string]time.Duration{}
	var cur string
	lines := strings.Split(string(raw), "\n")
	for i, line := range lines {
		if m := alertRe.FindStringSubmatch(line); m != nil {
			cur = m[1]
			fors[cur] = 0
			continue
		}
		m := forRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		d, err := time.ParseDuration(m[2])
		if err != nil || cur == "" {
			t.Fatalf("alerts.yml line %d: for: %q (%v)", i+1, m[2], err)
		}
		if d <= nemesisAlertScaledMax {
			d /= nemesisAlertScale
			lines[i] = fmt.Sprintf("%s%ds # nemesis: %s / %d", m[1], int(d.Seconds()), m[2], nemesisAlertScale)
		}
		fors[cur] = d
	}
	path := filepath.Join(dir, "nemesis-alerts.yml")
	head := "# written by e2e/nemesis_alerts_test.go: deploy/prometheus/alerts.yml with the for: of the\n" +
		"# availability rules divided by nemesisAlertScale\n"
	if err := os.WriteFile(path, []byte(head+strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, fors
}

// alertNotice is one alert of one Alertmanager webhook message.
type alertNotice struct {
	name, key, status string
	labels            map[string]string
	startsAt, at      time.Time // startsAt: Prometheus's; at: received
}

// nemesisAlerts is the receiver and what it was sent.
type nemesisAlerts struct {
	srv   *httptest.Server
	fors  map[string]time.Duration
	since time.Time // the receiver listens and Prometheus evaluates its rules

	mu      sync.Mutex
	notices []alertNotice
}

// startNemesisAlerts restarts the cluster's Prometheus with the nemesis's
// rules and its Alertmanager with the test's webhook receiver.
func startNemesisAlerts(t *testing.T, c *harness.LocalCluster) *nemesisAlerts {
	t.Helper()
	a := &nemesisAlerts{}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			Alerts []struct {
				Status   string            `json:"status"`
				Labels   map[string]string `json:"labels"`
				StartsAt time.Time         `json:"startsAt"`
			} `json:"alerts"`
		}
		if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		now := time.Now()
		a.mu.Lock()
		defer a.mu.Unlock()
		for _, m := range msg.Alerts {
			keys := make([]string, 0, len(m.Labels))
			for k, v := range m.Labels {
				keys = append(keys, k+"="+v)
			}
			sort.Strings(keys)
			a.notices = append(a.notices, alertNotice{name: m.Labels["alertname"], key: strings.Join(keys, ","),
				status: m.Status, labels: m.Labels, startsAt: m.StartsAt, at: now})
		}
	}))
	t.Cleanup(a.srv.Close)
	var rules string
	rules, a.fors = nemesisAlertRules(t, c.Dir)
	c.SetScriptEnv("CLUSTER_ALERT_WEBHOOK=" + a.srv.URL)
	c.SetScriptEnv("CLUSTER_ALERT_RULES=" + rules)
	c.Stop("prometheus", 30*time.Second)
	c.Stop("alertmanager", 30*time.Second)
	c.Up()
	// Until its first scrape of the Patroni members, a restarted Prometheus
	// finds no primary (PatroniNoLeader's absent()), which the copy's 5 s
	// for: would page: the stretch counts from its first full scrape and
	// the first evaluation after it with neither Patroni alert active.
	harness.Eventually(t, 180*time.Second, "Prometheus scraped every target, a primary among them, and neither Patroni alert active", func() bool {
		return promCount(c.PrometheusURL(), "up == 0") == 0 && promCount(c.PrometheusURL(), "patroni_primary == 1") == 1 &&
			promCount(c.PrometheusURL(), `ALERTS{alertname=~"PatroniNoLeader|PatroniNoSyncStandby"}`) == 0
	})
	a.since = time.Now()
	return a
}

// promCount is how many series Prometheus at base answers for the instant
// query q; -1 when it cannot answer.
func promCount(base, q string) int {
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var out struct {
		Status string `json:"status"`
		Data   struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if json.NewDecoder(resp.Body).Decode(&out) != nil || out.Status != "success" {
		return -1
	}
	return len(out.Data.Result)
}

// alertEpisode is one alert (its labels) from firing to resolved.
type alertEpisode struct {
	name, key           string
	labels              map[string]string
	startsAt            time.Time
	firedAt, resolvedAt time.Time // received; resolvedAt zero: not (yet)
	fault               *nemesisFault
	expected, runLevel  bool
}

func (a *nemesisAlerts) episodes() []*alertEpisode {
	a.mu.Lock()
	defer a.mu.Unlock()
	byKey := map[string]*alertEpisode{}
	var out []*alertEpisode
	for _, n := range a.notices {
		k := n.key + "@" + n.startsAt.String()
		e := byKey[k]
		if e == nil {
			e = &alertEpisode{name: n.name, key: n.key, labels: n.labels, startsAt: n.startsAt}
			byKey[k] = e
			out = append(out, e)
		}
		switch {
		case n.status == "firing" && e.firedAt.IsZero():
			e.firedAt = n.at
		case n.status == "resolved" && e.resolvedAt.IsZero():
			e.resolvedAt = n.at
			if e.firedAt.IsZero() { // resolved before Alertmanager sent it firing
				e.firedAt = n.at
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].startsAt.Before(out[j].startsAt) })
	return out
}

// explains: an alert that Prometheus fired at startsAt belongs to fault f
// when f's kind names it and its condition began within f (fired before
// the fault's end plus a scrape, an evaluation and the alert's for:).
func (a *nemesisAlerts) explains(f *nemesisFault, e *alertEpisode) (expected, ok bool) {
	s := nemesisAlertSpecs[f.kind]
	names := s.tolerated
	if s.alert != "" {
		names = append([]string{s.alert}, names...)
	}
	for i, n := range names {
		if n != e.name || (i == 0 && s.job != "" && e.labels["job"] != s.job) {
			continue
		}
		if !e.startsAt.Before(f.start) && !e.startsAt.After(f.end.Add(a.fors[n]+nemesisScrapeEval+5*time.Second)) {
			return i == 0, true
		}
	}
	return false, false
}

// nemesisAlertCheck waits for every alert to resolve (the last fault's
// bound), gives each alert its fault, asserts each fault's required alert
// fired in its bound and every alert resolved in its bound and none came
// unexplained, and prints the table.
func (a *nemesisAlerts) check(t *testing.T, faults []*nemesisFault) {
	t.Helper()
	var last time.Time
	for _, f := range faults {
		if f.end.After(last) {
			last = f.end
		}
	}
	// Every alert sent firing resolved (or the last fault's bound passed).
	deadline := last.Add(nemesisAlertResolveBound + 30*time.Second)
	for time.Now().Before(deadline) {
		open := false
		for _, e := range a.episodes() {
			open = open || e.resolvedAt.IsZero()
		}
		if !open {
			break
		}
		time.Sleep(time.Second)
	}
	eps := a.episodes()
	for _, e := range eps {
		// The fault whose required alert it is, else the latest that
		// tolerates it.
		for _, f := range faults {
			exp, ok := a.explains(f, e)
			if ok && (e.fault == nil || (exp && !e.expected) || (exp == e.expected && f.start.After(e.fault.start))) {
				e.fault, e.expected = f, exp
			}
		}
	}
	secs := func(d time.Duration) string { return fmt.Sprintf("%+.0fs", d.Seconds()) }
	t.Logf("alerts (Alertmanager -> webhook receiver; the availability rules' for: / %d, onset and condition per fault kind):", nemesisAlertScale)
	t.Logf("%-20s %-22s %-22s %6s %6s  %s", "fault", "member", "expected alert", "for:", "lasted", "paged")
	for _, f := range faults {
		s := nemesisAlertSpecs[f.kind]
		d := f.end.Sub(f.start)
		if s.alert == "" {
			t.Logf("%-20s %-22s %-22s %6s %6s  not expected (%s)", f.kind, trunc(f.member, 22), "-", "-", secs(d), s.why)
			for _, e := range eps {
				if e.fault == f {
					t.Logf("%-20s %-22s %-22s %6s %6s  also: fired %s, resolved %s", "", "", e.name, "", "",
						secs(e.firedAt.Sub(f.start)), resolvedStr(e, f))
				}
			}
			continue
		}
		forD := a.fors[s.alert]
		cond := d - s.onset
		if s.hold > 0 && cond > s.hold {
			cond = s.hold
		}
		// A killed process is down until cluster.sh up started it again,
		// and a lost machine's cluster has no leader until its standby is
		// promoted: either may be well before the fault's end.
		for _, ended := range []time.Time{f.back, f.promoted} {
			if !ended.IsZero() && ended.Sub(f.start)-s.onset < cond {
				cond = ended.Sub(f.start) - s.onset
			}
		}
		var fired *alertEpisode
		for _, e := range eps {
			if e.fault == f && e.expected && fired == nil {
				fired = e
			}
		}
		required := cond >= forD+nemesisScrapeEval
		fireBound := s.onset + forD + nemesisAlertFireSlack
		verdict := ""
		switch {
		case fired != nil:
			verdict = fmt.Sprintf("fired after %s (bound %s), resolved %s after the fault's end", secs(fired.firedAt.Sub(f.start)),
				secs(fireBound), resolvedStr(fired, f))
			if required && fired.firedAt.Sub(f.start) > fireBound {
				t.Errorf("%s %s: %s paged %s after the fault began, over its bound %s", f.kind, f.member, s.alert,
					fired.firedAt.Sub(f.start).Round(time.Second), fireBound)
				verdict += " LATE"
			}
		case cond < forD:
			verdict = fmt.Sprintf("not expected (shorter than for: its condition lasted at most %s)", secs(cond))
		case !required:
			verdict = fmt.Sprintf("not required (condition at most %s, within a scrape of for:); did not fire", secs(cond))
		default:
			verdict = fmt.Sprintf("MISSING: condition %s >= for: + scrape, nothing paged within %s", secs(cond), secs(fireBound))
			t.Errorf("%s %s (%s): %s did not reach the receiver (condition for up to %s, for: %s, bound %s)",
				f.kind, f.member, d.Round(time.Second), s.alert, cond.Round(time.Second), forD, fireBound)
		}
		if !f.back.IsZero() {
			verdict += fmt.Sprintf("; its process started again at %s", secs(f.back.Sub(f.start)))
		}
		if !f.promoted.IsZero() {
			verdict += fmt.Sprintf("; a primary again at %s", secs(f.promoted.Sub(f.start)))
		}
		t.Logf("%-20s %-22s %-22s %6s %6s  %s", f.kind, trunc(f.member, 22), s.alert, secs(forD), secs(d), verdict)
		for _, e := range eps {
			if e.fault == f && e != fired {
				t.Logf("%-20s %-22s %-22s %6s %6s  also (tolerated): fired %s, resolved %s", "", "", e.name, "", "",
					secs(e.firedAt.Sub(f.start)), resolvedStr(e, f))
			}
		}
	}
	var runFrom, runTo time.Time
	for _, f := range faults {
		if runFrom.IsZero() || f.start.Before(runFrom) {
			runFrom = f.start
		}
	}
	runTo = last.Add(5*time.Minute + nemesisScrapeEval)
	for _, e := range eps {
		why, ok := nemesisRunAlerts[e.name]
		if e.fault != nil || !ok || runFrom.IsZero() || e.startsAt.Before(runFrom) || e.startsAt.After(runTo.Add(a.fors[e.name])) {
			continue
		}
		e.runLevel = true
		t.Logf("%-20s %-22s %-22s %6s %6s  tolerated (%s): fired %s into the faults, resolved %s", "(the run)", "", e.name,
			secs(a.fors[e.name]), "", why, secs(e.firedAt.Sub(runFrom)), resolvedStr(e, nil))
	}
	for _, e := range eps {
		switch {
		case e.runLevel:
		case e.fault == nil && e.startsAt.Before(a.since):
			t.Logf("%-22s {%s} active before the restarted Prometheus's first full scrape (%s): not counted",
				e.name, e.key, e.startsAt.Format(time.StampMilli))
		case e.fault == nil:
			t.Errorf("unexpected alert %s {%s}: fired at %s (Prometheus) with no fault to explain it (quiet stretch)",
				e.name, e.key, e.startsAt.Format(time.StampMilli))
			t.Logf("UNEXPECTED %-22s {%s} fired %s, resolved %s", e.name, e.key, e.firedAt.Format(time.TimeOnly), resolvedStr(e, nil))
		case e.resolvedAt.IsZero() || e.resolvedAt.After(e.fault.end.Add(nemesisAlertResolveBound)):
			t.Errorf("%s {%s} of fault %s %s: not resolved at the receiver within %s of the fault's end (%s)",
				e.name, e.key, e.fault.kind, e.fault.member, nemesisAlertResolveBound, resolvedStr(e, e.fault))
		}
	}
	quiet := "no fault"
	if len(faults) > 0 {
		first := faults[0].start
		for _, f := range faults {
			if f.start.Before(first) {
				first = f.start
			}
		}
		quiet = fmt.Sprintf("quiet stretch before the first fault %s, between faults and after the last", first.Sub(a.since).Round(time.Second))
	}
	t.Logf("alerts: %d paged in %s (%s); unexplained ones fail the test", len(eps), time.Since(a.since).Round(time.Second), quiet)
}

func resolvedStr(e *alertEpisode, f *nemesisFault) string {
	switch {
	case e.resolvedAt.IsZero():
		return "never"
	case f == nil:
		return e.resolvedAt.Format(time.TimeOnly)
	}
	return fmt.Sprintf("%+.0fs", e.resolvedAt.Sub(f.end).Seconds())
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// nemesisQuiet: NEMESIS_QUIET=1 runs the load without a fault (a quiet run:
// no alert may page).
func nemesisQuiet(t *testing.T) bool {
	if os.Getenv("NEMESIS_QUIET") == "" {
		return false
	}
	t.Logf("NEMESIS_QUIET: the load without faults; no alert may reach the receiver")
	return true
}

// TestNemesisAlertRules: the nemesis's copy of the rules passes promtool,
// shortens exactly the availability rules' for:, and names every alert the
// fault kinds expect.
func TestNemesisAlertRules(t *testing.T) {
	if _, err := exec.LookPath("promtool"); err != nil {
		t.Fatalf("promtool (Debian prometheus; make cluster-deps): %v", err)
	}
	path, fors := nemesisAlertRules(t, t.TempDir())
	if out, err := exec.Command("promtool", "check", "rules", path).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules %s: %v\n%s", path, err, out)
	}
	for _, k := range nemesisKinds {
		if k == "overlap" {
			continue
		}
		s, ok := nemesisAlertSpecs[k]
		if !ok {
			t.Errorf("fault kind %s has no alert spec (nemesisAlertSpecs)", k)
			continue
		}
		if s.alert == "" && s.why == "" {
			t.Errorf("fault kind %s expects no alert and says not why", k)
		}
		for _, a := range append([]string{s.alert}, s.tolerated...) {
			if _, ok := fors[a]; a != "" && !ok {
				t.Errorf("fault kind %s names alert %s, not a rule of alerts.yml", k, a)
			}
		}
	}
	for a := range nemesisRunAlerts {
		if _, ok := fors[a]; !ok {
			t.Errorf("nemesisRunAlerts names %s, not a rule of alerts.yml", a)
		}
	}
	for _, want := range []struct {
		alert string
		d     time.Duration
	}{{"GatewayDown", 5 * time.Second}, {"PlatformProcessDown", 10 * time.Second}, {"PatroniNoSyncStandby", 10 * time.Second},
		{"GatewayErrorRatio", 5 * time.Minute}, {"BackupMissing", 15 * time.Minute}} {
		if fors[want.alert] != want.d {
			t.Errorf("nemesis rules: %s for: %s, want %s", want.alert, fors[want.alert], want.d)
		}
	}
}
