package main

import (
	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/consumers/sink"
	"github.com/fintech/platform/storage/clickhouse"
	"github.com/fintech/platform/topics"
)

// sinkModule wires the sink module: its routes, consumer groups and
// background loops.
func (a *app) sinkModule() (module, error) {
	return module{
		groups: map[string]func() (runnable, error){
			topics.GroupSink: func() (runnable, error) {
				return sink.New(sink.Config{Brokers: a.brokers, Database: a.clickhouseDatabase()},
					a.clickhouseLazy(), a.log)
			},
		},
	}, nil
}

// clickhouseDatabase names the ClickHouse database of the analytics tables:
// CLICKHOUSE_DATABASE when set, else the name of the Postgres database, so
// that platforms sharing one ClickHouse server (tests, several environments)
// never mix their copies.
func (a *app) clickhouseDatabase() string {
	if a.cfg.ClickHouseDB != "" {
		return clickhouse.DatabaseName(a.cfg.ClickHouseDB)
	}
	if cfg, err := pgx.ParseConfig(a.cfg.DatabaseURL); err == nil && cfg.Database != "" {
		return clickhouse.DatabaseName(cfg.Database)
	}
	return "platform"
}
