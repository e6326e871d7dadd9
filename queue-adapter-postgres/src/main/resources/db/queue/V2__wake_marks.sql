-- Wake marks: a counter per namespace, bumped in the transaction of each change that makes messages claimable,
-- wherever the topic's wake-up is sent (see _bump_wake_mark in R__publish.sql). A subscriber that cannot LISTEN
-- (behind a transaction pooler such as PgBouncer in transaction mode) reads the sum of its namespaces' marks every
-- few milliseconds and claims only when it changed: a primary-key read of 16 rows instead of a claim.
--
-- 16 slots per namespace, so that concurrent publishers do not queue on one row lock: a bump takes any slot not
-- locked by another transaction (SKIP LOCKED) and readers sum the slots. UNLOGGED, since the marks are a hint, never the
-- truth (the messages are): they cost no WAL, and a crash or a promoted standby starts them over, which changes the
-- sum and so costs one claim.
CREATE UNLOGGED TABLE "${schema}".wake_marks (
    namespace text COLLATE "C" NOT NULL,
    slot      smallint         NOT NULL,
    mark      bigint           NOT NULL DEFAULT 0,
    CONSTRAINT wake_marks_pkey PRIMARY KEY (namespace, slot),
    CONSTRAINT wake_marks_sane CHECK (slot BETWEEN 0 AND 15)
)
-- each bump rewrites one row without changing an indexed column: with free space on the page the update is HOT
WITH (fillfactor = 50,
      autovacuum_vacuum_scale_factor = 0.0,
      autovacuum_vacuum_threshold = 1000,
      autovacuum_vacuum_cost_delay = 0);
