// Command platform is the one binary of the platform. Subcommands (the
// subcommands table in cli.go; `platform help` prints it, and
// TestCommandDocs keeps this list and the README's table equal to it):
//
//	run              everything in one process (embedded Kafka when KAFKA_BROKERS is unset)
//	gateway          the HTTP gateway only
//	consume          one consumer group (--list: the groups)
//	relay            the outbox relay
//	broker           the embedded Kafka-protocol broker alone
//	migrate          apply the Postgres migrations
//	topics           create missing topics and list them
//	ledger           append missing ledger entries through the appender
//	admin            create or verify an admin account
//	dlq              records parked on the <topic>.dlq topics
//	verify           check the database against itself
//	webhooks         forward your events to a local URL
//	healthcheck      exit 0 when a loopback URL answers 200
//	envfile          write the environment, or fresh secrets, as an env file
//	render           a Patroni or pgBackRest configuration
//	version          print the build
//	help             this list
package main

import (
	"os"
)

// release is the build's git commit, set with -ldflags "-X main.release=...".
var release = "dev"

// apiVersion is the version of the published interface.
const apiVersion = "1.0.0"

func main() {
	os.Exit(runMain(os.Args[1:]))
}

// usageError is a bad flag or argument: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }
