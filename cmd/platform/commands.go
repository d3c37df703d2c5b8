package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/topics"
)

func parseFlags(name string, args []string, define func(fs *flag.FlagSet)) ([]string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if define != nil {
		define(fs)
	}
	if err := fs.Parse(args); err != nil {
		return nil, usageError{fmt.Sprintf("%s: %v", name, err)}
	}
	return fs.Args(), nil
}

// cmdRun runs every part in one process until ctx is cancelled.
func cmdRun(ctx context.Context, cfg Config, args []string) error {
	var acceptGap bool
	if _, err := parseFlags("run", args, gapFlag(&acceptGap)); err != nil {
		return err
	}
	a, err := newApp(ctx, cfg, true)
	if err != nil {
		return err
	}
	defer a.close()
	a.acceptGap = acceptGap
	if _, err := migrateData(ctx, a.pool, a.vault); err != nil {
		return err
	}
	if err := a.startGateway(ctx); err != nil {
		return err
	}
	mods, err := a.modules()
	if err != nil {
		return err
	}
	var factories []func() (runnable, error)
	for _, m := range mods {
		factories = append(factories, m.parts()...)
	}
	parts, err := build(factories)
	if err != nil {
		return err
	}
	return a.serve(ctx, mods, parts)
}

// cmdGateway serves HTTP only; consumers run elsewhere.
func cmdGateway(ctx context.Context, cfg Config, args []string) error {
	if _, err := parseFlags("gateway", args, nil); err != nil {
		return err
	}
	a, err := newApp(ctx, cfg, false)
	if err != nil {
		return err
	}
	defer a.close()
	if err := a.startGateway(ctx); err != nil {
		return err
	}
	mods, err := a.modules()
	if err != nil {
		return err
	}
	return a.serve(ctx, mods, nil)
}

// cmdConsume runs one consumer group (and its module's background loops).
func cmdConsume(ctx context.Context, cfg Config, args []string) error {
	var acceptGap bool
	rest, err := parseFlags("consume", args, gapFlag(&acceptGap))
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageError{"consume: name one group: " + groupNames()}
	}
	a, err := newApp(ctx, cfg, false)
	if err != nil {
		return err
	}
	defer a.close()
	a.acceptGap = acceptGap
	mods, err := a.modules()
	if err != nil {
		return err
	}
	for _, m := range mods {
		if f, ok := m.groups[rest[0]]; ok {
			parts, err := build(append([]func() (runnable, error){f}, m.background...))
			if err != nil {
				return err
			}
			stopMetrics, err := a.startMetrics()
			if err != nil {
				return err
			}
			defer stopMetrics()
			return runAll(ctx, parts)
		}
	}
	return usageError{fmt.Sprintf("consume: unknown group %q; groups: %s", rest[0], strings.Join(moduleGroups(mods), ", "))}
}

// gapFlag defines --accept-gap: a consumer group whose next records are
// gone from a partition (trimmed, past retention, or lost by the broker)
// resumes at the partition's first record, recording the skip in
// consumer_gap_accepts; without it the group stops naming the gap.
func gapFlag(accept *bool) func(fs *flag.FlagSet) {
	return func(fs *flag.FlagSet) {
		fs.BoolVar(accept, "accept-gap", false, "skip records gone from a topic (audited)")
	}
}

// cmdRelay runs the outbox relay only.
func cmdRelay(ctx context.Context, cfg Config, args []string) error {
	if _, err := parseFlags("relay", args, nil); err != nil {
		return err
	}
	a, err := newApp(ctx, cfg, false)
	if err != nil {
		return err
	}
	defer a.close()
	m, err := a.relayModule()
	if err != nil {
		return err
	}
	parts, err := build(m.background)
	if err != nil {
		return err
	}
	// platform_outbox_* (the RelayNotPublishing alert) are served like a
	// consumer's series.
	stopMetrics, err := a.startMetrics()
	if err != nil {
		return err
	}
	defer stopMetrics()
	return runAll(ctx, parts)
}

// cmdMigrate applies the migrations and exits.
func cmdMigrate(ctx context.Context, cfg Config, args []string) error {
	if _, err := parseFlags("migrate", args, nil); err != nil {
		return err
	}
	pool, err := postgres.Connect(ctx, cfg.DatabaseURL, 2)
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	defer pool.Close()
	applied, err := postgres.Migrate(ctx, pool)
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	fmt.Printf("migrations applied: %d\n", len(applied))
	for _, a := range applied {
		fmt.Println("  " + a)
	}
	sealedRows, err := migrateDataWith(ctx, cfg, pool)
	if err != nil {
		return err
	}
	if sealedRows > 0 {
		fmt.Printf("withdrawal destinations sealed: %d\n", sealedRows)
	}
	return nil
}

// cmdTopics creates the missing topics on KAFKA_BROKERS and lists them.
func cmdTopics(ctx context.Context, cfg Config, args []string) error {
	if _, err := parseFlags("topics", args, nil); err != nil {
		return err
	}
	if len(cfg.KafkaBrokers) == 0 {
		fmt.Println("KAFKA_BROKERS is unset: `platform run` embeds a broker with these topics:")
		for _, s := range topics.All() {
			fmt.Printf("  %-24s partitions=%d\n", s.Name, s.Partitions)
		}
		return nil
	}
	cl, err := topics.NewClient(cfg.KafkaBrokers)
	if err != nil {
		return fmt.Errorf("KAFKA_BROKERS: %w", err)
	}
	defer cl.Close()
	if err := topics.EnsureTopics(ctx, cl); err != nil {
		return fmt.Errorf("KAFKA_BROKERS: %w", err)
	}
	have, err := topics.Describe(ctx, cl)
	if err != nil {
		return fmt.Errorf("KAFKA_BROKERS: %w", err)
	}
	for _, name := range sortedKeys(have) {
		fmt.Printf("  %-24s partitions=%d\n", name, have[name])
	}
	return nil
}

// serve runs the HTTP server and the parts until ctx is cancelled, then
// shuts down in order: drain HTTP requests (their commands are still being
// applied), then stop the consumers, which finish their batch and commit
// offsets.
func (a *app) serve(ctx context.Context, mods []module, parts []runnable) error {
	root := a.server.Root()
	for _, m := range mods {
		if m.routes != nil {
			if err := m.routes(root); err != nil {
				return err
			}
		}
	}
	a.server.Finish()
	stopMetrics, err := a.startMetrics()
	if err != nil {
		return err
	}
	defer stopMetrics()

	work, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	done := make(chan error, 1)
	go func() { done <- runAll(work, parts) }()

	if a.cfg.PprofAddr != "" {
		go servePprof(a.cfg.PprofAddr, a.log)
	}
	listenErr := make(chan error, 1)
	go func() { listenErr <- a.server.Listen(a.cfg.Addr) }()
	a.log.Info("platform listening", "addr", a.cfg.Addr, "release", release)
	fmt.Fprintf(os.Stderr, "platform listening on http://%s\n", a.cfg.Addr)

	select {
	case <-ctx.Done():
	case err = <-listenErr:
		if err != nil {
			err = fmt.Errorf("PLATFORM_ADDR: %w", err)
		}
	case err = <-done:
	}
	a.log.Info("shutting down: draining requests")
	if serr := a.server.App.ShutdownWithTimeout(15 * time.Second); serr != nil {
		a.log.Warn("http shutdown", "err", serr)
	}
	a.log.Info("shutting down: stopping consumers")
	stopWork()
	if werr := <-done; werr != nil && err == nil {
		err = werr
	}
	return err
}

// parts lists the factories of every consumer group (in name order) and
// background loop of a module.
func (m module) parts() []func() (runnable, error) {
	var out []func() (runnable, error)
	for _, name := range sortedKeys(m.groups) {
		out = append(out, m.groups[name])
	}
	return append(out, m.background...)
}

// build calls each factory.
func build(factories []func() (runnable, error)) ([]runnable, error) {
	parts := make([]runnable, 0, len(factories))
	for _, f := range factories {
		r, err := f()
		if err != nil {
			return nil, err
		}
		parts = append(parts, r)
	}
	return parts, nil
}

// runAll runs parts until ctx is cancelled or one fails; it waits for all.
func runAll(ctx context.Context, parts []runnable) error {
	if len(parts) == 0 {
		<-ctx.Done()
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(parts))
	for i, p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
				errs[i] = err
				cancel()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
