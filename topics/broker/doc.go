// Package broker is the embedded Kafka-protocol broker of single-machine
// runs and tests: franz-go's kfake persisted on disk, with the group commit
// (durable.go) that fsyncs what each acknowledgement needs. A deployment
// that outgrows it runs a Kafka cluster (KAFKA_BROKERS) instead.
package broker
