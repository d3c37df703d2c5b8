// Command platform is the one binary of the platform. Subcommands:
//
//	run              everything in one process (embedded Kafka when KAFKA_BROKERS is unset)
//	gateway          the HTTP gateway only
//	consume <group>  one consumer group
//	relay            the outbox relay
//	broker           the embedded Kafka-protocol broker alone
//	migrate          apply the Postgres migrations
//	topics           create missing topics and list them
//	version          print the build
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// release is the build's git commit, set with -ldflags "-X main.release=...".
var release = "dev"

// apiVersion is the version of the published interface.
const apiVersion = "1.0.0"

const usage = `usage: platform <command> [args]

commands:
  run [--accept-gap]  gateway, every consumer group, relay, dispatcher and sink in one process
  gateway          the HTTP gateway only (needs KAFKA_BROKERS)
  consume [--accept-gap] <group>  one consumer group (needs KAFKA_BROKERS); groups: %s
                   --accept-gap: a group whose next records are gone from a topic skips them (audited)
  relay            the outbox relay (needs KAFKA_BROKERS)
  broker           the embedded Kafka-protocol broker alone (DATA_DIR, KAFKA_EMBEDDED_PORT)
  migrate          apply the Postgres migrations
  topics           create missing topics and list them
  ledger reanchor  append missing ledger entries through the appender
  admin create [--role fiat,gov,charity,reputation] <email>
                   create a verified admin account (password from the prompt or stdin)
  admin verify [--i-know-who-registered] <email>
                   mark an account's e-mail verified; refused for a self-registered one without the flag
  dlq list|replay <id>|discard <id>  records parked on the <topic>.dlq topics
  dlq show <id>    a parked record's headers and bytes
  webhooks listen --forward-to URL  forward your events, signed, to a local URL
  verify           check the database against itself and the modules against each other
  healthcheck URL  exit 0 when a loopback URL answers 200 (container health checks)
  envfile write <path>  record the configuration set in the environment (make run does)
  version          print the build

Settings come from the environment, then from an env file for what it leaves
unset: --env-file PATH or PLATFORM_ENV_FILE (none: no file), else
$DATA_DIR/platform.env, else ./.data/platform.env, which make run writes.
`

func main() {
	os.Exit(runMain(os.Args[1:]))
}

func runMain(args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintf(os.Stderr, usage, groupNames())
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "version" {
		fmt.Printf("platform %s (release %s)\n", apiVersion, release)
		return 0
	}
	if args[0] == "healthcheck" {
		return runHealthcheck(args[1:])
	}
	if args[0] == "webhooks" {
		// A client of a running platform: no server configuration.
		return runWebhooks(args[1:])
	}
	if args[0] == "envfile" {
		// Records the real environment: never read from an older file.
		if err := cmdEnvFile(args[1:], os.Getenv); err != nil {
			fmt.Fprintln(os.Stderr, "platform: "+err.Error())
			return 2
		}
		return 0
	}
	args, envPath, envSet, err := envFileFlag(args)
	if err == nil && len(args) == 0 {
		err = usageError{"name a command after --env-file"}
	}
	var src envSource
	if err == nil {
		src, err = loadEnvSource(envPath, envSet, os.LookupEnv)
	}
	if err == nil {
		err = checkServerMode(args[0], src)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "platform: "+err.Error())
		return 2
	}
	if args[0] == "verify" {
		// Checks a database against itself: DATABASE_URL only, no serving
		// secrets, read like every command's settings (env file included).
		return runVerify(args[1:], src.getenv, os.Stdout)
	}
	cfg, err := LoadConfigFor(args[0], src.getenv)
	if err != nil {
		// One line per problem, each naming its variable, so an operator
		// sees every missing setting at once.
		for _, l := range lines(err) {
			fmt.Fprintln(os.Stderr, "platform: configuration: "+l)
		}
		if src.path == "" {
			fmt.Fprintln(os.Stderr, "platform: no env file was read: to use the settings of a `make run` stack, run from its repository root, set DATA_DIR, or pass --env-file DATA_DIR/platform.env")
		} else {
			fmt.Fprintln(os.Stderr, "platform: settings were read from the environment, then "+src.path)
		}
		return 2
	}
	tuneGC(cfg, os.Getenv)
	if args[0] != "topics" || len(cfg.KafkaBrokers) > 0 {
		fmt.Fprintln(os.Stderr, targetLine(cfg, src))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	switch args[0] {
	case "run":
		err = cmdRun(ctx, cfg, args[1:])
	case "gateway":
		err = cmdGateway(ctx, cfg, args[1:])
	case "consume":
		err = cmdConsume(ctx, cfg, args[1:])
	case "relay":
		err = cmdRelay(ctx, cfg, args[1:])
	case "broker":
		err = cmdBroker(ctx, cfg, args[1:])
	case "migrate":
		err = cmdMigrate(ctx, cfg, args[1:])
	case "topics":
		err = cmdTopics(ctx, cfg, args[1:])
	case "ledger":
		err = cmdLedger(ctx, cfg, args[1:])
	case "admin":
		err = cmdAdmin(ctx, cfg, args[1:])
	case "dlq":
		err = cmdDLQ(ctx, cfg, args[1:])
	default:
		fmt.Fprintf(os.Stderr, "platform: unknown command %q\n", args[0])
		fmt.Fprintf(os.Stderr, usage, groupNames())
		return 2
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "platform: "+oneLine(err))
		if _, ok := err.(usageError); ok {
			return 2
		}
		return 1
	}
	return 0
}

// usageError is a bad flag or argument: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }
