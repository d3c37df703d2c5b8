-- +goose Up
-- The event log's two orderings, each in PL/pgSQL, whose statements run in
-- the order they are written whatever plan each one gets (issue 43). The
-- relay's proof (consumers/relay) needs both:
--
-- * a writer takes its xid before its seq (event_log_next_seq);
-- * the relay reads the last seq handed out before it takes the xid that
--   bounds it (event_log_horizon).
--
-- One SQL statement did each before, and its order was the plan's: the
-- horizon's LATERAL join was planned as a nested loop whose inner Result
-- (the xid) ran before the outer sequence row was read out of its buffer,
-- so its bound could include seqs handed out after its xid.
--
-- Neither pins search_path: they resolve names as the SQL they replace did,
-- in the caller's (which is also how the tests put a slower or counting
-- pg_current_xact_id in front of the built-in). Sequences are read as
-- nextval left them, committed or not, and event_log_seq keeps CACHE 1: a
-- session caching seqs could hand one out after the horizon read past it.

-- +goose StatementBegin
CREATE FUNCTION event_log_next_seq(OUT writer_xid xid8, OUT seq bigint) LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    writer_xid := pg_current_xact_id();
    seq := nextval('event_log_seq');
END;
$$;
-- +goose StatementEnd

-- The horizon: the last seq handed out and, only when asked (take_xid) and
-- it is above mark, an xid taken after it; no xid otherwise, so an idle
-- relay takes none. horizon_xmin is the xmin of a snapshot taken after the
-- call began, which proves a bound taken by an earlier call once it reaches
-- that call's xid. Xids are text: xid8 has no pgx type.
-- +goose StatementBegin
CREATE FUNCTION event_log_horizon(take_xid boolean, mark bigint,
    OUT horizon_xmin text, OUT last_seq bigint, OUT taken_xid text) LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    SELECT CASE WHEN is_called THEN last_value ELSE 0 END INTO last_seq FROM event_log_seq;
    IF take_xid AND last_seq > mark THEN
        taken_xid := pg_current_xact_id()::text;
    END IF;
    horizon_xmin := pg_snapshot_xmin(pg_current_snapshot())::text;
END;
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION event_log_horizon(boolean, bigint);
DROP FUNCTION event_log_next_seq();
