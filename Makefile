# GNU make. `make run` / `make test` bring up the private local stack
# (PostgreSQL + ClickHouse under $(DATA_DIR), see deploy/local/stack.sh).

SHELL := /bin/bash

DATA_DIR        ?= $(CURDIR)/.data
PG_PORT         ?= 55432
CH_PORT         ?= 19000
CH_HTTP_PORT    ?= 18123
DATABASE_URL    ?= postgres://postgres@127.0.0.1:$(PG_PORT)/platform?sslmode=disable
CLICKHOUSE_ADDR ?= 127.0.0.1:$(CH_PORT)
export DATA_DIR PG_PORT CH_PORT CH_HTTP_PORT DATABASE_URL CLICKHOUSE_ADDR

GIT_COMMIT := $(shell git rev-parse --short HEAD 2>/dev/null || echo dev)
LDFLAGS    := -X main.release=$(GIT_COMMIT)

BIN          := bin/platform
PLATFORM_BIN := $(CURDIR)/$(BIN)
export PLATFORM_BIN

# Go lives in /usr/local/go on the dev/CI machines; keep it reachable even
# when the caller's PATH lacks it.
export PATH := $(PATH):/usr/local/go/bin
GO ?= go

.PHONY: shellcheck-deps all build stack browser tools run test bench bench-soak bench-cluster down status fmt lint vet migrate compose-up clean sdk redoc uplot backup restore-drill cluster cluster-down cluster-status cluster-deps nemesis

all: build

# A cold Go build cache (absent, off, or under COLD_CACHE_FILES files; a
# build of the platform leaves tens of thousands) means the build compiles
# every dependency: say so, since go build itself prints nothing meanwhile.
COLD_CACHE_FILES ?= 2000
build:
	@cache=$$($(GO) env GOCACHE); \
	  if [ "$$cache" = off ] || [ ! -d "$$cache" ] || \
	     [ "$$(find "$$cache" -type f 2>/dev/null | head -n $(COLD_CACHE_FILES) | wc -l)" -lt $(COLD_CACHE_FILES) ]; then \
	    echo "building $(BIN) with a cold Go build cache ($$cache): this first build compiles every dependency and takes a few minutes"; \
	  fi
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/platform

# The binary renders the stack's pgBackRest configuration.
stack: build
	deploy/local/stack.sh up

# A stopped stack is an answer, not a failure of make. With a local cluster
# running (make cluster; CLUSTER_DIR), its members, backups and archive
# follow: the database the platform uses is then the cluster's.
status:
	@deploy/local/stack.sh status || echo "the local stack is not (fully) running: make stack starts it (DATA_DIR=$(DATA_DIR))"
	@if deploy/local/cluster.sh running; then echo; echo "local cluster:"; deploy/local/cluster.sh status || true; fi

# A pgBackRest backup: make backup (full), make backup TYPE=incr or
# TYPE=diff; of the local cluster's Postgres when a cluster runs, else of
# the local stack's (BACKUP_OF=stack or BACKUP_OF=cluster chooses). `make
# status` shows the backups and the WAL archive's lag.
TYPE ?= full
BACKUP_OF ?=
backup:
	@of="$(BACKUP_OF)"; \
	if [ -z "$$of" ]; then if deploy/local/cluster.sh running; then of=cluster; else of=stack; fi; fi; \
	case "$$of" in stack|cluster) ;; *) echo "BACKUP_OF=$$of: stack or cluster"; exit 2 ;; esac; \
	echo "deploy/local/$$of.sh backup $(TYPE)"; deploy/local/$$of.sh backup $(TYPE)

# The restore drills (e2e/restore_drill_test.go) with a private Postgres and
# pgBackRest repository of their own: restore to a time T and to the latest
# point after losing the data directory, each checked by `platform verify`;
# RPO, RTO and database size printed. RESTORE_DRILL_ROUNDS sets the load.
RESTORE_DRILL_ROUNDS ?= 3
restore-drill: build
	RESTORE_DRILL_ROUNDS=$(RESTORE_DRILL_ROUNDS) $(GO) test -count=1 -timeout 30m -v ./e2e -run 'TestRestoreDrill'

# The local stack runs in development mode (the binary's default is
# production): the embedded test processor, mail in the log and generated
# secrets exist only there.
run: stack build
	$(call write_env,development)
	PLATFORM_ENV=development $(BIN) migrate
	PLATFORM_ENV=development exec $(BIN) run

# write_env records the environment a stack starts with in
# $(DATA_DIR)/platform.env (mode 0600): `bin/platform <command>` from another
# shell at the repository root (or with DATA_DIR, --env-file) reads it and
# talks to this stack. $(1) is the PLATFORM_ENV of the stack.
define write_env
	@PLATFORM_ENV=$(1) $(BIN) envfile write $(DATA_DIR)/platform.env && \
	  echo "settings recorded in $(DATA_DIR)/platform.env: bin/platform commands from another shell use this stack"
endef

browser:
	deploy/local/stack.sh browser

# Node tools the tests run: Redocly (lint of the API documents) and the
# TypeScript SDK's dependencies (its e2e test compiles and runs it).
tools: shellcheck-deps
	cd e2e/tools && npm ci --prefer-offline --no-audit --no-fund
	cd sdk/typescript && npm ci --prefer-offline --no-audit --no-fund

test: stack browser tools cluster-deps build
	@start=$$(date +%s); rc=0; \
	echo "go vet ./..."; $(GO) vet ./... || rc=$$?; \
	if [ $$rc -eq 0 ]; then \
	  echo "go test -count=1 -timeout 20m -p 2 -v ./... (showing package results, failures and skips)"; \
	  $(GO) test -count=1 -timeout 20m -p 2 -v ./... > .test.log 2>&1; rc=$$?; \
	  grep -E '^(ok|FAIL|---|panic:|\?)|^\s+--- (FAIL|SKIP)' .test.log | grep -v -- '--- PASS' || true; \
	  if [ $$rc -ne 0 ]; then echo "failure details:"; grep -B2 -A30 -E -- '--- FAIL|^panic:' .test.log | head -400; \
	    echo "what the failed tests printed (a parallel test's lines are streamed apart from its --- FAIL):"; \
	    awk 'NR == FNR { if (match($$0, /--- FAIL: [^ ]+/)) failed[substr($$0, RSTART + 10, RLENGTH - 10)] = 1; next } \
	      /^=== (RUN|CONT|NAME|PAUSE) / { cur = $$3; next } /^(ok|FAIL|PASS)/ { cur = ""; next } \
	      /^ *--- (PASS|FAIL|SKIP)/ { next } cur in failed { print cur ": " $$0 }' .test.log .test.log | tail -250; fi; \
	  echo "full log: .test.log"; \
	  echo "tests: $$(grep -cE -- '--- PASS' .test.log) passed, $$(grep -cE -- '--- FAIL' .test.log) failed, $$(grep -cE -- '--- SKIP' .test.log) skipped"; \
	fi; \
	end=$$(date +%s); \
	echo "make test: exit $$rc, wall time $$((end - start))s"; \
	exit $$rc

# The money-path benchmark (e2e/bench, README there): a fresh platform,
# transfers over HTTP with the clock running until consumer lag is 0, against
# baselines T and S in plain SQL on the same Postgres, three alternating
# rounds, `median ratio ...` last. Pass flags with BENCH_ARGS, e.g.
# make bench BENCH_ARGS="-clients 8,32,128" (the scaling table).
# BENCH_AGAINST=<commit> runs a binary built from that commit in every round
# next to this tree's (A/B in one sitting, median ratios last); it is built
# once per commit in a git worktree under $(DATA_DIR)/bench-against/<sha>.
BENCH_ARGS ?=
BENCH_AGAINST ?=
bench: stack build
	$(GO) build -o bin/bench ./e2e/bench
	@against=""; \
	if [ -n "$(BENCH_AGAINST)" ]; then \
	  sha=$$(git rev-parse --verify "$(BENCH_AGAINST)^{commit}") || exit 1; \
	  mkdir -p "$(DATA_DIR)/bench-against/$$sha" && dir=$$(cd "$(DATA_DIR)/bench-against/$$sha" && pwd); \
	  if [ ! -x "$$dir/platform" ]; then \
	    echo "building $$sha into $$dir/platform"; \
	    rm -rf "$$dir/src"; \
	    git worktree add --force --detach "$$dir/src" "$$sha" >/dev/null && \
	    (cd "$$dir/src" && $(GO) build -o "$$dir/platform.tmp" ./cmd/platform) && \
	    mv "$$dir/platform.tmp" "$$dir/platform"; rc=$$?; \
	    git worktree remove --force "$$dir/src"; \
	    [ $$rc -eq 0 ] || exit $$rc; \
	  fi; \
	  against="-baseline-bin $$dir/platform -baseline-name $$(git rev-parse --short $$sha)"; \
	fi; \
	echo "bin/bench $$against $(BENCH_ARGS)"; \
	bin/bench $$against $(BENCH_ARGS)

# Ten minutes of platform load, throughput printed per minute. Each client
# cycles 512 pre-built transfers, so a wallet's balance drifts by the same sum
# every cycle: at the default 10,000,000 the worst of 100 wallets runs dry
# after about 39 cycles (some 640,000 transfers), which ten minutes reach, so
# the soak funds each wallet with 100,000,000.
bench-soak: stack build
	$(GO) build -o bin/bench ./e2e/bench
	bin/bench -duration 10m -rounds 1 -baselines none -soak -deposit 100000000 $(BENCH_ARGS)

# The same load through HAProxy against a fresh local cluster
# (deploy/local/cluster.sh in a new directory under /tmp, torn down at the
# end; CLUSTER_PORT_BASE and CLUSTER_NET pick its ports and addresses, else
# a free block), one shape after another on the same cluster: synchronous
# replication on and off, then 1 and 3 fiat applier processes
# (e2e/bench/README.md, "Cluster"). BENCH_ARGS as for bench, plus
# -cluster-sync and -cluster-fiat.
bench-cluster: stack build cluster-deps
	$(GO) build -o bin/bench ./e2e/bench
	PLATFORM_BIN=$(CURDIR)/$(BIN) bin/bench -cluster -rounds 1 -duration 20s $(BENCH_ARGS)

# The TypeScript SDK (sdk/typescript): regenerates src/generated from the
# complete document the binary serves (a fresh platform on the local stack
# prints its /api/platform/openapi.full.json; `make stack` first). e2e TestSDK fails when the
# committed files are stale.
sdk: build
	cd sdk/typescript && npm ci --prefer-offline --no-audit --no-fund
	@doc=$$(mktemp --suffix=.json); trap 'rm -f $$doc' EXIT; \
	$(GO) run ./e2e/openapidoc -full -o $$doc && \
	(cd sdk/typescript && node scripts/generate.mjs $$doc src/generated)

# The Redoc bundle of the /docs page, vendored into the binary
# (gateway/platform/assets). Keep REDOC_VERSION equal to platform.RedocVersion
# (a unit test checks the bundle's version), and the style hashes in
# gateway/platform/docs.go current (the /docs browser test names new ones).
REDOC_VERSION ?= 2.5.4
redoc:
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	(cd $$tmp && npm pack --silent redoc@$(REDOC_VERSION) >/dev/null && tar xzf redoc-$(REDOC_VERSION).tgz) && \
	cp $$tmp/package/bundles/redoc.standalone.js $$tmp/package/bundles/redoc.standalone.js.LICENSE.txt gateway/platform/assets/ && \
	{ echo "Redoc (https://github.com/Redocly/redoc), npm package redoc@$(REDOC_VERSION), bundles/redoc.standalone.js."; echo; cat $$tmp/package/LICENSE; } > gateway/platform/assets/LICENSE.redoc

# uplot vendors the admin console's chart library (MIT) into the binary
# (gateway/console/assets). Keep UPLOT_VERSION equal to console.UPlotVersion.
UPLOT_VERSION ?= 1.6.32
uplot:
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	(cd $$tmp && npm pack --silent uplot@$(UPLOT_VERSION) >/dev/null && tar xzf uplot-$(UPLOT_VERSION).tgz) && \
	cp $$tmp/package/dist/uPlot.iife.min.js $$tmp/package/dist/uPlot.min.css gateway/console/assets/ && \
	{ echo "uPlot (https://github.com/leeoniya/uPlot), npm package uplot@$(UPLOT_VERSION), dist/uPlot.iife.min.js and dist/uPlot.min.css."; echo; cat $$tmp/package/LICENSE; } > gateway/console/assets/LICENSE.uplot

# The production shape on one machine (deploy/local/cluster.sh): HAProxy,
# two gateways, two processes of every consumer group, two relays, the
# broker process, Patroni primary + synchronous standby with etcd; its own
# ports (CLUSTER_PORT_BASE, default 56100) and data dir (.cluster).
cluster: stack build
	deploy/local/cluster.sh up

cluster-down:
	deploy/local/cluster.sh down

cluster-status:
	deploy/local/cluster.sh status

# The Debian packages the cluster (and e2e TestNemesis) needs, pgBackRest
# included (both members archive), promtool (Debian's prometheus; cmd/platform
# TestAlertRules checks deploy/prometheus) and the nemesis's fault tools:
# iptables, iproute2 (tc), faketime.
cluster-deps:
	deploy/local/cluster.sh install

# The nemesis test alone, longer: DURATION (default 5m), replay a schedule
# with SEED (default random, printed); every fault kind once first.
DURATION ?= $(or $(NEMESIS_DURATION),5m)
SEED ?= $(NEMESIS_SEED)
nemesis: stack cluster-deps build
	NEMESIS_DURATION=$(DURATION) NEMESIS_SEED=$(SEED) NEMESIS_EVERY_KIND=1 $(GO) test -count=1 -timeout 60m -v ./e2e -run '^TestNemesis$$'

migrate: stack build
	PLATFORM_ENV=development $(BIN) migrate

down:
	deploy/local/stack.sh down

fmt:
	find . -name '*.go' -not -path './.*' -not -path './bin/*' -exec gofmt -w {} +

# lint also runs shellcheck on the deploy scripts (make shellcheck-deps
# installs it from Debian when missing).
SHELL_SCRIPTS := $(wildcard deploy/local/*.sh deploy/patroni/*.sh)
vet:
	$(GO) vet ./...

lint: vet
	@command -v shellcheck >/dev/null 2>&1 || { echo "shellcheck is not installed: make shellcheck-deps (apt-get install shellcheck)"; exit 1; }
	shellcheck -x $(SHELL_SCRIPTS)

shellcheck-deps:
	@command -v shellcheck >/dev/null 2>&1 || { apt-get update -q && apt-get install -y -q --no-install-recommends shellcheck; }

compose-up:
	docker compose up --build

clean: down
	rm -rf bin
