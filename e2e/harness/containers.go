package harness

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/testcontainers/testcontainers-go"
	tcclickhouse "github.com/testcontainers/testcontainers-go/modules/clickhouse"
	tckafka "github.com/testcontainers/testcontainers-go/modules/kafka"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"
)

// Images used when a Docker engine is reachable: the same major versions as
// docker-compose.yml, in the flavours testcontainers' modules support.
const (
	postgresImage   = "postgres:16-alpine"
	kafkaImage      = "confluentinc/confluent-local:7.5.0"
	clickhouseImage = "clickhouse/clickhouse-server:24.8-alpine"
)

var (
	containersOnce sync.Once
	containers     Backing
	containersOK   bool
)

// dockerReachable reports whether a Docker engine answers. E2E_LOCAL_STACK=1
// forces the local stack even then.
func dockerReachable(ctx context.Context) bool {
	if os.Getenv("E2E_LOCAL_STACK") == "1" {
		return false
	}
	if os.Getenv("DOCKER_HOST") == "" {
		if _, err := os.Stat("/var/run/docker.sock"); err != nil {
			return false
		}
	}
	p, err := testcontainers.NewDockerProvider()
	if err != nil {
		return false
	}
	defer p.Close()
	return p.Health(ctx) == nil
}

// containerBacking starts Kafka, Postgres and ClickHouse with testcontainers
// once per test process when a Docker engine is reachable. The containers
// are reaped by testcontainers' Ryuk when the process ends.
func containerBacking(t TB) (Backing, bool) {
	t.Helper()
	containersOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if !dockerReachable(ctx) {
			return
		}
		b, err := startContainers(ctx)
		if err != nil {
			t.Fatalf("docker is reachable but the e2e containers did not start: %v", err)
		}
		containers, containersOK = b, true
	})
	return containers, containersOK
}

func startContainers(ctx context.Context) (Backing, error) {
	pg, err := tcpostgres.Run(ctx, postgresImage,
		tcpostgres.WithDatabase("platform"), tcpostgres.WithUsername("postgres"), tcpostgres.WithPassword("postgres"),
		tcpostgres.BasicWaitStrategies())
	if err != nil {
		return Backing{}, fmt.Errorf("postgres: %w", err)
	}
	dsn, err := pg.ConnectionString(ctx, "sslmode=disable")
	if err != nil {
		return Backing{}, fmt.Errorf("postgres dsn: %w", err)
	}
	kf, err := tckafka.Run(ctx, kafkaImage, tckafka.WithClusterID("platform-e2e"))
	if err != nil {
		return Backing{}, fmt.Errorf("kafka: %w", err)
	}
	brokers, err := kf.Brokers(ctx)
	if err != nil {
		return Backing{}, fmt.Errorf("kafka brokers: %w", err)
	}
	chc, err := tcclickhouse.Run(ctx, clickhouseImage,
		tcclickhouse.WithUsername("default"), tcclickhouse.WithPassword(""),
		testcontainers.WithEnv(map[string]string{"CLICKHOUSE_SKIP_USER_SETUP": "1"}))
	if err != nil {
		return Backing{}, fmt.Errorf("clickhouse: %w", err)
	}
	chAddr, err := chc.ConnectionHost(ctx)
	if err != nil {
		return Backing{}, fmt.Errorf("clickhouse address: %w", err)
	}
	// Per-instance databases are created on this server by pgtest.
	_ = os.Setenv("DATABASE_URL", dsn)
	return Backing{ClickHouseAddr: chAddr, KafkaBrokers: strings.Join(brokers, ",")}, nil
}
