package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kgo"

	sfiat "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/broker"
)

func TestPendingSegments(t *testing.T) {
	t.Parallel()
	const mb16 = 16 << 20
	for _, c := range []struct {
		last, cur string
		want      uint64
		ok        bool
	}{
		{"00000001000000000000001C", "00000001000000000000001D", 0, true}, // idle: the current one is being written
		{"00000001000000000000001C", "00000001000000000000001C", 0, true},
		{"00000001000000000000001A", "00000001000000000000001D", 2, true},
		{"0000000100000000000000FF", "000000010000000100000002", 2, true}, // across a log id (256 segments of 16 MB)
		{"000000010000000000000003.00000028.backup", "000000010000000000000005", 1, true},
		{"000000010000000000000004.partial", "000000020000000000000006", 1, true}, // a new timeline continues the numbers
		{"", "000000010000000000000005", 5, true},                                 // nothing archived yet
		{"00000002.history", "000000020000000000000005", 0, false},
		{"00000001000000000000001C", "", 0, false}, // a standby
	} {
		got, ok := pendingSegments(c.last, c.cur, mb16)
		if got != c.want || ok != c.ok {
			t.Errorf("pendingSegments(%q, %q) = %d, %v; want %d, %v", c.last, c.cur, got, ok, c.want, c.ok)
		}
	}
	// 64 MB segments: 64 of them per log id.
	if got, _ := pendingSegments("00000001000000000000003F", "000000010000000100000001", 64<<20); got != 1 {
		t.Errorf("64 MB segments: %d pending, want 1", got)
	}
}

// pgbackrestInfoJSON is the shape of `pgbackrest info --output=json`
// (trimmed): a full, a failed diff and two incrementals.
const pgbackrestInfoJSON = `[{"name":"platform","status":{"code":0,"message":"ok"},
 "backup":[
  {"label":"20261128-010000F","type":"full","error":false,"timestamp":{"start":1795830000,"stop":1795830100}},
  {"label":"20261128-010000F_20261128-020000D","type":"diff","error":true,"timestamp":{"start":1795833600,"stop":1795833700}},
  {"label":"20261128-010000F_20261128-030000I","type":"incr","timestamp":{"start":1795837200,"stop":1795837260}},
  {"label":"20261128-010000F_20261128-040000I","type":"incr","error":false,"timestamp":{"start":1795840800,"stop":1795840830}}
 ]}]`

func TestNewestBackups(t *testing.T) {
	t.Parallel()
	got, err := newestBackups([]byte(pgbackrestInfoJSON))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"full": 1795830100, "incr": 1795840830}
	if len(got) != len(want) || got["full"] != want["full"] || got["incr"] != want["incr"] {
		t.Fatalf("newestBackups = %v, want %v (the failed diff left out)", got, want)
	}
	if got, err := newestBackups([]byte(`[{"name":"platform","backup":[]}]`)); err != nil || len(got) != 0 {
		t.Fatalf("no backups: %v, %v", got, err)
	}
	if _, err := newestBackups([]byte("ERROR: [055]: unable to load info file")); err == nil {
		t.Fatal("text that is not JSON: no error")
	}
}

func TestBackupCollectorRunsPgbackrestAtMostOnceAMinute(t *testing.T) {
	t.Parallel()
	now := time.Unix(1795840900, 0)
	runs := 0
	out, fail := []byte(pgbackrestInfoJSON), error(nil)
	c := newBackupCollector(func(context.Context) ([]byte, error) { runs++; return out, fail },
		func() time.Time { return now }, slog.New(slog.DiscardHandler))
	want := `# HELP platform_backup_last_completed_timestamp_seconds When the newest complete pgBackRest backup of each type stopped (pgbackrest info).
# TYPE platform_backup_last_completed_timestamp_seconds gauge
platform_backup_last_completed_timestamp_seconds{type="full"} 1.7958301e+09
platform_backup_last_completed_timestamp_seconds{type="incr"} 1.79584083e+09
`
	for range 3 {
		if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
			t.Fatal(err)
		}
	}
	if runs != 1 {
		t.Fatalf("three scrapes within a minute ran pgbackrest %d times, want 1", runs)
	}
	// A minute later it reads again; a failing info leaves the series out
	// (BackupMissing then fires on their absence).
	now = now.Add(time.Minute)
	fail = errors.New("pgbackrest info: exit status 1")
	if n := testutil.CollectAndCount(c); n != 0 || runs != 2 {
		t.Fatalf("after a failed info: %d series, %d runs; want 0 and 2", n, runs)
	}
}

func TestReconcilerSetsDrift(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	g, err := newReconcileGauge(reg)
	if err != nil {
		t.Fatal(err)
	}
	// Registering again (a second module wiring) reuses the gauge.
	if again, err := newReconcileGauge(reg); err != nil || again.drift != g.drift {
		t.Fatalf("second registration: %v", err)
	}
	books := []sfiat.Books{
		{Currency: "EUR", DepositsCredited: 1000, Withdrawn: 100, WalletBalances: 900, ProcessorCredited: 1000},
		{Currency: "USD", DepositsCredited: 500, WalletBalances: 250, ProcessorCredited: 600},
	}
	r := &reconciler{books: func(context.Context) ([]sfiat.Books, error) { return books, nil }, gauge: g,
		interval: time.Minute, log: slog.New(slog.DiscardHandler)}
	if err := r.once(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := `# HELP platform_reconcile_drift_minor Drift the last reconciliation from Postgres found, in minor units, by currency and kind (balances, processor).
# TYPE platform_reconcile_drift_minor gauge
platform_reconcile_drift_minor{currency="EUR",kind="balances"} 0
platform_reconcile_drift_minor{currency="EUR",kind="processor"} 0
platform_reconcile_drift_minor{currency="USD",kind="balances"} 250
platform_reconcile_drift_minor{currency="USD",kind="processor"} 100
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}

func TestDataDirMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	registerDataDirMetrics(reg, t.TempDir())
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		got[f.GetName()] = f.GetMetric()[0].GetGauge().GetValue()
	}
	if got["platform_data_dir_size_bytes"] <= 0 || got["platform_data_dir_avail_bytes"] <= 0 ||
		got["platform_data_dir_avail_bytes"] > got["platform_data_dir_size_bytes"] {
		t.Fatalf("data dir metrics %v: want 0 < avail <= size", got)
	}
}

// TestArchiverCollectorReadsPostgres reads pg_stat_archiver of the local
// stack's Postgres: every series but pending is there whether or not it
// archives, and pending is there on a primary.
func TestArchiverCollectorReadsPostgres(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	reg := prometheus.NewRegistry()
	reg.MustRegister(newArchiverCollector(pool))
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, f := range fams {
		got[f.GetName()] = true
	}
	for _, name := range []string{"platform_pg_wal_archive_last_archived_timestamp_seconds",
		"platform_pg_wal_archive_last_failed_timestamp_seconds", "platform_pg_wal_archive_failed_total",
		"platform_pg_wal_archive_pending_segments"} {
		if !got[name] {
			t.Errorf("%s missing; got %v", name, got)
		}
	}
}

// TestGroupCollector: a group with a member reports it and its committed
// lag; a group the broker never saw has no series.
func TestGroupCollector(t *testing.T) {
	t.Parallel()
	b, err := broker.Start(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prod, err := topics.NewClient(b.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := range 5 {
		if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topics.FiatCommands, Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// A member that reads nothing and commits nothing: all 5 records lag.
	member, err := topics.NewClient(b.Addrs(), kgo.ConsumerGroup(topics.GroupFiat), kgo.ConsumeTopics(topics.FiatCommands),
		kgo.DisableAutoCommit())
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	go func() {
		for ctx.Err() == nil {
			if member.PollFetches(ctx).IsClientClosed() {
				return
			}
		}
	}()

	admin, err := topics.NewClient(b.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	c := newGroupCollector(admin, topics.Groups(), slog.New(slog.DiscardHandler))
	// collects waits until c's metric equals want (its exposition text),
	// failing with what after the test's minute.
	collects := func(metric, want, what string) {
		t.Helper()
		for {
			err := testutil.CollectAndCompare(c, strings.NewReader(want), metric)
			if err == nil {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("%s: %v", what, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	members := `# HELP platform_consumer_group_members Members of a platform consumer group, as its coordinator (the broker) reports them.
# TYPE platform_consumer_group_members gauge
platform_consumer_group_members{group="fiat-applier"} %d
`
	collects("platform_consumer_group_members", fmt.Sprintf(members, 1), "the member never showed")
	// The lag shows once the member holds its assignment (the group is
	// Stable), which may be a moment after it is counted as a member.
	collects("platform_consumer_group_lag", `# HELP platform_consumer_group_lag Records of a topic past a consumer group's committed offsets (the broker's view).
# TYPE platform_consumer_group_lag gauge
platform_consumer_group_lag{group="fiat-applier",topic="fiat.commands"} 5
`, "the lag never showed")
	// The member leaves: the group is still known, with no members
	// (ConsumerGroupWithoutMembers).
	member.Close()
	collects("platform_consumer_group_members", fmt.Sprintf(members, 0), "the group never showed empty")
}
