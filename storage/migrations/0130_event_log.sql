-- +goose Up
-- The append-only event log replaces the insert-then-delete outbox: every
-- writing transaction appends ONE row carrying all of its events (parallel
-- arrays, in emission order), numbered by event_log_seq. The relay tails it
-- by seq (consumers/relay) and keeps its position in event_log_cursor; old
-- rows go by dropping whole partitions behind the cursor, never by DELETE.
--
-- seq is taken after the transaction has an xid (storage/pipeline
-- InsertOutbox selects pg_current_xact_id() first), so a snapshot whose xmin
-- has passed the next-xid seen after reading the sequence proves that every
-- lower seq is either committed and visible or never will be.
CREATE SEQUENCE event_log_seq AS bigint;

CREATE TABLE event_log (
    seq        bigint NOT NULL,
    xid        xid8 NOT NULL,
    topics     text[] NOT NULL,
    keys       text[] NOT NULL,
    types      text[] NOT NULL,
    event_ids  text[] NOT NULL,
    payloads   bytea[] NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (seq)
) PARTITION BY RANGE (seq);

-- Partitions are ranges of 1,000,000 seqs (one seq per writing transaction);
-- the relay creates the next ones ahead (pipeline.MaintainLog). These cover
-- the first four million transactions even if it never ran.
CREATE TABLE event_log_p0 PARTITION OF event_log FOR VALUES FROM (MINVALUE) TO (1000000);
CREATE TABLE event_log_p1000000 PARTITION OF event_log FOR VALUES FROM (1000000) TO (2000000);
CREATE TABLE event_log_p2000000 PARTITION OF event_log FOR VALUES FROM (2000000) TO (3000000);
CREATE TABLE event_log_p3000000 PARTITION OF event_log FOR VALUES FROM (3000000) TO (4000000);

-- The relay's position: every seq up to and including it was published.
CREATE TABLE event_log_cursor (
    one          boolean PRIMARY KEY DEFAULT true CHECK (one),
    seq          bigint NOT NULL,
    published_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO event_log_cursor (seq) VALUES (0);

-- Rows the old outbox still held move to the log, in order, as one
-- transaction's worth.
INSERT INTO event_log (seq, xid, topics, keys, types, event_ids, payloads)
SELECT nextval('event_log_seq'), pg_current_xact_id(),
       array_agg(topic ORDER BY id), array_agg(key ORDER BY id), array_agg(event_type ORDER BY id),
       array_agg(event_id ORDER BY id), array_agg(payload ORDER BY id)
FROM outbox HAVING count(*) > 0;
DROP TABLE outbox;

-- One row per event of the retained log, for operators and tests; nothing
-- writes it.
CREATE VIEW outbox AS
SELECT row_number() OVER (ORDER BY l.seq, e.n) AS id, l.seq, e.n,
       e.topic, e.key, e.event_type, e.event_id, e.payload, l.created_at
FROM event_log l,
     unnest(l.topics, l.keys, l.types, l.event_ids, l.payloads)
         WITH ORDINALITY AS e(topic, key, event_type, event_id, payload, n);

-- +goose Down
DROP VIEW outbox;
CREATE TABLE outbox (
    id         bigserial PRIMARY KEY,
    topic      text NOT NULL,
    key        text NOT NULL,
    event_type text NOT NULL,
    event_id   text NOT NULL,
    payload    bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO outbox (topic, key, event_type, event_id, payload)
SELECT e.topic, e.key, e.event_type, e.event_id, e.payload
FROM event_log l CROSS JOIN event_log_cursor c,
     unnest(l.topics, l.keys, l.types, l.event_ids, l.payloads)
         WITH ORDINALITY AS e(topic, key, event_type, event_id, payload, n)
WHERE l.seq > c.seq ORDER BY l.seq, e.n;
DROP TABLE event_log_cursor;
DROP TABLE event_log;
DROP SEQUENCE event_log_seq;
