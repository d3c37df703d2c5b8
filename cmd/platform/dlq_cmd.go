package main

import (
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/fintech/platform/gateway/dlq"
	"github.com/fintech/platform/schemas"
	dlqstore "github.com/fintech/platform/storage/dlq"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/topics"
)

// cmdDLQ lists, shows, replays and discards the records the consumers
// parked on the <topic>.dlq topics, with the same environment as `platform
// run` and the same code as /api/platform/admin/dlq (gateway/dlq, so the same
// audit rows):
//
//	platform dlq list [-topic fiat.commands] [-limit 50]
//	platform dlq show <id>
//	platform dlq replay <id>
//	platform dlq discard <id>
//
// Without KAFKA_BROKERS it reaches the embedded broker of a running
// `platform run` on KAFKA_EMBEDDED_PORT.
func cmdDLQ(ctx context.Context, cfg Config, args []string) error {
	return runDLQ(ctx, cfg, args, os.Stdout)
}

// runDLQ is cmdDLQ printing to w.
func runDLQ(ctx context.Context, cfg Config, args []string, w io.Writer) error {
	const use = "dlq: usage: platform dlq list [-topic T] [-limit N] | show <id> | replay <id> | discard <id>"
	if len(args) == 0 {
		return usageError{use}
	}
	var topic string
	var limit int
	rest, err := parseFlags("dlq "+args[0], args[1:], func(fs *flag.FlagSet) {
		if args[0] == "list" {
			fs.StringVar(&topic, "topic", "", "one DLQ topic or its source topic")
			fs.IntVar(&limit, "limit", dlq.DefaultLimit, "records to list")
		}
	})
	if err != nil {
		return err
	}
	switch {
	case args[0] == "list" && len(rest) == 0:
	case (args[0] == "show" || args[0] == "replay" || args[0] == "discard") && len(rest) == 1:
	default:
		return usageError{use}
	}
	if topic != "" {
		if _, err := dlq.Topic(topic); err != nil {
			return usageError{fmt.Sprintf("dlq list: -topic %q is not a topic with a DLQ", topic)}
		}
	}
	pool, err := postgres.Connect(ctx, cfg.DatabaseURL, 2)
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	defer pool.Close()
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	brokers := cfg.KafkaBrokers
	if len(brokers) == 0 {
		brokers = []string{fmt.Sprintf("127.0.0.1:%d", cfg.KafkaPort)}
	}
	if err := reachable(ctx, cfg, brokers); err != nil {
		return err
	}
	ops, err := topics.NewOps(brokers)
	if err != nil {
		return fmt.Errorf("KAFKA_BROKERS: %w", err)
	}
	defer ops.Close()
	tooling, err := dlq.New(ops, dlqstore.NewStore(pool), time.Now)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	switch args[0] {
	case "list":
		recs, err := tooling.List(ctx, topic, "", max(limit, 1))
		if err != nil {
			return err
		}
		printDLQ(w, recs[:min(len(recs), max(limit, 1))])
		return nil
	case "show":
		shown, err := tooling.Show(ctx, rest[0])
		if err != nil {
			return dlqCLIError(rest[0], err)
		}
		printDLQRecord(w, shown)
		return nil
	case "replay":
		rec, err := tooling.Replay(ctx, rest[0], cliActor())
		if err != nil {
			return dlqCLIError(rest[0], err)
		}
		fmt.Fprintf(w, "replayed %s: %s published again to %s (replays: %d)\n", rec.ID, dlq.Describe(rec), rec.SourceTopic, rec.Replays)
		return nil
	default:
		rec, err := tooling.Discard(ctx, rest[0], cliActor())
		if err != nil {
			return dlqCLIError(rest[0], err)
		}
		fmt.Fprintf(w, "discarded %s (%s)\n", rec.ID, dlq.Describe(rec))
		return nil
	}
}

// printDLQRecord prints one parked record: its fields, its headers, its
// bytes (as text when they are printable UTF-8, else hex) and the decisions
// about it.
func printDLQRecord(w io.Writer, s dlq.Shown) {
	r := s.Record
	fmt.Fprintf(w, "id:        %s\nstate:     %s (replays: %d)\ntopic:     %s (source %s)\nkey:       %s\n", r.ID, r.State, r.Replays, r.Topic, r.SourceTopic, r.Key)
	fmt.Fprintf(w, "command:   %s\nparked:    %s\nerror:     %s\n", dlq.Describe(r), r.FirstSeenAt.Format(time.RFC3339), r.Error)
	fmt.Fprintln(w, "headers:")
	for _, k := range sortedKeys(s.Headers) {
		fmt.Fprintf(w, "  %s: %q\n", k, s.Headers[k])
	}
	fmt.Fprintf(w, "value (%d bytes):\n", len(s.Value))
	if utf8.Valid(s.Value) && !strings.ContainsFunc(string(s.Value), func(c rune) bool { return c < ' ' && c != '\n' && c != '\t' && c != '\r' }) {
		fmt.Fprintln(w, string(s.Value))
	} else {
		fmt.Fprint(w, hex.Dump(s.Value))
	}
	if len(s.History) > 0 {
		fmt.Fprintln(w, "decisions:")
		for _, a := range s.History {
			fmt.Fprintf(w, "  %s %s by %s: %s\n", a.CreatedAt.UTC().Format(time.RFC3339), a.Action, a.Actor, a.Detail)
		}
	}
}

func printDLQ(w io.Writer, recs []schemas.DLQRecord) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tTYPE\tCOMMAND\tKEY\tPARKED\tREPLAY OF\tERROR")
	for _, r := range recs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.State, r.Type, r.CommandID, r.Key,
			r.FirstSeenAt.Format(time.RFC3339), firstOr(r.ReplayOf, "-"), strings.ReplaceAll(r.Error, "\n", " "))
	}
	_ = tw.Flush()
}

func firstOr(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

func dlqCLIError(id string, err error) error {
	if errors.Is(err, dlq.ErrUnknownRecord) {
		return fmt.Errorf("dlq: no parked record %q (ids are <dlq topic>:<partition>:<offset>, see `platform dlq list`)", id)
	}
	if errors.Is(err, dlq.ErrInvalidState) {
		return fmt.Errorf("dlq: %s was already replayed; a record is replayed once (it cannot be replayed again or discarded)", id)
	}
	return err
}

// cliActor names the operator in the audit log.
func cliActor() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return "cli:" + u.Username
	}
	return "cli"
}

// reachable dials the brokers once, so an unreachable one is named with
// the setting that chose it instead of surfacing as a client timeout.
func reachable(ctx context.Context, cfg Config, brokers []string) error {
	var d net.Dialer
	var last error
	for _, b := range brokers {
		dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		c, err := d.DialContext(dctx, "tcp", b)
		cancel()
		if err == nil {
			c.Close()
			return nil
		}
		last = err
	}
	if len(cfg.KafkaBrokers) > 0 {
		return fmt.Errorf("KAFKA_BROKERS: cannot reach %s: %w", strings.Join(brokers, ","), last)
	}
	return fmt.Errorf("broker: cannot reach the embedded broker at %s (%w): is `platform run` up? "+
		"It listens on KAFKA_EMBEDDED_PORT (%d here); run this with the stack's settings (--env-file DATA_DIR/platform.env, which make run writes) "+
		"or set KAFKA_EMBEDDED_PORT, or KAFKA_BROKERS for an external cluster", brokers[0], last, cfg.KafkaPort)
}
