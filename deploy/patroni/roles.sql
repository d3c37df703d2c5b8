-- The platform's database and roles, run as the superuser on database
-- postgres with psql (-v owner_password=... -v app_password=...); Patroni's
-- post_bootstrap (compose) and deploy/local/cluster.sh run it, and it is
-- safe to run again.
--
--   platform_owner  owns the database and its schema: `platform migrate`
--                   connects as it (compose: the migrate service).
--   platform_app    what every serving process connects as: no superuser,
--                   no role or database creation; it reads and writes the
--                   tables platform_owner creates, and owns only the event
--                   log (event_log_owner.sql), whose partitions the relay
--                   creates and drops.
SELECT format('CREATE ROLE platform_owner LOGIN PASSWORD %L', :'owner_password')
  WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'platform_owner') \gexec
SELECT format('CREATE ROLE platform_app LOGIN PASSWORD %L', :'app_password')
  WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'platform_app') \gexec
ALTER ROLE platform_owner NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'owner_password';
ALTER ROLE platform_app NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'app_password';
-- platform_owner may hand objects to platform_app (ALTER ... OWNER TO), and
-- a later migration may still alter what platform_app owns.
GRANT platform_app TO platform_owner;
SELECT 'CREATE DATABASE platform OWNER platform_owner'
  WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'platform') \gexec
ALTER DATABASE platform OWNER TO platform_owner;
REVOKE ALL ON DATABASE platform FROM PUBLIC;
GRANT CONNECT, TEMPORARY ON DATABASE platform TO platform_app;

\connect platform
ALTER SCHEMA public OWNER TO platform_owner;
REVOKE ALL ON SCHEMA public FROM PUBLIC;
-- CREATE: the relay's event-log partitions (CREATE TABLE ... PARTITION OF)
GRANT USAGE, CREATE ON SCHEMA public TO platform_app;
ALTER DEFAULT PRIVILEGES FOR ROLE platform_owner IN SCHEMA public
  GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO platform_app;
ALTER DEFAULT PRIVILEGES FOR ROLE platform_owner IN SCHEMA public
  GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO platform_app;
-- what already exists (a database migrated before these roles)
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO platform_app;
GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO platform_app;
