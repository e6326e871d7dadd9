-- Runs after every migration, by the queue's own migrator and, as a callback, by Flyway (Liquibase: a changeset
-- with runAlways, see docs/operations.md). It grants and secures whatever the schema holds now: ownership when
-- setup_roles() has created the roles, privileges of the queue's roles, and row-level security on every table of
-- tenant data. Idempotent.
SELECT "${schema}"._secure_schema();
