package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/fintech/platform/topics"
)

// cost is what a platform run used, read before and after it: Kafka records
// written (every topic's end offsets), fsyncs (the embedded broker's group
// commit and Postgres's WAL), Postgres round trips of the consumer batches,
// and the CPU of the platform and of the Postgres server.
type cost struct {
	records      int64
	byTopic      map[string]int64
	brokerFsyncs float64
	walSyncs     int64
	roundTrips   float64
	batches      float64
	// commands is the fiat applier's records in batches (the batch size
	// histogram's sum); commands / batches is the commands per batch.
	commands float64
	pgCPU    time.Duration
	// chCPU is the ClickHouse servers'; busy and cores the machine's, busy
	// and all (every core's time), to show how close to saturated it ran.
	chCPU      time.Duration
	busy, cpus time.Duration
}

// meter reads the counters a cost is made of.
type meter struct {
	lags        *lagReader
	db          *pgxpool.Pool
	metricsAddr string
	postmaster  int // the Postgres server's pid, 0 when unknown
}

func newMeter(ctx context.Context, lags *lagReader, db *pgxpool.Pool, metricsAddr string) *meter {
	m := &meter{lags: lags, db: db, metricsAddr: metricsAddr}
	var dataDir string
	if err := db.QueryRow(ctx, `SHOW data_directory`).Scan(&dataDir); err == nil {
		if raw, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid")); err == nil {
			m.postmaster, _ = strconv.Atoi(strings.TrimSpace(strings.SplitN(string(raw), "\n", 2)[0]))
		}
	}
	return m
}

// read returns the counters now; a counter that cannot be read is 0 (the
// report then says n/a rather than a wrong figure).
func (m *meter) read(ctx context.Context) cost {
	u := cost{byTopic: map[string]int64{}}
	var names []string
	for _, s := range topics.All() {
		names = append(names, s.Name)
	}
	if ends, err := m.lags.adm.ListEndOffsets(ctx, names...); err == nil {
		ends.Each(func(o kadm.ListedOffset) {
			u.records += o.Offset
			u.byTopic[o.Topic] += o.Offset
		})
	}
	_ = m.db.QueryRow(ctx, `SELECT wal_sync FROM pg_stat_wal`).Scan(&u.walSyncs)
	if fams, err := scrape(m.metricsAddr); err == nil {
		u.brokerFsyncs = sumOf(fams, "platform_broker_fsyncs_total", nil)
		fiat := map[string]string{"group": topics.GroupFiat}
		u.roundTrips = sumOf(fams, "platform_consumer_roundtrips_total", fiat)
		u.batches = sumOf(fams, "platform_consumer_batch_size", fiat)
		u.commands = histSum(fams, "platform_consumer_batch_size", fiat)
	}
	u.pgCPU = serverCPU(m.postmaster)
	u.chCPU = clickHouseCPU()
	u.busy, u.cpus = machineCPU()
	return u
}

// sub returns the change from b to u.
func (u cost) sub(b cost) cost {
	by := map[string]int64{}
	for t, n := range u.byTopic {
		if d := n - b.byTopic[t]; d != 0 {
			by[t] = d
		}
	}
	return cost{records: u.records - b.records, byTopic: by, brokerFsyncs: u.brokerFsyncs - b.brokerFsyncs,
		walSyncs: u.walSyncs - b.walSyncs, roundTrips: u.roundTrips - b.roundTrips, batches: u.batches - b.batches,
		commands: u.commands - b.commands, pgCPU: u.pgCPU - b.pgCPU, chCPU: u.chCPU - b.chCPU,
		busy: u.busy - b.busy, cpus: u.cpus - b.cpus}
}

// scrape reads the platform's Prometheus endpoint.
func scrape(addr string) (map[string]*dto.MetricFamily, error) {
	if addr == "" {
		return nil, fmt.Errorf("no metrics address")
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(resp.Body)
}

// sumOf adds every sample of a counter (or a histogram's count) whose labels
// include match.
func sumOf(fams map[string]*dto.MetricFamily, name string, match map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
	var total float64
	for _, m := range f.GetMetric() {
		ok := true
		for k, v := range match {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			ok = ok && found
		}
		if !ok {
			continue
		}
		switch {
		case m.GetCounter() != nil:
			total += m.GetCounter().GetValue()
		case m.GetHistogram() != nil:
			total += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return total
}

// histSum adds the sample sums of a histogram's series whose labels include
// match.
func histSum(fams map[string]*dto.MetricFamily, name string, match map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
	var total float64
	for _, m := range f.GetMetric() {
		if h := m.GetHistogram(); h != nil && hasLabels(m, match) {
			total += h.GetSampleSum()
		}
	}
	return total
}

func hasLabels(m *dto.Metric, match map[string]string) bool {
	for k, v := range match {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == k && l.GetValue() == v {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// serverCPU returns the CPU time of a Postgres server: the postmaster's own,
// what its exited children used (cutime/cstime), and every live child's.
func serverCPU(postmaster int) time.Duration {
	if postmaster <= 0 {
		return 0
	}
	stat := func(pid string) []string {
		raw, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return nil
		}
		s := string(raw)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			return nil
		}
		return strings.Fields(s[i+1:]) // [0] is state, [1] ppid, [11..14] utime stime cutime cstime
	}
	ticks := func(f []string, from, to int) int64 {
		var n int64
		for i := from; i <= to && i < len(f); i++ {
			v, _ := strconv.ParseInt(f[i], 10, 64)
			n += v
		}
		return n
	}
	own := stat(strconv.Itoa(postmaster))
	if own == nil {
		return 0
	}
	total := ticks(own, 11, 14)
	entries, _ := os.ReadDir("/proc")
	pp := strconv.Itoa(postmaster)
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		if f := stat(e.Name()); len(f) > 1 && f[1] == pp {
			total += ticks(f, 11, 12)
		}
	}
	return time.Duration(total) * time.Second / clockTicks
}

// peakRSS returns the highest resident set size of process pid (VmHWM), 0
// when it cannot be read.
func peakRSS(pid int) int64 {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}
