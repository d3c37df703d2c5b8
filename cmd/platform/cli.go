package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// subcommand is one command of the binary. The table below is the one
// place a command is declared: help, the package documentation's list
// (checked by TestCommandDocs) and the production checks come from it.
type subcommand struct {
	name string
	// synopsis follows the name in help; help is one or more lines.
	synopsis, help string
	// needs is what the command needs set in production: nil is every
	// serving setting; an empty list is nothing. Only a command that loads
	// the configuration (in.config) is checked.
	needs []string
	// server: a long-running process whose mode comes from its own
	// environment, never from the env file (checkServerMode).
	server bool
	run    func(in *invocation) error
}

// subcommands is every command, in the order help lists them.
var subcommands = []subcommand{
	{name: "run", synopsis: "[--accept-gap]", help: "gateway, every consumer group, relay, dispatcher and sink in one process",
		server: true, run: func(in *invocation) error { return withConfig(in, cmdRun) }},
	{name: "gateway", help: "the HTTP gateway only (needs KAFKA_BROKERS)",
		server: true, run: func(in *invocation) error { return withConfig(in, cmdGateway) }},
	{name: "consume", synopsis: "[--accept-gap] <group> | --list",
		help: "one consumer group (needs KAFKA_BROKERS); --list prints the groups, one a line: {groups}\n" +
			"--accept-gap: a group whose next records are gone from a topic skips them (audited)",
		server: true, run: runConsume},
	{name: "relay", help: "the outbox relay (needs KAFKA_BROKERS)",
		server: true, run: func(in *invocation) error { return withConfig(in, cmdRelay) }},
	{name: "broker", help: "the embedded Kafka-protocol broker alone (DATA_DIR, KAFKA_EMBEDDED_PORT)",
		server: true, run: func(in *invocation) error { return withConfig(in, cmdBroker) }},
	// Its data step seals legacy withdrawal destinations and opens the
	// keys, which checks each against its stored fingerprint.
	{name: "migrate", help: "apply the Postgres migrations",
		needs: []string{"DATABASE_URL", "DATA_ENCRYPTION_KEY", "SIGNING_MASTER_KEY", "LEDGER_SALT"},
		run:   func(in *invocation) error { return withConfig(in, cmdMigrate) }},
	{name: "topics", help: "create missing topics and list them", needs: []string{},
		run: func(in *invocation) error { return withConfig(in, cmdTopics) }},
	// The operator commands work on the database only and must not demand
	// the serving secrets, or an operator would paste them into a shell.
	{name: "ledger", synopsis: "reanchor [-dry-run]", help: "append missing ledger entries through the appender",
		needs: []string{"DATABASE_URL"}, run: func(in *invocation) error { return withConfig(in, cmdLedger) }},
	{name: "admin", synopsis: "create [--role fiat,gov,charity,reputation] <email> | verify [--i-know-who-registered] <email>",
		help: "create a verified admin account (password from the prompt or stdin), or mark an account's\n" +
			"e-mail verified (refused for a self-registered one without the flag)",
		needs: []string{"DATABASE_URL"}, run: func(in *invocation) error { return withConfig(in, cmdAdmin) }},
	{name: "dlq", synopsis: "list [-topic T] [-limit N] | show <id> | replay <id> | discard <id>",
		help:  "records parked on the <topic>.dlq topics",
		needs: []string{"DATABASE_URL"}, run: func(in *invocation) error { return withConfig(in, cmdDLQ) }},
	// Checks a database against itself: DATABASE_URL only (it says so
	// itself), no serving secrets.
	{name: "verify", help: "check the database against itself and the modules against each other",
		run: func(in *invocation) error { return exitStatusErr(runVerify(in.args, in.src.getenv, in.stdout)) }},
	// A client of a running platform: no server configuration.
	{name: "webhooks", synopsis: "listen --forward-to URL", help: "forward your events, signed, to a local URL",
		run: func(in *invocation) error { return exitStatusErr(runWebhooks(in.ctx, in.args, in.src.getenv)) }},
	{name: "healthcheck", synopsis: "URL", help: "exit 0 when a loopback URL answers 200 (container health checks)",
		run: func(in *invocation) error { return exitStatusErr(runHealthcheck(in.args)) }},
	{name: "envfile", synopsis: "write <path> | secrets [<path>]",
		help: "write: record the configuration set in the environment (make run does);\n" +
			"secrets: fresh development secrets in their formats (cluster.sh keeps them)",
		run: runEnvFile},
	{name: "render", synopsis: "patroni|pgbackrest [--stdin] [NAME=VALUE ...]",
		help: "a Patroni member's or pgBackRest's configuration from the one embedded template\n" +
			"(deploy/local/cluster.sh, stack.sh and compose's files)",
		run: runRender},
	{name: "version", help: "print the build", run: func(in *invocation) error {
		if _, err := parseFlags("version", in.args, nil); err != nil {
			return err
		}
		fmt.Fprintf(in.stdout, "platform %s (release %s)\n", apiVersion, release)
		return nil
	}},
	{name: "help", help: "this list (also -h, --help)"}, // run: init (it prints this table)
}

func init() {
	commandNamed("help").run = func(in *invocation) error {
		if _, err := parseFlags("help", in.args, nil); err != nil {
			return err
		}
		fmt.Fprint(in.stdout, usageText())
		return nil
	}
}

// commandNamed is the subcommand called name, or nil.
func commandNamed(name string) *subcommand {
	for i := range subcommands {
		if subcommands[i].name == name {
			return &subcommands[i]
		}
	}
	return nil
}

// productionNeeds is what command needs set in production (nil: every
// serving setting).
func productionNeeds(command string) []string {
	if c := commandNamed(command); c != nil {
		return c.needs
	}
	return nil
}

// usageText is help: every command of the table.
func usageText() string {
	var b strings.Builder
	b.WriteString("usage: platform <command> [args] [--env-file PATH]\n\ncommands:\n")
	for _, c := range subcommands {
		head := c.name
		if c.synopsis != "" {
			head += " " + c.synopsis
		}
		help := strings.Split(strings.ReplaceAll(c.help, "{groups}", groupNames()), "\n")
		if len(head) <= 16 {
			fmt.Fprintf(&b, "  %-16s %s\n", head, help[0])
		} else {
			fmt.Fprintf(&b, "  %s\n  %-16s %s\n", head, "", help[0])
		}
		for _, l := range help[1:] {
			fmt.Fprintf(&b, "  %-16s %s\n", "", l)
		}
	}
	b.WriteString(`
Settings come from the environment, then from an env file for what it leaves
unset: --env-file PATH or PLATFORM_ENV_FILE (none: no file), else
$DATA_DIR/platform.env, else ./.data/platform.env, which make run writes.
Every command takes --env-file.
`)
	return b.String()
}

// invocation is one run of a subcommand.
type invocation struct {
	ctx    context.Context
	cmd    *subcommand
	args   []string
	src    envSource
	stdout io.Writer
}

// configError is a configuration that does not load: one line per problem.
type configError struct {
	err error
	src envSource
}

func (e configError) Error() string { return e.err.Error() }

// config loads the configuration for the command (its production needs),
// then tunes the collector and prints the target line.
func (in *invocation) config() (Config, error) {
	if err := checkServerMode(in.cmd, in.src); err != nil {
		return Config{}, usageError{err.Error()}
	}
	cfg, err := loadConfig(in.src.getenv, in.cmd.needs)
	if err != nil {
		return cfg, configError{err, in.src}
	}
	tuneGC(cfg, os.Getenv)
	if in.cmd.name != "topics" || len(cfg.KafkaBrokers) > 0 {
		fmt.Fprintln(os.Stderr, targetLine(cfg, in.src))
	}
	return cfg, nil
}

// withConfig runs a command of the configuration.
func withConfig(in *invocation, f func(context.Context, Config, []string) error) error {
	cfg, err := in.config()
	if err != nil {
		return err
	}
	return f(in.ctx, cfg, in.args)
}

// exitStatus is an exit code whose message was printed already.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func exitStatusErr(code int) error {
	if code == 0 {
		return nil
	}
	return exitStatus(code)
}

func runMain(args []string) int {
	args, envPath, envSet, err := envFileFlag(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "platform: "+err.Error())
		return 2
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(os.Stderr, usageText())
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd := commandNamed(args[0])
	if cmd == nil {
		fmt.Fprintf(os.Stderr, "platform: unknown command %q\n", args[0])
		fmt.Fprint(os.Stderr, usageText())
		return 2
	}
	src, err := loadEnvSource(envPath, envSet, os.LookupEnv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "platform: "+err.Error())
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	in := &invocation{ctx: ctx, cmd: cmd, args: args[1:], src: src, stdout: os.Stdout}
	return exitCode(cmd.run(in))
}

// exitCode prints err and says the exit status: 2 for a usage or
// configuration error, 1 for a failure.
func exitCode(err error) int {
	var status exitStatus
	var cerr configError
	var uerr usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &status):
		return int(status)
	case errors.As(err, &cerr):
		// One line per problem, each naming its variable, so an operator
		// sees every missing setting at once.
		for _, l := range lines(cerr.err) {
			fmt.Fprintln(os.Stderr, "platform: configuration: "+l)
		}
		if cerr.src.path == "" {
			fmt.Fprintln(os.Stderr, "platform: no env file was read: to use the settings of a `make run` stack, run from its repository root, set DATA_DIR, or pass --env-file DATA_DIR/platform.env")
		} else {
			fmt.Fprintln(os.Stderr, "platform: settings were read from the environment, then "+cerr.src.path)
		}
		return 2
	case errors.As(err, &uerr):
		fmt.Fprintln(os.Stderr, "platform: "+oneLine(err))
		return 2
	default:
		fmt.Fprintln(os.Stderr, "platform: "+oneLine(err))
		return 1
	}
}

// runConsume is `platform consume`: --list needs no configuration.
func runConsume(in *invocation) error {
	var list, acceptGap bool
	rest, err := parseFlags("consume", in.args, func(fs *flag.FlagSet) {
		fs.BoolVar(&list, "list", false, "print the consumer groups")
		gapFlag(&acceptGap)(fs)
	})
	if err != nil {
		return err
	}
	if list {
		if len(rest) != 0 {
			return usageError{"consume: --list takes no group"}
		}
		for _, g := range strings.Split(groupNames(), ", ") {
			fmt.Fprintln(in.stdout, g)
		}
		return nil
	}
	return withConfig(in, cmdConsume)
}

// runEnvFile is `platform envfile write|secrets`.
func runEnvFile(in *invocation) error {
	if len(in.args) > 0 && in.args[0] == "secrets" {
		if len(in.args) > 2 {
			return usageError{"envfile: usage: platform envfile secrets [<path>]"}
		}
		s, err := secretLines()
		if err != nil {
			return err
		}
		if len(in.args) == 1 {
			_, err = io.WriteString(in.stdout, s)
			return err
		}
		return writeFile0600(in.args[1], s)
	}
	// write records the real environment, and an env file only when one
	// is named (--env-file): never an older file found by default.
	getenv := os.Getenv
	if in.src.path != "" && in.src.explicit {
		getenv = in.src.getenv
	}
	return cmdEnvFile(in.args, getenv)
}
