-- +goose Up
-- The hash chain. One appender (the ledger-appender group on the
-- one-partition ledger.append topic) inserts entries in height order; the
-- chain head lives in ledger_head, locked by every appending transaction.
CREATE TABLE ledger_entries (
    height        bigint PRIMARY KEY,
    id            text NOT NULL,
    kind          text NOT NULL,
    source_id     text NOT NULL,
    actor_user_id text NOT NULL DEFAULT '',
    amount_cents  bigint,
    currency      text,
    -- canonical JSON text of meta, hashed byte for byte (not jsonb, which
    -- would reorder keys and rewrite numbers)
    meta          text,
    ts            timestamptz NOT NULL,
    prev_hash     text NOT NULL,
    hash          text NOT NULL
);
CREATE UNIQUE INDEX ledger_entries_id ON ledger_entries (id);
-- A re-sent emission never makes a second entry.
CREATE UNIQUE INDEX ledger_entries_source ON ledger_entries (kind, source_id);
CREATE INDEX ledger_entries_actor ON ledger_entries (actor_user_id, height);
CREATE INDEX ledger_entries_ts ON ledger_entries (ts);

CREATE TABLE ledger_head (
    one    boolean PRIMARY KEY DEFAULT true CHECK (one),
    height bigint NOT NULL,
    hash   text NOT NULL,
    ts     timestamptz
);
INSERT INTO ledger_head (one, height, hash) VALUES (true, 0, repeat('0', 64));

-- +goose Down
DROP TABLE ledger_head;
DROP TABLE ledger_entries;
