-- After `platform migrate`, as platform_owner (or the superuser): the
-- relay, connected as platform_app, creates and drops the event log's
-- partitions, which only the owner of event_log may do. Safe to run again.
ALTER TABLE event_log OWNER TO platform_app;
SELECT format('ALTER TABLE %s OWNER TO platform_app', i.inhrelid::regclass)
  FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
  WHERE i.inhparent = 'event_log'::regclass AND c.relowner <> 'platform_app'::regrole \gexec
