package main

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

// TestBrokerCommand: `platform broker` refuses to run beside KAFKA_BROKERS
// (it is the broker), and otherwise serves the Kafka protocol on
// KAFKA_EMBEDDED_PORT until stopped.
func TestBrokerCommand(t *testing.T) {
	var ue usageError
	if err := cmdBroker(context.Background(), Config{KafkaBrokers: []string{"127.0.0.1:1"}}, nil); !errors.As(err, &ue) {
		t.Fatalf("with KAFKA_BROKERS set: %v, want a usage error", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmdBroker(ctx, Config{DataDir: t.TempDir(), KafkaPort: port, LogLevel: "error"}, nil) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", l.Addr().String(), time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the broker does not listen on %d: %v", port, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("broker stopped with %v", err)
	}
}
