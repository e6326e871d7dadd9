-- queue schema, version 4: durable schedules (cron or fixed interval). The domain computes due times, the
-- database keeps the definition and the state (next and last run), and a ticker fires a due schedule by locking
-- its row (FOR UPDATE SKIP LOCKED), publishing its messages and storing its next run in one transaction, so
-- tickers of several replicas fire each due time exactly once.

CREATE TABLE "${schema}".schedules (
    namespace           text        NOT NULL,
    name                text        NOT NULL,
    cron                text,
    interval_micros     bigint,
    time_zone           text        NOT NULL,
    topic               text        NOT NULL,
    -- the payload of every message the schedule publishes, kept exactly as given (json, not jsonb)
    payload             json        NOT NULL,
    headers             jsonb       NOT NULL DEFAULT '{}'::jsonb,
    priority            smallint    NOT NULL,
    max_attempts        integer     NOT NULL,
    start_at            timestamptz,
    end_at              timestamptz,
    missed_policy       text        NOT NULL,
    missed_bound        integer     NOT NULL,
    missed_grace_micros bigint      NOT NULL,
    paused              boolean     NOT NULL DEFAULT false,
    -- null: finished (past its end)
    next_run_at         timestamptz,
    last_run_at         timestamptz,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL,
    CONSTRAINT schedules_pkey PRIMARY KEY (namespace, name),
    CONSTRAINT schedules_sane CHECK (
        (cron IS NULL) <> (interval_micros IS NULL)
        AND (interval_micros IS NULL OR interval_micros > 0)
        AND priority BETWEEN 0 AND 9
        AND max_attempts >= 1
        AND missed_policy IN ('FIRE_ONCE', 'SKIP', 'FIRE_EACH')
        AND missed_bound >= 1
        AND missed_grace_micros >= 0)
);

-- The ticker's question, "which unpaused schedules are due?", over the schedules that can still fire.
CREATE INDEX schedules_due_idx ON "${schema}".schedules (next_run_at)
    WHERE NOT paused AND next_run_at IS NOT NULL;
