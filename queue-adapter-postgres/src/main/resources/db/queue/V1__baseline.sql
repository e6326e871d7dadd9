-- queue schema 0.1.0: the tables, sequences, indexes and the one composite type of the schema, in their current shape.
-- The functions and triggers are defined in the R__*.sql files beside this one. Privileges, ownership and row-level
-- security are applied afterwards by _secure_schema(), so none are set here.
--
-- "${schema}" is a placeholder for the schema name. The queue's own migrator replaces it with the validated
-- name from PostgresQueueConfig.schema(), Flyway users set the placeholder "schema", Liquibase users the
-- changelog property "schema" (see docs/postgres.md). The name is quoted here, so it is always one identifier.
--
-- Namespaces, topics (queues), unique keys, ordering keys and other names are identifiers, never sorted for people,
-- so they are COLLATE "C": compared byte by byte, which is cheaper in their indexes than the C library's strcoll of
-- the database's default collation, and does not depend on the C library's version, so an operating system upgrade
-- cannot silently change the order of these indexes. Comparisons with parameters and with other columns of the
-- default collation take "C" from the column, so the queue's statements use the indexes.

CREATE SCHEMA IF NOT EXISTS "${schema}";


-- ------------------------------------------------------------------ live messages

-- One id space for live messages, dead letters and archived messages: a redriven dead letter keeps its id and
-- a message never shares its id with another of the same installation.
CREATE SEQUENCE "${schema}".message_ids AS bigint;


-- The hot table: live (waiting, pending and running) messages only. Completed and dead messages leave it.
CREATE TABLE "${schema}".messages (
    id                 bigint           NOT NULL DEFAULT nextval('"${schema}".message_ids'),
    namespace          text COLLATE "C" NOT NULL,
    topic              text COLLATE "C" NOT NULL,
    state              text             NOT NULL DEFAULT 'pending',
    -- json, not jsonb: json keeps the text exactly as published (jsonb would reorder keys and drop whitespace
    -- and duplicate keys), it is still checked to be valid JSON on the way in.
    payload            json             NOT NULL,
    headers            jsonb            NOT NULL DEFAULT '{}'::jsonb,
    priority           smallint         NOT NULL DEFAULT 0,
    attempts           integer          NOT NULL DEFAULT 0,
    max_attempts       integer          NOT NULL,
    unique_key         text COLLATE "C",
    run_at             timestamptz      NOT NULL,
    published_at       timestamptz      NOT NULL,
    worker             text,
    lease_token        bigint,
    lease_until        timestamptz,
    last_error         text,
    -- Who published or redrove the message, as set by set_actor(): null when no actor was set. The default records
    -- the session's actor for statements that leave the column out.
    published_by       text                      DEFAULT nullif(current_setting('queue.actor', true), ''),
    redriven_by        text,
    -- the start of the running attempt, set by the claim
    attempt_started_at timestamptz,
    -- A message with an ordering key runs only after every earlier message (lower id) of the same namespace, topic
    -- and key has left (completed, cancelled or dead-lettered, see topic_ordering). Only the head of a key is
    -- pending or running, its successors wait in the state 'waiting', which the claim index does not hold, so
    -- claims never step over them. Rows without a key pay nothing but the partial indexes' predicates.
    ordering_key       text COLLATE "C",
    CONSTRAINT messages_pkey PRIMARY KEY (id),
    -- The state machine of a live message, enforced by the database whatever code writes the row:
    -- pending rows hold no lease, running rows hold a complete one (worker, token, end) and count an attempt,
    -- waiting rows (successors behind the head of their ordering key) hold no lease and have a key.
    CONSTRAINT messages_state_machine CHECK (
        state IN ('pending', 'running', 'waiting')
        AND attempts >= 0
        AND max_attempts >= 1
        AND priority BETWEEN 0 AND 9
        AND (state <> 'waiting' OR ordering_key IS NOT NULL)
        AND CASE state
                WHEN 'running' THEN worker IS NOT NULL AND lease_token IS NOT NULL AND lease_until IS NOT NULL
                                    AND attempts >= 1
                ELSE worker IS NULL AND lease_token IS NULL AND lease_until IS NULL
            END)
)
-- Queue churn: every message is inserted, updated at least once (the claim, then maybe retries and lease
-- extensions) and deleted, usually within seconds.
-- * The autovacuum settings make vacuum run once about 1% of the rows (at least 1000) are dead instead of the
--   default 20%, and without cost-based throttling pauses, so dead row versions are reclaimed while the table is
--   still small and claims do not wade through them.
-- * fillfactor 50: a claim rewrites every message it takes (state, lease, worker), and that new row version is a
--   little larger than the pending one. With half of each page free it lands on the page of the old version:
--   an update that moves to another page first writes a row lock of its own to the WAL and then a larger update
--   record. Half-empty pages cost little here: the table holds only live messages, and vacuum and on-page pruning
--   keep returning the space of completed ones.
-- * vacuum_truncate = false: a queue table empties and refills all day, so its tail pages are often empty when
--   vacuum ends. Giving them back to the file system needs an ACCESS EXCLUSIVE lock, which a table in use never
--   grants: vacuum would retry for up to 5 s while still holding the table against every other vacuum (dead row
--   versions pile up in front of the claims), and when it got the lock every claim, publish and acknowledgement
--   would wait behind it, and the next inserts would extend the file again page by page. The pages kept are reused
--   by the next messages: the table stays as large as its busiest moment since the last VACUUM FULL.
WITH (autovacuum_vacuum_scale_factor = 0.01,
      autovacuum_vacuum_threshold = 1000,
      autovacuum_analyze_scale_factor = 0.02,
      autovacuum_analyze_threshold = 1000,
      autovacuum_vacuum_cost_delay = 0,
      fillfactor = 50,
      vacuum_truncate = false);


-- The claim order, over pending rows only: (namespace, topic) by equality, then priority, due time and id in
-- the order claims take them, so a claim reads the first index entries and stops. Running and waiting rows are not
-- in it, which keeps it small and lets claims skip leased rows and the successors of ordering keys without visiting
-- them.
CREATE INDEX messages_claim_idx ON "${schema}".messages (namespace, topic, priority, run_at, id)
    WHERE state = 'pending';


-- Rescue of expired leases: the running rows ordered by the end of their lease.
CREATE INDEX messages_lease_idx ON "${schema}".messages (lease_until)
    WHERE state = 'running';


-- Deduplication: at most one live message per (namespace, topic, unique key). Completed and dead messages
-- left this table, so their keys are free again.
CREATE UNIQUE INDEX messages_unique_key_idx ON "${schema}".messages (namespace, topic, unique_key)
    WHERE unique_key IS NOT NULL;


-- At most one head (pending or running) per ordering key, whatever writes the table.
CREATE UNIQUE INDEX messages_ordering_head_idx ON "${schema}".messages (namespace, topic, ordering_key)
    WHERE ordering_key IS NOT NULL AND state <> 'waiting';


-- The successors of each ordering key in publish order: the next to promote is the first entry.
CREATE INDEX messages_ordering_waiting_idx ON "${schema}".messages (namespace, topic, ordering_key, id)
    WHERE state = 'waiting';


-- ------------------------------------------------------------------ dead letters

-- Dead letters, apart from the hot table so that failed messages neither slow claims nor bloat the claim index.
-- A dead letter keeps the id it had while live, a redrive moves it back with it.
CREATE TABLE "${schema}".dead_letters (
    id                 bigint           NOT NULL,
    namespace          text COLLATE "C" NOT NULL,
    topic              text COLLATE "C" NOT NULL,
    payload            json             NOT NULL,
    headers            jsonb            NOT NULL DEFAULT '{}'::jsonb,
    priority           smallint         NOT NULL,
    attempts           integer          NOT NULL,
    max_attempts       integer          NOT NULL,
    unique_key         text COLLATE "C",
    last_error         text             NOT NULL,
    published_at       timestamptz      NOT NULL,
    failed_at          timestamptz      NOT NULL,
    -- Who published the message and who failed it, as set by set_actor(): null when no actor was set. The default
    -- records the session's actor for statements that leave the column out.
    published_by       text,
    failed_by          text                      DEFAULT nullif(current_setting('queue.actor', true), ''),
    -- the worker whose attempt made the dead letter (null when nothing held it, as for a redrive's purge)
    worker             text,
    -- the start of the attempt that made the dead letter
    attempt_started_at timestamptz,
    ordering_key       text COLLATE "C",
    CONSTRAINT dead_letters_pkey PRIMARY KEY (id),
    CONSTRAINT dead_letters_sane CHECK (attempts >= 0 AND max_attempts >= 1 AND priority BETWEEN 0 AND 9)
);


-- Listings are per namespace (optionally per topic), oldest first by id, paged by id.
CREATE INDEX dead_letters_namespace_idx ON "${schema}".dead_letters (namespace, id);

CREATE INDEX dead_letters_topic_idx ON "${schema}".dead_letters (namespace, topic, id);


-- Dead letters by the time they failed, so "are dead letters arriving" counts only the recent ones.
CREATE INDEX dead_letters_failed_at_idx ON "${schema}".dead_letters (namespace, failed_at);


-- A unique key search probes this per topic, as it probes messages_unique_key_idx of the hot table. Partial, so
-- messages published without a key pay nothing for it.
CREATE INDEX dead_letters_unique_key_idx ON "${schema}".dead_letters (namespace, topic, unique_key, id)
    WHERE unique_key IS NOT NULL;


-- The dead letters of each ordering key, for the choice 'wait' of topic_ordering.
CREATE INDEX dead_letters_ordering_idx ON "${schema}".dead_letters (namespace, topic, ordering_key, id)
    WHERE ordering_key IS NOT NULL;


-- ------------------------------------------------------------------ completions and topics

-- Every (namespace, topic) that ever held a message, so stats list a topic even after its messages are gone.
CREATE TABLE "${schema}".topics (
    namespace          text COLLATE "C" NOT NULL,
    topic              text COLLATE "C" NOT NULL,
    first_published_at timestamptz      NOT NULL,
    CONSTRAINT topics_pkey PRIMARY KEY (namespace, topic)
);


-- Completed messages per topic. One row per topic would serialise every acknowledgement of a busy topic on
-- one row lock, so each topic has up to 16 shard rows (picked by the backend's process id) and stats sum them.
CREATE TABLE "${schema}".completed_counters (
    namespace text COLLATE "C" NOT NULL,
    topic     text COLLATE "C" NOT NULL,
    shard     smallint         NOT NULL,
    completed bigint           NOT NULL DEFAULT 0,
    CONSTRAINT completed_counters_pkey PRIMARY KEY (namespace, topic, shard),
    CONSTRAINT completed_counters_sane CHECK (shard BETWEEN 0 AND 15 AND completed >= 0)
)
-- Each acknowledgement rewrites one counter row. No indexed column changes, so with free space on the page
-- (fillfactor 50) every such update is HOT, and frequent vacuuming keeps the table a few pages long.
WITH (fillfactor = 50,
      autovacuum_vacuum_scale_factor = 0.0,
      autovacuum_vacuum_threshold = 1000,
      autovacuum_vacuum_cost_delay = 0);


-- Completed messages, when PostgresQueueConfig.completedRetention(ARCHIVE) (or a queue policy's
-- archive_completed) keeps them: the default, DELETE, does not write here. Pruning is the operator's choice:
-- DELETE ... WHERE completed_at < ...
CREATE TABLE "${schema}".completed_messages (
    id                 bigint           NOT NULL,
    namespace          text COLLATE "C" NOT NULL,
    topic              text COLLATE "C" NOT NULL,
    payload            json             NOT NULL,
    headers            jsonb            NOT NULL DEFAULT '{}'::jsonb,
    priority           smallint         NOT NULL,
    attempts           integer          NOT NULL,
    max_attempts       integer          NOT NULL,
    unique_key         text COLLATE "C",
    worker             text,
    published_at       timestamptz      NOT NULL,
    completed_at       timestamptz      NOT NULL,
    -- who published the message, as set by set_actor()
    published_by       text,
    -- the start of the attempt that completed the message
    attempt_started_at timestamptz,
    ordering_key       text COLLATE "C",
    CONSTRAINT completed_messages_pkey PRIMARY KEY (id)
);


CREATE INDEX completed_messages_completed_at_idx ON "${schema}".completed_messages (completed_at);

CREATE INDEX completed_messages_topic_idx ON "${schema}".completed_messages (namespace, topic, id);


-- A unique key search probes this per topic, as it probes messages_unique_key_idx of the hot table. Partial, so
-- messages archived without a key pay nothing for it.
CREATE INDEX completed_messages_unique_key_idx ON "${schema}".completed_messages (namespace, topic, unique_key, id)
    WHERE unique_key IS NOT NULL;


-- ------------------------------------------------------------------ schedules

-- Durable schedules (cron or fixed interval). The database keeps the definition and the state (next and last run),
-- and a ticker fires a due schedule by locking its row (FOR UPDATE SKIP LOCKED), publishing its messages and
-- storing its next run in one transaction, so tickers of several replicas fire each due time exactly once.
CREATE TABLE "${schema}".schedules (
    namespace           text COLLATE "C" NOT NULL,
    name                text COLLATE "C" NOT NULL,
    cron                text,
    interval_micros     bigint,
    time_zone           text             NOT NULL,
    topic               text COLLATE "C" NOT NULL,
    -- the payload of every message the schedule publishes, kept exactly as given (json, not jsonb)
    payload             json             NOT NULL,
    headers             jsonb            NOT NULL DEFAULT '{}'::jsonb,
    priority            smallint         NOT NULL,
    max_attempts        integer          NOT NULL,
    start_at            timestamptz,
    end_at              timestamptz,
    missed_policy       text             NOT NULL,
    missed_bound        integer          NOT NULL,
    missed_grace_micros bigint           NOT NULL,
    paused              boolean          NOT NULL DEFAULT false,
    -- null: finished (past its end)
    next_run_at         timestamptz,
    last_run_at         timestamptz,
    created_at          timestamptz      NOT NULL,
    updated_at          timestamptz      NOT NULL,
    -- who paused and who last changed the schedule, as set by set_actor()
    paused_by           text,
    updated_by          text,
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


-- ------------------------------------------------------------------ the SQL rules

-- One alternative of a parsed cron expression (an expression with "|" in a field has several), as cron_next_run
-- works on it. Value sets are bit masks, bit n set when the value n matches.
CREATE TYPE "${schema}"._cron_fields AS (
    seconds          bigint,
    minutes          bigint,
    hours            bigint,
    months           bigint,
    -- bits 1 to 31, cut to the length of each month when used
    month_days       bigint,
    -- the one day a lone backward range with a step (6 fields, such as 25-5/2) stands for, used only when it
    -- falls strictly inside the month, as cron-utils does
    wrapped_step_day integer,
    -- 'star' (written * or */1), 'question' (?) or 'other'
    month_day_kind   text,
    -- bit 0 is Sunday, 6 Saturday
    week_days        integer,
    -- the pairs (weekday, n) of "weekday#n", flattened
    nth_week_days    integer[],
    week_day_kind    text,
    -- 6 fields: a day must match both day fields, 5 fields: either
    both_days        boolean
);


-- ------------------------------------------------------------------ per-queue policy

-- What SQL callers get when they pass no explicit decision: the default max attempts of a push, the backoff of a
-- nack without delay, the visibility timeout of a pull. The queue '*' applies to every queue of its namespace,
-- the namespace '*' to every namespace (names never contain '*'). The defaults are the Java engine's
-- (QueueOptions.defaults(), Backoff.DEFAULT, Pull.DEFAULT_VISIBILITY), which writes its configuration here.
CREATE TABLE "${schema}".queue_policies (
    namespace          text COLLATE "C" NOT NULL,
    queue              text COLLATE "C" NOT NULL,
    max_attempts       integer          NOT NULL DEFAULT 20,
    backoff_base       interval         NOT NULL DEFAULT interval '1 second',
    backoff_cap        interval         NOT NULL DEFAULT interval '1 hour',
    backoff_multiplier double precision NOT NULL DEFAULT 2.0,
    backoff_jitter     double precision NOT NULL DEFAULT 0.2,
    visibility_timeout interval         NOT NULL DEFAULT interval '30 seconds',
    max_payload_bytes  integer          NOT NULL DEFAULT 1048576,
    archive_completed  boolean          NOT NULL DEFAULT false,
    updated_at         timestamptz      NOT NULL,
    updated_by         text,
    CONSTRAINT queue_policies_pkey PRIMARY KEY (namespace, queue),
    CONSTRAINT queue_policies_sane CHECK (
        max_attempts BETWEEN 1 AND 1000
        AND backoff_base >= interval '0' AND backoff_cap >= backoff_base AND backoff_cap <= interval '365 days'
        AND backoff_multiplier BETWEEN 1 AND 100
        AND backoff_jitter BETWEEN 0 AND 1
        AND visibility_timeout BETWEEN interval '1 second' AND interval '24 hours'
        AND max_payload_bytes BETWEEN 2 AND 67108864)
);


-- ------------------------------------------------------------------ tenants and the trail

-- The namespaces granted to each role (grant_tenant). A trusted login (a superuser, or a member of the schema's
-- owner, of "<schema>_app" or of "<schema>_operator") may use every namespace, any other login exactly the
-- namespaces granted to a role it is a member of.
CREATE TABLE "${schema}".tenant_grants (
    namespace  text COLLATE "C" NOT NULL,
    role_name  text COLLATE "C" NOT NULL,
    granted_at timestamptz      NOT NULL,
    granted_by text,
    CONSTRAINT tenant_grants_pkey PRIMARY KEY (namespace, role_name)
);


-- Operations whose rows are gone afterwards (a purge) or that move many rows at once are recorded here, and so are
-- the changes of schedules and queue policies (by triggers, whichever engine made them). prune_audit_log() deletes
-- the rows older than the retention set by set_audit_retention (none: kept for ever).
CREATE TABLE "${schema}".audit_log (
    id        bigint GENERATED ALWAYS AS IDENTITY,
    at        timestamptz      NOT NULL,
    namespace text COLLATE "C" NOT NULL,
    actor     text,
    action    text             NOT NULL,
    subject   text,
    ids       bigint[],
    count     integer          NOT NULL,
    -- the login that did it, besides the actor the application names (set_actor)
    login     text                      DEFAULT session_user,
    CONSTRAINT audit_log_pkey PRIMARY KEY (id)
);


CREATE INDEX audit_log_namespace_idx ON "${schema}".audit_log (namespace, at);


-- Pruning walks the log by time: a range scan, bounded by its limit, whatever the table's size.
CREATE INDEX audit_log_at_idx ON "${schema}".audit_log (at);


-- The attempt history: one row per attempt that ended in a retry (a nack or failure with attempts left), an
-- expired lease or the dead letters. At most 20 per message (the oldest go), removed with the message: when it is
-- completed without archive, purged from the dead letters or pruned from the archive, or cancelled. A successful
-- attempt writes nothing here: the running one is read from messages, a completed one from the archive.
CREATE TABLE "${schema}".attempt_errors (
    id         bigint GENERATED ALWAYS AS IDENTITY,
    message_id bigint           NOT NULL,
    namespace  text COLLATE "C" NOT NULL,
    attempt    integer          NOT NULL,
    error      text,
    worker     text,
    failed_at  timestamptz      NOT NULL,
    actor      text,
    started_at timestamptz,
    -- 'retry', 'lease_expired' (the rescue gave it back) or 'dead' (it made the dead letter). 'running' and
    -- 'completed' are never stored.
    outcome    text,
    -- The place of the attempt among all the ended attempts of the message (not reset by a redrive), so the
    -- attempts no longer kept are counted exactly as the first kept ordinal minus one, without a counter to update.
    ordinal    integer          NOT NULL,
    CONSTRAINT attempt_errors_pkey PRIMARY KEY (id),
    CONSTRAINT attempt_errors_outcome CHECK (outcome IN ('retry', 'lease_expired', 'dead'))
);


-- A message's history, and its latest ordinal in one probe.
CREATE INDEX attempt_errors_message_idx ON "${schema}".attempt_errors (message_id, id);


-- ------------------------------------------------------------------ operator

-- One row per running queue process (a Java queue with a subscription, or another client that calls
-- worker_heartbeat). A row is written once per heartbeat interval, so the table stays a handful of rows: it is
-- read whole by the operator's functions. subscriptions is a JSON array of objects
-- {"namespace", "topics": [...], "worker", "concurrency", "in_flight"}, so the containment operator answers
-- "does a live process subscribe this topic" and "is this lease holder alive" without a join table.
CREATE TABLE "${schema}".workers (
    id                 text COLLATE "C" NOT NULL,
    host               text             NOT NULL,
    pid                bigint           NOT NULL,
    started_at         timestamptz      NOT NULL,
    version            text,
    listener           text,
    concurrency        integer          NOT NULL DEFAULT 0,
    in_flight          integer          NOT NULL DEFAULT 0,
    subscriptions      jsonb            NOT NULL DEFAULT '[]'::jsonb,
    heartbeat_interval interval         NOT NULL,
    heartbeat_at       timestamptz      NOT NULL,
    -- the login that wrote the row: another untrusted login may neither overwrite nor remove it
    login              text                      DEFAULT session_user,
    CONSTRAINT workers_pkey PRIMARY KEY (id),
    CONSTRAINT workers_sane CHECK (jsonb_typeof(subscriptions) = 'array' AND concurrency >= 0 AND in_flight >= 0)
);


-- Schema-wide settings of the queue, one row per name (such as audit_retention, the audit log's retention).
CREATE TABLE "${schema}".settings (
    name       text COLLATE "C" NOT NULL,
    value      text             NOT NULL,
    updated_at timestamptz      NOT NULL,
    updated_by text,
    CONSTRAINT settings_pkey PRIMARY KEY (name)
);


-- ------------------------------------------------------------------ flow control

-- Topics paused for the whole fleet, read by the claim. A claim takes a shared advisory lock per topic it claims
-- from before it reads this table, and a pause takes the same lock exclusively before it writes its row: once
-- pause_queue has committed, no claim of any process starts a message of that topic.
CREATE TABLE "${schema}".paused_topics (
    namespace text COLLATE "C" NOT NULL,
    topic     text COLLATE "C" NOT NULL,
    paused_at timestamptz      NOT NULL,
    paused_by text,
    CONSTRAINT paused_topics_pkey PRIMARY KEY (namespace, topic)
);


-- What an ordering key does behind a dead letter, per topic: 'wait' until the dead letter is redriven or purged, or
-- 'continue'. A row only for topics that set one (none: 'wait').
CREATE TABLE "${schema}".topic_ordering (
    namespace          text COLLATE "C" NOT NULL,
    topic              text COLLATE "C" NOT NULL,
    behind_dead_letter text             NOT NULL,
    changed_at         timestamptz      NOT NULL,
    changed_by         text,
    CONSTRAINT topic_ordering_pkey PRIMARY KEY (namespace, topic),
    CONSTRAINT topic_ordering_choice CHECK (behind_dead_letter IN ('wait', 'continue'))
);


-- A topic's fleet-wide limits: at most max_running of its messages running at once, optionally at most
-- max_running_per_partition per partition, at most rate_starts starts per rate_period_micros, optionally
-- partition_rate_starts per partition_rate_period_micros per partition.
CREATE TABLE "${schema}".topic_limits (
    namespace                    text COLLATE "C" NOT NULL,
    topic                        text COLLATE "C" NOT NULL,
    max_running                  integer,
    -- Where a message's partition comes from: 'header' (the value of the header partition_name) or 'ordering_key'
    -- (no partition_name: messages without a key share the partition of the empty value, which no key can be).
    partition_kind               text,
    partition_name               text,
    max_running_per_partition    integer,
    rate_starts                  integer,
    rate_period_micros           bigint,
    partition_rate_starts        integer,
    partition_rate_period_micros bigint,
    set_at                       timestamptz      NOT NULL,
    set_by                       text,
    CONSTRAINT topic_limits_pkey PRIMARY KEY (namespace, topic),
    CONSTRAINT topic_limits_valid CHECK (
        (max_running IS NULL OR max_running BETWEEN 1 AND 100000)
        AND (max_running_per_partition IS NULL OR max_running_per_partition BETWEEN 1 AND 100000)
        AND (rate_starts IS NULL) = (rate_period_micros IS NULL)
        AND (rate_starts IS NULL OR (rate_starts BETWEEN 1 AND 1000000
                                     AND rate_period_micros BETWEEN 1000 AND 86400000000))
        AND (partition_rate_starts IS NULL) = (partition_rate_period_micros IS NULL)
        AND (partition_rate_starts IS NULL OR (partition_rate_starts BETWEEN 1 AND 1000000
                                               AND partition_rate_period_micros BETWEEN 1000 AND 86400000000))
        AND (partition_kind IS NULL OR partition_kind IN ('header', 'ordering_key'))
        -- a header partition names its header, an ordering-key partition nothing
        AND (partition_name IS NOT NULL) = (partition_kind IS NOT NULL AND partition_kind = 'header')
        AND ((partition_kind IS NOT NULL)
             = (max_running_per_partition IS NOT NULL OR partition_rate_starts IS NOT NULL))
        AND (max_running IS NOT NULL OR max_running_per_partition IS NOT NULL OR rate_starts IS NOT NULL
             OR partition_rate_starts IS NOT NULL))
);


-- The running messages counted against the running limits: a row per message a claim of a topic with such a limit
-- started (its id, its lease token, its partition). A holder whose message no longer runs under that token
-- (acknowledged, retried, snoozed, cancelled, dead, rescued) is deleted by the next claim of the topic, before it
-- counts: until then it counts, which can only hold a claim back, never let one through. Settling a message writes
-- nothing here, and topics without limits never read or write this table. Setting limits rebuilds the topic's
-- holders from its running messages.
CREATE TABLE "${schema}".limit_holders (
    namespace   text COLLATE "C" NOT NULL,
    topic       text COLLATE "C" NOT NULL,
    message_id  bigint           NOT NULL,
    lease_token bigint           NOT NULL,
    partition   text COLLATE "C" NOT NULL,
    CONSTRAINT limit_holders_pkey PRIMARY KEY (namespace, topic, message_id)
)
-- inserted and deleted at the pace of the limited topics' claims: room on the page and frequent vacuuming
WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000,
      autovacuum_vacuum_cost_delay = 0);


-- The token buckets that ration the starts of rate-limited topics, updated by the claim that spends them: a bucket
-- holds at most the limit's count and refills continuously at count per period. Scope 0: the topic's bucket
-- (partition ''), scope 1: a partition's.
CREATE TABLE "${schema}".limit_buckets (
    namespace   text COLLATE "C" NOT NULL,
    topic       text COLLATE "C" NOT NULL,
    scope       smallint         NOT NULL,
    partition   text COLLATE "C" NOT NULL,
    tokens      double precision NOT NULL,
    refilled_at timestamptz      NOT NULL,
    CONSTRAINT limit_buckets_pkey PRIMARY KEY (namespace, topic, scope, partition)
)
-- rewritten at every claim of a rate-limited topic, in place (no indexed column changes)
WITH (fillfactor = 50);


-- ------------------------------------------------------------------ rates

-- Rates in and out per topic, minute by minute. Minutes older than two hours are deleted, so both tables stay a
-- bounded size per topic.

-- Messages published per topic and minute. A Java queue counts its publishes in memory and writes them once per
-- flush interval, publishes through the SQL API count inline. Sharded like completed_counters (by the backend's
-- process id), so that concurrent SQL publishers of a busy topic do not queue on one row lock. Readers sum the
-- shards.
CREATE TABLE "${schema}".topic_published (
    namespace text COLLATE "C" NOT NULL,
    topic     text COLLATE "C" NOT NULL,
    minute    timestamptz      NOT NULL,
    shard     smallint         NOT NULL,
    published bigint           NOT NULL DEFAULT 0,
    CONSTRAINT topic_published_pkey PRIMARY KEY (namespace, topic, minute, shard),
    CONSTRAINT topic_published_sane CHECK (shard BETWEEN 0 AND 15 AND published >= 0)
)
-- Each count rewrites one row without changing an indexed column: with free space on the page the update is HOT.
WITH (fillfactor = 70,
      autovacuum_vacuum_scale_factor = 0.0,
      autovacuum_vacuum_threshold = 1000,
      autovacuum_vacuum_cost_delay = 0);


-- For the deletion of minutes past the bound.
CREATE INDEX topic_published_minute_idx ON "${schema}".topic_published (minute);


-- The cumulative completions of each topic (the sum of its completed_counters) as the last flush of a minute saw
-- them, one row per topic and minute: completions are not counted twice, a minute's completions are the difference
-- between its value and the one before. Deletion keeps each topic's newest row before the bound, so the first
-- minute shown always has one to subtract. A topic without any row counts from zero.
CREATE TABLE "${schema}".topic_completed (
    namespace text COLLATE "C" NOT NULL,
    topic     text COLLATE "C" NOT NULL,
    minute    timestamptz      NOT NULL,
    completed bigint           NOT NULL,
    CONSTRAINT topic_completed_pkey PRIMARY KEY (namespace, topic, minute),
    CONSTRAINT topic_completed_sane CHECK (completed >= 0)
);


-- "Is this minute's snapshot taken?" and the deletion of minutes past the bound.
CREATE INDEX topic_completed_minute_idx ON "${schema}".topic_completed (minute);


-- ------------------------------------------------------------------ head sweeps

-- Claimers resume after the position of their last claim, and look from the head now and then for messages that
-- turned up behind it. While a long transaction holds back vacuum, the head is a growing run of index entries of
-- messages claimed since, and each such look steps over all of them. This table hands the look behind a topic's
-- positions to one claimer of the fleet at a time: a row per namespace and topic with the time of the last one,
-- taken by a conditional upsert.
CREATE TABLE "${schema}".head_sweeps (
    namespace text COLLATE "C" NOT NULL,
    topic     text COLLATE "C" NOT NULL,
    swept_at  timestamptz      NOT NULL,
    CONSTRAINT head_sweeps_pkey PRIMARY KEY (namespace, topic)
)
-- a row is rewritten about once a second per topic, in place (no indexed column changes)
WITH (fillfactor = 50);
