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

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/console"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/dlq"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/topics"
)

// cmdDLQ lists, replays and discards the records the consumers parked on
// the <topic>.dlq topics, with the same environment as `platform run` and
// the same code as /api/platform/admin/dlq (so the same audit rows):
//
//	platform dlq list [-topic fiat.commands] [-limit 50]
//	platform dlq replay <id>
//	platform dlq discard <id>
//
// Without KAFKA_BROKERS it reaches the embedded broker of a running
// `platform run` on KAFKA_EMBEDDED_PORT.
func cmdDLQ(ctx context.Context, cfg Config, args []string) error {
	const use = "dlq: usage: platform dlq list [-topic T] [-limit N] | show <id> | replay <id> | discard <id>"
	if len(args) == 0 {
		return usageError{use}
	}
	var topic string
	var limit int
	rest, err := parseFlags("dlq "+args[0], args[1:], func(fs *flag.FlagSet) {
		if args[0] == "list" {
			fs.StringVar(&topic, "topic", "", "one DLQ topic or its source topic")
			fs.IntVar(&limit, "limit", bind.DefaultLimit, "records to list")
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
		if _, err := console.DLQTopic(topic); err != nil {
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
	tooling, err := console.NewDLQ(ops, dlq.NewStore(pool), time.Now)
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
		printDLQ(recs[:min(len(recs), max(limit, 1))])
		return nil
	case "show":
		rec, headers, value, err := tooling.Show(ctx, rest[0])
		if err != nil {
			return dlqCLIError(rest[0], err)
		}
		printDLQRecord(os.Stdout, rec, headers, value)
		return nil
	case "replay":
		rec, err := tooling.Replay(ctx, rest[0], cliActor())
		if err != nil {
			return dlqCLIError(rest[0], err)
		}
		fmt.Printf("replayed %s: %s published again to %s (replays: %d)\n", rec.ID, describeCommand(rec), rec.SourceTopic, rec.Replays)
		return nil
	default:
		rec, err := tooling.Discard(ctx, rest[0], cliActor())
		if err != nil {
			return dlqCLIError(rest[0], err)
		}
		fmt.Printf("discarded %s (%s)\n", rec.ID, describeCommand(rec))
		return nil
	}
}

// describeCommand names a parked record's command, or says it had none
// readable (a record that was not a readable envelope).
func describeCommand(r schemas.DLQRecord) string {
	switch {
	case r.CommandID != "" && r.Type != "":
		return "command " + r.CommandID + ", " + r.Type
	case r.CommandID != "":
		return "command " + r.CommandID
	default:
		return "a record with no readable command id"
	}
}

// printDLQRecord prints one parked record: its fields, its headers and its
// bytes (as text when they are printable UTF-8, else hex).
func printDLQRecord(w io.Writer, r schemas.DLQRecord, headers map[string]string, value []byte) {
	fmt.Fprintf(w, "id:        %s\nstate:     %s (replays: %d)\ntopic:     %s (source %s)\nkey:       %s\n", r.ID, r.State, r.Replays, r.Topic, r.SourceTopic, r.Key)
	fmt.Fprintf(w, "command:   %s\nparked:    %s\nerror:     %s\n", describeCommand(r), r.FirstSeenAt.Format(time.RFC3339), r.Error)
	fmt.Fprintln(w, "headers:")
	for _, k := range sortedKeys(headers) {
		fmt.Fprintf(w, "  %s: %q\n", k, headers[k])
	}
	fmt.Fprintf(w, "value (%d bytes):\n", len(value))
	if utf8.Valid(value) && !strings.ContainsFunc(string(value), func(c rune) bool { return c < ' ' && c != '\n' && c != '\t' && c != '\r' }) {
		fmt.Fprintln(w, string(value))
		return
	}
	fmt.Fprint(w, hex.Dump(value))
}

func printDLQ(recs []schemas.DLQRecord) {
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tSTATE\tTYPE\tCOMMAND\tKEY\tPARKED\tERROR")
	for _, r := range recs {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.State, r.Type, r.CommandID, r.Key,
			r.FirstSeenAt.Format(time.RFC3339), strings.ReplaceAll(r.Error, "\n", " "))
	}
	_ = w.Flush()
}

func dlqCLIError(id string, err error) error {
	if errors.Is(err, console.ErrUnknownRecord) {
		return fmt.Errorf("dlq: no parked record %q (ids are <dlq topic>:<partition>:<offset>, see `platform dlq list`)", id)
	}
	if errors.Is(err, console.ErrInvalidState) {
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
