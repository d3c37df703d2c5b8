-- +goose Up
-- A batch's transaction advances its group's positions through this
-- function, which first checks them: a stored position below the batch's
-- first offset on a partition (or none where the consumer stored or loaded
-- one) means this database has not applied the records before the batch —
-- a promotion lost commits, or another process moved the position — and the
-- batch must not jump over them. The function then raises SQLSTATE PF001
-- with the stored positions as JSON in DETAIL (next -1: no row), which
-- rolls the transaction back; the consumer seeks there and goes on. The
-- check and the upsert are one statement of the round trip the batch sends
-- anyway. Otherwise positions only move forward (GREATEST): a batch
-- redelivered behind the stored position must not move it back.
-- +goose StatementBegin
CREATE FUNCTION consumer_positions_advance(grp text, tps text[], parts int[], firsts bigint[],
    nexts bigint[], expected boolean[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    behind jsonb;
BEGIN
    -- Lock the rows first: a concurrent writer (a zombie) waits, and the
    -- check below reads what it committed.
    PERFORM 1 FROM consumer_positions p
    WHERE p.group_name = grp AND (p.topic, p.partition) IN (SELECT * FROM unnest(tps, parts))
    ORDER BY p.topic, p.partition FOR UPDATE;
    SELECT jsonb_agg(jsonb_build_object('topic', v.topic, 'partition', v.part,
        'next', coalesce(p.next_offset, -1)))
    INTO behind
    FROM unnest(tps, parts, firsts, expected) AS v(topic, part, first, expected)
    LEFT JOIN consumer_positions p ON p.group_name = grp AND p.topic = v.topic AND p.partition = v.part
    WHERE (p.next_offset IS NULL AND v.expected) OR p.next_offset < v.first;
    IF behind IS NOT NULL THEN
        RAISE EXCEPTION 'consumer group % is fenced: its stored positions are behind the batch', grp
            USING ERRCODE = 'PF001', DETAIL = behind::text;
    END IF;
    INSERT INTO consumer_positions AS p (group_name, topic, partition, next_offset)
    SELECT grp, v.topic, v.part, v.next
    FROM unnest(tps, parts, nexts) AS v(topic, part, next)
    ON CONFLICT (group_name, topic, partition)
    DO UPDATE SET next_offset = GREATEST(p.next_offset, EXCLUDED.next_offset);
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION consumer_positions_advance(text, text[], int[], bigint[], bigint[], boolean[]);
