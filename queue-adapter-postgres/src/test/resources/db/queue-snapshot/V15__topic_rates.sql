-- queue schema, version 15: rates in and out per topic, minute by minute, from counters the queue keeps, and the
-- bounded topic counts the operator's overview reads (docs/operations.md).
--
-- Nothing here touches the statements of the Java hot path. Publishes of a Java queue are counted in the
-- process's memory and written once per flush interval by _engine_record_rates (one batched upsert per process).
-- Publishes through the SQL API (push, push_batch, schedules fired in SQL) count inline into a sharded counter
-- row, as completions do in completed_counters. Completions are not counted again: each flush records the
-- cumulative completed_counters of the minute (rewriting a row only when its counter moved), and the difference
-- between a minute's value and the one before is the minute's completions. Minutes older than two hours are
-- deleted, so both tables stay a bounded size per topic.

-- ------------------------------------------------------------------ tables

-- Messages published per topic and minute. Sharded like completed_counters (by the backend's process id), so
-- that concurrent SQL publishers of a busy topic do not queue on one row lock. Readers sum the shards.
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

-- The cumulative completions of each topic (the sum of its completed_counters) as the last flush of a minute
-- saw them. One row per topic and minute. Deletion keeps each topic's newest row before the bound, so the first
-- minute shown always has one to subtract. A topic without any row started from zero after this migration, which
-- records the others' counters as they are now, at minute -infinity.
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

INSERT INTO "${schema}".topic_completed (namespace, topic, minute, completed)
SELECT x.namespace, x.topic, '-infinity', sum(x.completed)
FROM "${schema}".completed_counters x
GROUP BY x.namespace, x.topic;

-- ------------------------------------------------------------------ helpers

-- The start of the minute of p_at, in UTC whatever the session's time zone.
CREATE FUNCTION "${schema}"._minute_of(p_at timestamptz) RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT to_timestamp(floor(extract(epoch FROM p_at) / 60) * 60)
$$;

-- How long per-minute rows are kept: the overview charts the last hour, the margin covers a late reader.
CREATE FUNCTION "${schema}"._rates_kept() RETURNS interval
LANGUAGE sql IMMUTABLE AS $$
    SELECT interval '2 hours'
$$;

-- Counts p_count publishes of a topic in the current minute, in this backend's shard. The first count of a
-- shard's minute also deletes the topic's minutes past the bound (an index range, usually empty), so SQL-only
-- installations stay bounded without a flusher.
CREATE FUNCTION "${schema}"._count_published(p_namespace text, p_topic text, p_count bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_minute timestamptz := "${schema}"._minute_of(statement_timestamp());
    v_new    boolean;
BEGIN
    IF p_count IS NULL OR p_count <= 0 THEN
        RETURN;
    END IF;
    INSERT INTO "${schema}".topic_published AS c (namespace, topic, minute, shard, published)
    VALUES (p_namespace, p_topic, v_minute, pg_backend_pid() % 16, p_count)
    ON CONFLICT (namespace, topic, minute, shard) DO UPDATE SET published = c.published + excluded.published
    RETURNING (c.xmax = 0) INTO v_new;
    IF v_new THEN
        DELETE FROM "${schema}".topic_published p
        WHERE p.namespace = p_namespace AND p.topic = p_topic AND p.minute < v_minute - "${schema}"._rates_kept();
    END IF;
END
$$;

-- ------------------------------------------------------------------ the SQL API counts its publishes

-- Version 10's insert of push (and of schedules fired in SQL), counting the message when one was stored.
CREATE OR REPLACE FUNCTION "${schema}"._insert_message(
    p_namespace text, p_queue text, p_payload json, p_headers jsonb, p_priority integer, p_max_attempts integer,
    p_unique_key text, p_run_at timestamptz, p_notify boolean)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_id        bigint;
    v_duplicate boolean;
BEGIN
    SELECT e.id, e.duplicate INTO v_id, v_duplicate
    FROM "${schema}"._engine_publish(ARRAY[p_namespace], ARRAY[p_queue], ARRAY[p_payload::text],
                                     ARRAY[p_headers::text], ARRAY[p_priority], ARRAY[p_max_attempts],
                                     ARRAY[p_unique_key], ARRAY["${schema}"._micros(p_run_at - timestamptz 'epoch')],
                                     ARRAY[NULL::bigint], NULL, "${schema}"._notify_wanted(p_notify),
                                     "${schema}".current_actor()) e;
    IF v_duplicate THEN
        RETURN NULL;
    END IF;
    PERFORM "${schema}"._count_published(p_namespace, p_queue, 1);
    RETURN v_id;
END
$$;

-- Version 10's push_batch, counting the messages stored (duplicates are not).
CREATE OR REPLACE FUNCTION "${schema}".push_batch(
    p_namespace text, p_queue text, p_payloads json[],
    p_delay interval DEFAULT NULL, p_run_at timestamptz DEFAULT NULL, p_priority integer DEFAULT 0,
    p_max_attempts integer DEFAULT NULL, p_unique_keys text[] DEFAULT NULL, p_headers jsonb DEFAULT '{}',
    p_notify boolean DEFAULT NULL)
RETURNS TABLE (ordinal integer, id bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_policy   "${schema}".queue_policies;
    v_run_at   timestamptz;
    v_count    integer := coalesce(cardinality(p_payloads), 0);
    v_i        integer;
    v_row      record;
    v_stored   bigint := 0;
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    PERFORM "${schema}"._check_name('p_queue', p_queue);
    IF p_payloads IS NULL OR v_count > 10000 THEN
        PERFORM "${schema}"._invalid('p_payloads', coalesce(v_count || ' payloads', 'null'),
            'an array of at most 10000 payloads');
    END IF;
    IF p_unique_keys IS NOT NULL AND cardinality(p_unique_keys) <> v_count THEN
        PERFORM "${schema}"._invalid('p_unique_keys', cardinality(p_unique_keys) || ' keys',
            'one key (or NULL) per payload: ' || v_count);
    END IF;
    v_policy := "${schema}".get_queue_policy(p_namespace, p_queue);
    FOR v_i IN 1 .. v_count LOOP
        PERFORM "${schema}"._check_payload('p_payloads[' || v_i || ']', p_payloads[v_i], v_policy.max_payload_bytes);
        IF p_unique_keys[v_i] IS NOT NULL THEN
            PERFORM "${schema}"._check_text('p_unique_keys[' || v_i || ']', p_unique_keys[v_i], 255);
        END IF;
    END LOOP;
    v_run_at := "${schema}"._run_at(p_delay, p_run_at);
    PERFORM "${schema}"._check_range('p_priority', coalesce(p_priority, 0), 0, 9, '0 (first) to 9 (last)');
    IF p_max_attempts IS NOT NULL THEN
        PERFORM "${schema}"._check_range('p_max_attempts', p_max_attempts, 1, 1000, '1 to 1000');
    END IF;
    PERFORM "${schema}"._check_headers('p_headers', coalesce(p_headers, '{}'), 32);
    IF v_count = 0 THEN
        RETURN;
    END IF;
    -- a duplicate (of a live message or of an earlier payload of the batch) is reported as NULL
    FOR v_row IN
        SELECT e.ord, e.id, e.duplicate
        FROM "${schema}"._engine_publish(
            array_fill(p_namespace, ARRAY[v_count]), array_fill(p_queue, ARRAY[v_count]), p_payloads::text[],
            array_fill(coalesce(p_headers, '{}')::text, ARRAY[v_count]),
            array_fill(coalesce(p_priority, 0), ARRAY[v_count]),
            array_fill(coalesce(p_max_attempts, v_policy.max_attempts), ARRAY[v_count]),
            coalesce(p_unique_keys, array_fill(NULL::text, ARRAY[v_count])),
            array_fill("${schema}"._micros(v_run_at - timestamptz 'epoch'), ARRAY[v_count]),
            array_fill(NULL::bigint, ARRAY[v_count]),
            NULL, "${schema}"._notify_wanted(p_notify), "${schema}".current_actor()) e
        ORDER BY e.ord
    LOOP
        ordinal := v_row.ord;
        id := CASE WHEN v_row.duplicate THEN NULL ELSE v_row.id END;
        IF NOT v_row.duplicate THEN
            v_stored := v_stored + 1;
        END IF;
        RETURN NEXT;
    END LOOP;
    PERFORM "${schema}"._count_published(p_namespace, p_queue, v_stored);
END
$$;

-- ------------------------------------------------------------------ the flush of a Java queue

-- Adds the publishes a process counted since its last flush (one row per namespace and topic) to the current
-- minute, in this backend's shard, and records the cumulative completions of the minute (a row is rewritten only
-- when its counter moved). The first flush of a minute also deletes minutes past the bound. Returns the topics
-- whose completions it recorded. It calls no helper function: a login allowed to execute the engine functions
-- directly (rather than through their gates) needs no grant on anything else.
CREATE FUNCTION "${schema}"._engine_record_rates(p_namespaces text[], p_topics text[], p_published bigint[],
                                                 p_now timestamptz)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    -- as _minute_of and _rates_kept compute them
    v_minute      timestamptz := to_timestamp(floor(extract(epoch FROM coalesce(p_now, statement_timestamp())) / 60) * 60);
    v_bound       timestamptz := v_minute - interval '2 hours';
    v_snapshotted integer := 0;
BEGIN
    IF coalesce(cardinality(p_namespaces), 0) > 0 THEN
        -- sorted, so that two processes flushing the same topics take their row locks in the same order
        INSERT INTO "${schema}".topic_published AS c (namespace, topic, minute, shard, published)
        SELECT u.n, u.t, v_minute, pg_backend_pid() % 16, sum(u.p)
        FROM unnest(p_namespaces, p_topics, p_published) AS u(n, t, p)
        WHERE u.p > 0
        GROUP BY u.n, u.t
        ORDER BY u.n, u.t
        ON CONFLICT (namespace, topic, minute, shard) DO UPDATE SET published = c.published + excluded.published;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM "${schema}".topic_completed c WHERE c.minute = v_minute) THEN
        DELETE FROM "${schema}".topic_completed c
        WHERE c.minute < v_bound
          AND EXISTS (SELECT 1 FROM "${schema}".topic_completed n
                      WHERE n.namespace = c.namespace AND n.topic = c.topic AND n.minute > c.minute
                        AND n.minute < v_bound);
        DELETE FROM "${schema}".topic_published p WHERE p.minute < v_bound;
    END IF;
    INSERT INTO "${schema}".topic_completed AS c (namespace, topic, minute, completed)
    SELECT x.namespace, x.topic, v_minute, sum(x.completed)
    FROM "${schema}".completed_counters x
    GROUP BY x.namespace, x.topic
    ORDER BY x.namespace, x.topic
    ON CONFLICT (namespace, topic, minute) DO UPDATE SET completed = excluded.completed
        WHERE c.completed < excluded.completed;
    GET DIAGNOSTICS v_snapshotted = ROW_COUNT;
    RETURN v_snapshotted;
END
$$;

-- The gate of _engine_record_rates (version 13's pattern): the namespaces of the counts must be the login's.
CREATE FUNCTION "${schema}".engine_record_rates(p_namespaces text[], p_topics text[], p_published bigint[],
                                                p_now timestamptz)
RETURNS integer
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_engine_namespaces(p_namespaces);
    RETURN "${schema}"._engine_record_rates(p_namespaces, p_topics, p_published, p_now);
END
$$;

-- For installations without a Java queue: the minute's completions, to be called about once a minute
-- (pg_cron, or any scheduler). Publishes through the SQL API are counted without it.
CREATE FUNCTION "${schema}".record_rates() RETURNS integer
LANGUAGE plpgsql AS $$
BEGIN
    RETURN "${schema}"._engine_record_rates(ARRAY[]::text[], ARRAY[]::text[], ARRAY[]::bigint[], NULL);
END
$$;

-- ------------------------------------------------------------------ reading

-- Per topic of the namespace and minute of the last p_minutes (the current one included, so far): messages
-- published and completed. Completions of a minute are the difference between its recorded counter and the one
-- before (for the current minute: the live counters). Where minutes are missing (no queue process ran), the
-- completions of the gap show in the minute after it. Reads at most about 120 minute rows per topic.
CREATE FUNCTION "${schema}".topic_rates(p_namespace text, p_minutes integer DEFAULT 60)
RETURNS TABLE (queue text, minute timestamptz, published bigint, completed bigint)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
    v_current timestamptz := "${schema}"._minute_of(statement_timestamp());
    v_from    timestamptz;
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    PERFORM "${schema}"._check_range('p_minutes', p_minutes, 1, 120, '1 to 120');
    v_from := v_current - (p_minutes - 1) * interval '1 minute';
    RETURN QUERY
    WITH recorded AS (
        SELECT r.topic, r.minute, max(r.completed) AS completed
        FROM (SELECT c.topic, c.minute, c.completed
              FROM "${schema}".topic_completed c
              WHERE c.namespace = p_namespace
              UNION ALL
              SELECT x.topic, v_current, sum(x.completed)::bigint
              FROM "${schema}".completed_counters x
              WHERE x.namespace = p_namespace
              GROUP BY x.topic) r
        GROUP BY r.topic, r.minute
    ), done AS (
        SELECT s.topic, s.minute,
               s.completed - coalesce(lag(s.completed) OVER (PARTITION BY s.topic ORDER BY s.minute), 0) AS n
        FROM recorded s
    ), outs AS (
        SELECT d.topic, d.minute, d.n
        FROM done d
        WHERE d.minute >= v_from AND d.n > 0
    ), ins AS (
        SELECT p.topic, p.minute, sum(p.published)::bigint AS n
        FROM "${schema}".topic_published p
        WHERE p.namespace = p_namespace AND p.minute >= v_from
        GROUP BY p.topic, p.minute
    )
    SELECT coalesce(i.topic, o.topic)::text, coalesce(i.minute, o.minute), coalesce(i.n, 0)::bigint,
           coalesce(o.n, 0)::bigint
    FROM ins i
    FULL JOIN outs o ON o.topic = i.topic AND o.minute = i.minute
    ORDER BY 1, 2;
END
$$;

-- Per topic of the namespace (at most p_max_topics, by name): the counts an overview shows, each read from an
-- index and bounded (the ORDER BY of each capped count is its index's order, so that the planner walks the index
-- and stops at the cap, rather than filtering a sequential scan that may read the whole table). Pending, running and dead are counted exactly up to p_exact_up_to. Past it the count is
-- the planner's estimate (at least p_exact_up_to + 1) and its _exact column is false: an overview must not count
-- a million pending rows per request. completed comes from the counters, oldest_due_at from one probe of the
-- claim index per priority, live_subscribers from the workers table.
CREATE FUNCTION "${schema}".topic_overview(p_namespace text, p_exact_up_to integer DEFAULT 1000,
                                           p_max_topics integer DEFAULT 1000)
RETURNS TABLE (queue text, pending bigint, pending_exact boolean, running bigint, running_exact boolean, dead bigint,
               dead_exact boolean, completed bigint, oldest_due_at timestamptz, live_subscribers integer)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
    v_now   timestamptz := statement_timestamp();
    v_topic record;
    v_n     bigint;
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    PERFORM "${schema}"._check_range('p_exact_up_to', p_exact_up_to, 1, 1000000, '1 to 1000000');
    PERFORM "${schema}"._check_range('p_max_topics', p_max_topics, 1, 10000, '1 to 10000');
    FOR v_topic IN
        SELECT t.topic::text AS topic FROM "${schema}".topics t
        WHERE t.namespace = p_namespace
        ORDER BY t.topic
        LIMIT p_max_topics
    LOOP
        queue := v_topic.topic;

        SELECT count(*) INTO v_n FROM (
            SELECT 1 FROM "${schema}".messages m
            WHERE m.namespace = p_namespace AND m.topic = v_topic.topic AND m.state = 'pending'
            ORDER BY m.priority, m.run_at, m.id
            LIMIT p_exact_up_to + 1) l;
        pending_exact := v_n <= p_exact_up_to;
        pending := CASE WHEN pending_exact THEN v_n ELSE greatest(v_n, "${schema}"._estimate(format(
            'SELECT 1 FROM %I.messages m WHERE m.namespace = %L AND m.topic = %L AND m.state = %L',
            '${schema}', p_namespace, v_topic.topic, 'pending'))) END;

        SELECT count(*) INTO v_n FROM (
            SELECT 1 FROM "${schema}".messages m
            WHERE m.state = 'running' AND m.namespace = p_namespace AND m.topic = v_topic.topic
            ORDER BY m.lease_until
            LIMIT p_exact_up_to + 1) l;
        running_exact := v_n <= p_exact_up_to;
        running := CASE WHEN running_exact THEN v_n ELSE greatest(v_n, "${schema}"._estimate(format(
            'SELECT 1 FROM %I.messages m WHERE m.namespace = %L AND m.topic = %L AND m.state = %L',
            '${schema}', p_namespace, v_topic.topic, 'running'))) END;

        SELECT count(*) INTO v_n FROM (
            SELECT 1 FROM "${schema}".dead_letters d
            WHERE d.namespace = p_namespace AND d.topic = v_topic.topic
            ORDER BY d.id
            LIMIT p_exact_up_to + 1) l;
        dead_exact := v_n <= p_exact_up_to;
        dead := CASE WHEN dead_exact THEN v_n ELSE greatest(v_n, "${schema}"._estimate(format(
            'SELECT 1 FROM %I.dead_letters d WHERE d.namespace = %L AND d.topic = %L',
            '${schema}', p_namespace, v_topic.topic))) END;

        SELECT coalesce(sum(x.completed), 0)::bigint INTO completed
        FROM "${schema}".completed_counters x
        WHERE x.namespace = p_namespace AND x.topic = v_topic.topic;

        SELECT min(f.run_at) INTO oldest_due_at
        FROM generate_series(0, 9) p
        CROSS JOIN LATERAL (SELECT m.run_at FROM "${schema}".messages m
                            WHERE m.namespace = p_namespace AND m.topic = v_topic.topic AND m.state = 'pending'
                              AND m.priority = p AND m.run_at <= v_now
                            ORDER BY m.run_at LIMIT 1) f;

        live_subscribers := "${schema}"._topic_subscribers(p_namespace, v_topic.topic);
        RETURN NEXT;
    END LOOP;
END
$$;

-- The planner's estimate of the rows of a query (built by the caller from quoted identifiers and literals):
-- planning only, nothing is read. Volatile because PostgreSQL runs EXPLAIN only in a volatile function.
CREATE FUNCTION "${schema}"._estimate(p_query text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_plan json;
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON) ' || p_query INTO v_plan;
    RETURN (v_plan -> 0 -> 'Plan' ->> 'Plan Rows')::numeric::bigint;
END
$$;
