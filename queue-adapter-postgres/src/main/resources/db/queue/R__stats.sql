-- Counts per topic (docs/operations.md): the counts of the hot table, the dead letters and the completion counters,
-- rates in and out minute by minute, and the bounded overview an operator reads. Tables: topics, messages,
-- completed_counters, dead_letters, topic_published, topic_completed, workers.
--
-- Nothing here touches the statements of the Java hot path. A Java queue counts its publishes in memory and writes
-- them once per flush interval through _engine_record_rates (one batched upsert per process). Publishes through the
-- SQL API count inline into a row sharded by backend (_count_published), as completions do in completed_counters.
-- Completions are not counted twice: each flush records the cumulative completed_counters of the minute, and a
-- minute's completions are the difference from the minute before. Minutes older than two hours are deleted, so both
-- tables stay a bounded size per topic.
--
-- For psql users: get_queue_stats, get_stats, topic_rates, topic_overview, and record_rates for installations
-- without a Java queue. For the Java adapter: _engine_stats and _engine_record_rates, called directly by trusted
-- logins, else through the gates engine_stats and engine_record_rates, which check the caller's namespaces first.


-- Per queue of the namespace: its pending (waiting included), running, completed and dead messages, and their total.
CREATE OR REPLACE FUNCTION "${schema}".get_queue_stats(p_namespace text)
RETURNS TABLE (queue text, pending bigint, running bigint, completed bigint, dead bigint, total bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
#variable_conflict use_column
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    RETURN QUERY
    SELECT s.topic, s.pending, s.running, s.completed, s.dead, s.pending + s.running + s.completed + s.dead
    FROM "${schema}"._engine_stats(p_namespace, NULL) s
    ORDER BY s.topic;
END
$$;


-- The namespace's totals: total_jobs counts pending, running, completed and dead messages.
CREATE OR REPLACE FUNCTION "${schema}".get_stats(p_namespace text)
RETURNS TABLE (total_jobs bigint, pending bigint, running bigint, completed bigint, dead bigint, total_queues bigint)
LANGUAGE sql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
    SELECT coalesce(sum(s.total), 0)::bigint, coalesce(sum(s.pending), 0)::bigint, coalesce(sum(s.running), 0)::bigint,
           coalesce(sum(s.completed), 0)::bigint, coalesce(sum(s.dead), 0)::bigint, count(*)
    FROM "${schema}".get_queue_stats(p_namespace) s
$$;


-- Per registered topic of the namespace: pending, running, completed and dead messages, and the oldest due time of a
-- pending message. A waiting message counts as pending (it has not run), but not for the oldest due time (it is
-- not claimable, its wait is its predecessor's).
CREATE OR REPLACE FUNCTION "${schema}"._engine_stats(p_namespace text, p_now timestamptz)
RETURNS TABLE (topic text, pending bigint, running bigint, completed bigint, dead bigint, oldest_due_at timestamptz)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_stats');
    END IF;
    RETURN QUERY
    SELECT t.topic::text,
           coalesce(m.pending, 0)::bigint, coalesce(m.running, 0)::bigint, coalesce(c.completed, 0)::bigint,
           coalesce(d.dead, 0)::bigint, m.oldest_due_at
    FROM "${schema}".topics t
    LEFT JOIN (SELECT x.topic,
                      count(*) FILTER (WHERE x.state IN ('pending', 'waiting')) AS pending,
                      count(*) FILTER (WHERE x.state = 'running') AS running,
                      min(x.run_at) FILTER (WHERE x.state = 'pending'
                                              AND x.run_at <= coalesce(p_now, statement_timestamp())) AS oldest_due_at
               FROM "${schema}".messages x
               WHERE x.namespace = p_namespace
               GROUP BY x.topic) m ON m.topic = t.topic
    LEFT JOIN (SELECT x.topic, sum(x.completed)::bigint AS completed
               FROM "${schema}".completed_counters x
               WHERE x.namespace = p_namespace
               GROUP BY x.topic) c ON c.topic = t.topic
    LEFT JOIN (SELECT x.topic, count(*) AS dead
               FROM "${schema}".dead_letters x
               WHERE x.namespace = p_namespace
               GROUP BY x.topic) d ON d.topic = t.topic
    WHERE t.namespace = p_namespace
    ORDER BY t.topic;
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_stats(p_namespace text, p_now timestamptz)
RETURNS TABLE (topic text, pending bigint, running bigint, completed bigint, dead bigint, oldest_due_at timestamptz)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    PERFORM "${schema}"._check_engine_now(p_now);
    RETURN QUERY SELECT * FROM "${schema}"._engine_stats(p_namespace, p_now);
END
$$;


-- The start of the minute of p_at, in UTC whatever the session's time zone.
CREATE OR REPLACE FUNCTION "${schema}"._minute_of(p_at timestamptz) RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT to_timestamp(floor(extract(epoch FROM p_at) / 60) * 60)
$$;


-- How long per-minute rows are kept: the overview charts the last hour, the margin covers a late reader.
CREATE OR REPLACE FUNCTION "${schema}"._rates_kept() RETURNS interval
LANGUAGE sql IMMUTABLE AS $$
    SELECT interval '2 hours'
$$;


-- Counts p_count publishes of a topic in the current minute, in this backend's shard. The first count of a
-- shard's minute also deletes the topic's minutes past the bound (an index range, usually empty), so SQL-only
-- installations stay bounded without a flusher.
CREATE OR REPLACE FUNCTION "${schema}"._count_published(p_namespace text, p_topic text, p_count bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_minute timestamptz := "${schema}"._minute_of(statement_timestamp());
    v_new    boolean;
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_count_published');
    END IF;
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


-- Adds the publishes a process counted since its last flush (one row per namespace and topic) to the current
-- minute, in this backend's shard, and records the cumulative completions of the minute (a row is rewritten only
-- when its counter moved). The first flush of a minute also deletes minutes past the bound. Returns the topics
-- whose completions it recorded. It calls no helper function but the caller check (_check_engine_caller).
CREATE OR REPLACE FUNCTION "${schema}"._engine_record_rates(p_namespaces text[], p_topics text[], p_published bigint[],
                                                            p_now timestamptz)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    -- as _minute_of and _rates_kept compute them
    v_minute      timestamptz := to_timestamp(floor(extract(epoch FROM coalesce(p_now, statement_timestamp())) / 60) * 60);
    v_bound       timestamptz := v_minute - interval '2 hours';
    v_snapshotted integer := 0;
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_record_rates');
    END IF;
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


-- The gate of _engine_record_rates, as every engine_ gate: the namespaces of the counts must be the login's. At most
-- 10,000 counts a call (the Java queue splits a larger flush), none NULL, each 0 to 10^12.
CREATE OR REPLACE FUNCTION "${schema}".engine_record_rates(p_namespaces text[], p_topics text[], p_published bigint[],
                                                           p_now timestamptz)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_array('p_namespaces', p_namespaces, 0, 10000);
    PERFORM "${schema}"._check_engine_namespaces(p_namespaces);
    PERFORM "${schema}"._check_array('p_topics', p_topics, cardinality(p_namespaces), cardinality(p_namespaces));
    PERFORM "${schema}"._check_names('p_topics', p_topics);
    PERFORM "${schema}"._check_array('p_published', p_published, cardinality(p_namespaces), cardinality(p_namespaces));
    PERFORM "${schema}"._check_ranges('p_published', p_published, 0, 1000000000000, '0 to 1000000000000');
    PERFORM "${schema}"._check_engine_now(p_now);
    RETURN "${schema}"._engine_record_rates(p_namespaces, p_topics, p_published, p_now);
END
$$;


-- For installations without a Java queue: the minute's completions, to be called about once a minute
-- (pg_cron, or any scheduler). Publishes through the SQL API are counted without it.
CREATE OR REPLACE FUNCTION "${schema}".record_rates() RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    RETURN "${schema}"._engine_record_rates(ARRAY[]::text[], ARRAY[]::text[], ARRAY[]::bigint[], NULL);
END
$$;


-- Per topic of the namespace and minute of the last p_minutes (the current one included, so far): messages
-- published and completed. Completions of a minute are the difference between its recorded counter and the one
-- before (for the current minute: the live counters). Where minutes are missing (no queue process ran), the
-- completions of the gap show in the minute after it. Reads at most about 120 minute rows per topic.
CREATE OR REPLACE FUNCTION "${schema}".topic_rates(p_namespace text, p_minutes integer DEFAULT 60)
RETURNS TABLE (queue text, minute timestamptz, published bigint, completed bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_current timestamptz := "${schema}"._minute_of(statement_timestamp());
    v_from    timestamptz;
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    p_minutes := coalesce(p_minutes, 60);
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
-- and stops at the cap, rather than filtering a sequential scan that may read the whole table). Pending, running and
-- dead are counted exactly up to p_exact_up_to. Past it the count is the planner's estimate (at least
-- p_exact_up_to + 1) and its _exact column is false: an overview must not count a million pending rows per request.
-- completed comes from the counters, oldest_due_at from one probe of the claim index per priority, live_subscribers
-- from the workers table.
CREATE OR REPLACE FUNCTION "${schema}".topic_overview(p_namespace text, p_exact_up_to integer DEFAULT 1000,
                                                      p_max_topics integer DEFAULT 1000)
RETURNS TABLE (queue text, pending bigint, pending_exact boolean, running bigint, running_exact boolean, dead bigint,
               dead_exact boolean, completed bigint, oldest_due_at timestamptz, live_subscribers integer)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_now   timestamptz := statement_timestamp();
    v_topic record;
    v_n     bigint;
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    p_exact_up_to := coalesce(p_exact_up_to, 1000);
    p_max_topics := coalesce(p_max_topics, 1000);
    -- each topic counts up to p_exact_up_to + 1 index entries three times: bounded work per call
    PERFORM "${schema}"._check_range('p_exact_up_to', p_exact_up_to, 1, 10000, '1 to 10000');
    PERFORM "${schema}"._check_range('p_max_topics', p_max_topics, 1, 1000, '1 to 1000');
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
CREATE OR REPLACE FUNCTION "${schema}"._estimate(p_query text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_plan json;
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_estimate');
    END IF;
    EXECUTE 'EXPLAIN (FORMAT JSON) ' || p_query INTO v_plan;
    RETURN (v_plan -> 0 -> 'Plan' ->> 'Plan Rows')::numeric::bigint;
END
$$;
