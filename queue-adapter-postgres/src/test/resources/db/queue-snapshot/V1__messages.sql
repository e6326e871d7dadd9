-- queue schema, version 1: the hot table of live (pending and running) messages.
--
-- "${schema}" is a placeholder for the schema name. The queue's own migrator replaces it with the validated
-- name from PostgresQueueConfig.schema(), Flyway users set the placeholder "schema", Liquibase users the
-- changelog property "schema" (see docs/postgres.md). The name is quoted here, so it is always one identifier.

CREATE SCHEMA IF NOT EXISTS "${schema}";

-- One id space for live messages, dead letters and archived messages: a redriven dead letter keeps its id and
-- a message never shares its id with another of the same installation.
CREATE SEQUENCE "${schema}".message_ids AS bigint;

CREATE TABLE "${schema}".messages (
    id           bigint      NOT NULL DEFAULT nextval('"${schema}".message_ids'),
    namespace    text        NOT NULL,
    topic        text        NOT NULL,
    state        text        NOT NULL DEFAULT 'pending',
    -- json, not jsonb: json keeps the text exactly as published (jsonb would reorder keys and drop whitespace
    -- and duplicate keys), it is still checked to be valid JSON on the way in.
    payload      json        NOT NULL,
    headers      jsonb       NOT NULL DEFAULT '{}'::jsonb,
    priority     smallint    NOT NULL DEFAULT 0,
    attempts     integer     NOT NULL DEFAULT 0,
    max_attempts integer     NOT NULL,
    unique_key   text,
    run_at       timestamptz NOT NULL,
    published_at timestamptz NOT NULL,
    worker       text,
    lease_token  bigint,
    lease_until  timestamptz,
    last_error   text,
    CONSTRAINT messages_pkey PRIMARY KEY (id),
    -- The state machine of a live message, enforced by the database whatever code writes the row:
    -- pending rows hold no lease, running rows hold a complete one (worker, token, end) and count an attempt.
    CONSTRAINT messages_state_machine CHECK (
        state IN ('pending', 'running')
        AND attempts >= 0
        AND max_attempts >= 1
        AND priority BETWEEN 0 AND 9
        AND CASE state
                WHEN 'running' THEN worker IS NOT NULL AND lease_token IS NOT NULL AND lease_until IS NOT NULL
                                    AND attempts >= 1
                ELSE worker IS NULL AND lease_token IS NULL AND lease_until IS NULL
            END)
)
-- Queue churn: every message is inserted, updated at least once (the claim, then maybe retries and lease
-- extensions) and deleted, usually within seconds. fillfactor 80 keeps a fifth of each page free for the new
-- row versions those updates create, so they land on the same page as the old one (one page written, the
-- heap stays compact) instead of spreading the table over new pages. The autovacuum settings make vacuum run
-- once about 1% of the rows (at least 1000) are dead instead of the default 20%, and without cost-based
-- throttling pauses, so dead row versions are reclaimed while the table is still small and claims do not
-- wade through them.
WITH (fillfactor = 80,
      autovacuum_vacuum_scale_factor = 0.01,
      autovacuum_vacuum_threshold = 1000,
      autovacuum_analyze_scale_factor = 0.02,
      autovacuum_analyze_threshold = 1000,
      autovacuum_vacuum_cost_delay = 0);

-- The claim order, over pending rows only: (namespace, topic) by equality, then priority, due time and id in
-- the order claims take them, so a claim reads the first index entries and stops. Running rows are not in it,
-- which keeps it small and lets claims skip leased rows without visiting them.
CREATE INDEX messages_claim_idx ON "${schema}".messages (namespace, topic, priority, run_at, id)
    WHERE state = 'pending';

-- Rescue of expired leases: the running rows ordered by the end of their lease.
CREATE INDEX messages_lease_idx ON "${schema}".messages (lease_until)
    WHERE state = 'running';

-- Deduplication: at most one live message per (namespace, topic, unique key). Completed and dead messages
-- left this table, so their keys are free again.
CREATE UNIQUE INDEX messages_unique_key_idx ON "${schema}".messages (namespace, topic, unique_key)
    WHERE unique_key IS NOT NULL;
