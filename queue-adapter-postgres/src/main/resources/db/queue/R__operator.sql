-- What an operator needs to see (docs/operations.md, docs/sql.md): the live workers, health warnings, the answer to
-- "why did this message not run?", a message's attempts, and messages and namespaces found without a message id.
-- All are functions, so psql users get what the Java side and the CLI get. Tables: workers (written by the
-- heartbeats), and read only: messages, dead_letters, completed_messages, attempt_errors, topics, schedules, and
-- PostgreSQL's statistics views.
--
-- Every read is bounded whatever the size of the tables (index probes per topic, capped counts, windows of an
-- index range): an operator's page must not scan a million pending messages. A tenant sees its granted namespaces
-- only, the worker rows its own login wrote, and other logins' transactions and replication slots without details.
--
-- For psql users: worker_heartbeat, worker_stop, workers, health, find_messages, list_namespaces, inspect,
-- inspect_attempts and explain. For the Java adapter: _engine_find and _engine_attempts, called directly by trusted
-- logins, else through the gates engine_find and engine_attempts, which check the caller's namespace first.


-- A worker is alive while its last heartbeat is younger than three of its intervals: one late beat (a long
-- garbage collection, a slow statement) does not mark it gone.
CREATE OR REPLACE FUNCTION "${schema}"._worker_alive(p_heartbeat_at timestamptz, p_interval interval) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT p_heartbeat_at + 3 * p_interval >= statement_timestamp()
$$;


-- How many live processes subscribe a topic. PL/pgSQL for its caller check (_check_engine_caller): it reads workers.
CREATE OR REPLACE FUNCTION "${schema}"._topic_subscribers(p_namespace text, p_queue text) RETURNS integer
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_topic_subscribers');
    END IF;
    RETURN (SELECT count(*)::integer FROM "${schema}".workers w
            WHERE "${schema}"._worker_alive(w.heartbeat_at, w.heartbeat_interval)
              AND w.subscriptions @> jsonb_build_array(jsonb_build_object('namespace', p_namespace,
                                                                          'topics', jsonb_build_array(p_queue))));
END
$$;


-- Whether a live process runs a subscription under this worker name (the name messages carry while leased).
-- PL/pgSQL for its caller check, as _topic_subscribers.
CREATE OR REPLACE FUNCTION "${schema}"._worker_name_alive(p_namespace text, p_worker text) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_worker_name_alive');
    END IF;
    RETURN EXISTS (SELECT 1 FROM "${schema}".workers w
                   WHERE "${schema}"._worker_alive(w.heartbeat_at, w.heartbeat_interval)
                     AND w.subscriptions @> jsonb_build_array(jsonb_build_object('namespace', p_namespace,
                                                                                 'worker', p_worker)));
END
$$;


-- One row per running queue process (a Java queue with a subscription, or another client that calls it), written once
-- per heartbeat interval, so the table stays a handful of rows that every function here reads whole. subscriptions
-- is a JSON array of objects {"namespace", "topics": [...], "worker", "concurrency", "in_flight"}, so the containment
-- operator answers "does a live process subscribe this topic" and "is this lease holder alive" without a join table.
-- Also removes the rows of processes that stopped heartbeating p_remove_after ago, and returns how many. A tenant is
-- held to its own namespaces (the subscriptions it reports) and its own rows (those its login wrote, also when it
-- removes rows of processes that stopped heartbeating).
CREATE OR REPLACE FUNCTION "${schema}".worker_heartbeat(
    p_id text, p_host text, p_pid bigint, p_started_at timestamptz, p_version text DEFAULT NULL,
    p_listener text DEFAULT NULL, p_subscriptions jsonb DEFAULT '[]', p_interval interval DEFAULT interval '5 seconds',
    p_remove_after interval DEFAULT interval '1 hour')
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
DECLARE
    v_subscription jsonb;
    v_ordinal      bigint;
    v_argument     text;
    v_topic        jsonb;
    v_count_name   text;
    v_removed      integer;
    v_trusted      boolean := "${schema}".is_trusted();
BEGIN
    PERFORM "${schema}"._check_text('p_id', p_id, 200);
    PERFORM "${schema}"._check_text('p_host', p_host, 255);
    PERFORM "${schema}"._check_range('p_pid', p_pid, 0, 9223372036854775807, 'a process id, 0 or more');
    PERFORM "${schema}"._check_instant('p_started_at', p_started_at);
    IF p_version IS NOT NULL THEN
        PERFORM "${schema}"._check_text('p_version', p_version, 64);
    END IF;
    IF p_listener IS NOT NULL THEN
        PERFORM "${schema}"._check_text('p_listener', p_listener, 32);
    END IF;
    -- NULL means the default
    p_subscriptions := coalesce(p_subscriptions, '[]');
    p_interval := coalesce(p_interval, interval '5 seconds');
    p_remove_after := coalesce(p_remove_after, interval '1 hour');
    PERFORM "${schema}"._check_interval('p_interval', p_interval, interval '100 milliseconds', interval '1 hour',
        '100 ms to 1 h');
    PERFORM "${schema}"._check_interval('p_remove_after', p_remove_after, interval '1 minute', interval '30 days',
        '1 minute to 30 days');
    IF jsonb_typeof(p_subscriptions) <> 'array' OR jsonb_array_length(p_subscriptions) > 1000 THEN
        PERFORM "${schema}"._invalid('p_subscriptions', "${schema}"._shown(p_subscriptions::text),
            'a JSON array of at most 1000 objects {"namespace", "topics", "worker", "concurrency", "in_flight"}');
    END IF;
    -- each subscription as the Java registry writes it, so that what is stored is what the readers expect: the
    -- workers' sums cannot fail on workers_sane, and a name or count cannot grow the row beyond its rules
    FOR v_subscription, v_ordinal IN
        SELECT e.value, e.ordinal FROM jsonb_array_elements(p_subscriptions) WITH ORDINALITY AS e(value, ordinal)
    LOOP
        v_argument := 'p_subscriptions[' || v_ordinal || ']';
        IF jsonb_typeof(v_subscription) <> 'object' OR jsonb_typeof(v_subscription -> 'namespace') <> 'string'
                OR jsonb_typeof(v_subscription -> 'topics') <> 'array'
                OR EXISTS (SELECT 1 FROM jsonb_object_keys(v_subscription) AS k
                           WHERE k NOT IN ('namespace', 'topics', 'worker', 'concurrency', 'in_flight')) THEN
            PERFORM "${schema}"._invalid(v_argument, "${schema}"._shown(v_subscription::text),
                'an object with a "namespace" string and a "topics" array, and optionally "worker", "concurrency" and '
                '"in_flight", nothing else');
        END IF;
        PERFORM "${schema}"._check_name(v_argument || '.namespace', v_subscription ->> 'namespace');
        IF jsonb_array_length(v_subscription -> 'topics') > 64 THEN
            PERFORM "${schema}"._invalid(v_argument || '.topics',
                jsonb_array_length(v_subscription -> 'topics') || ' topics', 'at most 64 topics');
        END IF;
        SELECT t.value INTO v_topic FROM jsonb_array_elements(v_subscription -> 'topics') AS t(value)
        WHERE jsonb_typeof(t.value) <> 'string' OR NOT "${schema}"._is_name(t.value #>> '{}')
        LIMIT 1;
        IF FOUND THEN
            PERFORM "${schema}"._invalid(v_argument || '.topics', "${schema}"._shown(v_topic::text),
                'names of 1 to 64 characters: letters, digits, ''.'', ''_'' or ''-'', starting with a letter or digit');
        END IF;
        IF v_subscription ? 'worker' THEN
            PERFORM "${schema}"._check_text(v_argument || '.worker',
                CASE WHEN jsonb_typeof(v_subscription -> 'worker') = 'string' THEN v_subscription ->> 'worker' END, 128);
        END IF;
        FOREACH v_count_name IN ARRAY ARRAY['concurrency', 'in_flight'] LOOP
            IF v_subscription ? v_count_name AND (jsonb_typeof(v_subscription -> v_count_name) <> 'number'
                    OR (v_subscription ->> v_count_name) !~ '^[0-9]{1,4}$'
                    OR (v_subscription ->> v_count_name)::integer > 1000) THEN
                PERFORM "${schema}"._invalid(v_argument || '.' || v_count_name,
                    "${schema}"._shown((v_subscription -> v_count_name)::text), 'a whole number from 0 to 1000');
            END IF;
        END LOOP;
        IF NOT v_trusted THEN
            PERFORM "${schema}"._check_access(v_subscription ->> 'namespace');
        END IF;
    END LOOP;
    IF NOT v_trusted AND EXISTS (SELECT 1 FROM "${schema}".workers w
                                 WHERE w.id = p_id AND w.login IS DISTINCT FROM session_user::text) THEN
        RAISE EXCEPTION USING ERRCODE = 'QU005',
            MESSAGE = format('worker %s was registered by another role than %s', "${schema}"._shown(p_id),
                             "${schema}"._shown(session_user::text)),
            COLUMN = 'p_id';
    END IF;
    INSERT INTO "${schema}".workers AS w (id, host, pid, started_at, version, listener, concurrency, in_flight,
                                          subscriptions, heartbeat_interval, heartbeat_at, login)
    SELECT p_id, p_host, p_pid, p_started_at, p_version, p_listener,
           coalesce(sum((s ->> 'concurrency')::integer), 0), coalesce(sum((s ->> 'in_flight')::integer), 0),
           p_subscriptions, p_interval, statement_timestamp(), session_user::text
    FROM jsonb_array_elements(p_subscriptions) AS s
    ON CONFLICT (id) DO UPDATE
        SET version = excluded.version, listener = excluded.listener, concurrency = excluded.concurrency,
            in_flight = excluded.in_flight, subscriptions = excluded.subscriptions,
            heartbeat_interval = excluded.heartbeat_interval, heartbeat_at = excluded.heartbeat_at;
    DELETE FROM "${schema}".workers w
    WHERE w.id <> p_id AND w.heartbeat_at + 3 * w.heartbeat_interval + p_remove_after < statement_timestamp()
      AND (v_trusted OR w.login = session_user::text);
    GET DIAGNOSTICS v_removed = ROW_COUNT;
    RETURN v_removed;
END
$$;


-- A process that stops removes its row (a tenant only a row its login wrote). True when there was one.
CREATE OR REPLACE FUNCTION "${schema}".worker_stop(p_id text) RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_text('p_id', p_id, 200);
    DELETE FROM "${schema}".workers w
    WHERE w.id = p_id AND ("${schema}".is_trusted() OR w.login = session_user::text);
    RETURN FOUND;
END
$$;


-- The registered processes (those subscribing in p_namespace, or all), live ones first, each 'alive' or 'gone'. A
-- tenant sees only the processes of its login.
CREATE OR REPLACE FUNCTION "${schema}".workers(p_namespace text DEFAULT NULL)
RETURNS TABLE (id text, host text, pid bigint, started_at timestamptz, version text, listener text, status text,
               namespaces text[], topics text[], concurrency integer, in_flight integer, heartbeat_at timestamptz,
               subscriptions jsonb)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_trusted boolean := "${schema}".is_trusted();
BEGIN
    IF p_namespace IS NOT NULL OR "${schema}".current_tenant() IS NOT NULL THEN
        PERFORM "${schema}"._check_namespace(p_namespace);
    END IF;
    RETURN QUERY
    SELECT w.id::text, w.host, w.pid, w.started_at, w.version, w.listener,
           CASE WHEN "${schema}"._worker_alive(w.heartbeat_at, w.heartbeat_interval) THEN 'alive' ELSE 'gone' END,
           ARRAY(SELECT DISTINCT s ->> 'namespace' FROM jsonb_array_elements(w.subscriptions) s ORDER BY 1),
           ARRAY(SELECT DISTINCT (s ->> 'namespace') || '/' || t FROM jsonb_array_elements(w.subscriptions) s,
                        jsonb_array_elements_text(s -> 'topics') t ORDER BY 1),
           w.concurrency, w.in_flight, w.heartbeat_at, w.subscriptions
    FROM "${schema}".workers w
    WHERE (p_namespace IS NULL OR w.subscriptions @> jsonb_build_array(jsonb_build_object('namespace', p_namespace)))
      AND (v_trusted OR w.login = session_user::text)
    ORDER BY "${schema}"._worker_alive(w.heartbeat_at, w.heartbeat_interval) DESC, w.host, w.pid, w.id;
END
$$;


-- Warnings about what keeps messages from running, or will: each with the evidence and what to do. No row: healthy.
-- Every probe is bounded: catalog views, the tiny workers table, index probes per topic (at most 1000 topics),
-- counts capped with LIMIT. No count runs over the whole hot table. The database-wide checks (vacuum horizon,
-- dead rows) have a NULL namespace. p_namespace NULL checks every namespace.
CREATE OR REPLACE FUNCTION "${schema}"._health_unfiltered(
    p_namespace text DEFAULT NULL,
    p_max_transaction_age interval DEFAULT interval '5 minutes',
    p_max_slot_xmin_age integer DEFAULT 10000000,
    p_max_dead_rows bigint DEFAULT 100000,
    p_max_pending_age interval DEFAULT interval '5 minutes',
    p_dead_letter_window interval DEFAULT interval '15 minutes',
    p_max_new_dead_letters integer DEFAULT 10,
    p_lease_grace interval DEFAULT interval '10 seconds')
RETURNS TABLE (code text, namespace text, queue text, message text, evidence jsonb, advice text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
    v_now   timestamptz := statement_timestamp();
    v_row   record;
    v_subs  integer;
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_health_unfiltered');
    END IF;
    IF p_namespace IS NOT NULL OR "${schema}".current_tenant() IS NOT NULL THEN
        PERFORM "${schema}"._check_namespace(p_namespace);
    END IF;
    -- NULL means the default
    p_max_transaction_age := coalesce(p_max_transaction_age, interval '5 minutes');
    p_max_slot_xmin_age := coalesce(p_max_slot_xmin_age, 10000000);
    p_max_dead_rows := coalesce(p_max_dead_rows, 100000);
    p_max_pending_age := coalesce(p_max_pending_age, interval '5 minutes');
    p_dead_letter_window := coalesce(p_dead_letter_window, interval '15 minutes');
    p_max_new_dead_letters := coalesce(p_max_new_dead_letters, 10);
    p_lease_grace := coalesce(p_lease_grace, interval '10 seconds');
    PERFORM "${schema}"._check_interval('p_max_transaction_age', p_max_transaction_age, interval '0', interval '30 days',
        '0 to 30 days');
    PERFORM "${schema}"._check_range('p_max_slot_xmin_age', p_max_slot_xmin_age, 0, 2000000000, '0 to 2000000000');
    PERFORM "${schema}"._check_range('p_max_dead_rows', p_max_dead_rows, 0, 9223372036854775807, '0 or more');
    PERFORM "${schema}"._check_interval('p_max_pending_age', p_max_pending_age, interval '0', interval '365 days',
        '0 to 365 days');
    PERFORM "${schema}"._check_interval('p_dead_letter_window', p_dead_letter_window, interval '1 second',
        interval '30 days', '1 s to 30 days');
    PERFORM "${schema}"._check_range('p_max_new_dead_letters', p_max_new_dead_letters, 0, 1000000, '0 to 1000000');
    PERFORM "${schema}"._check_interval('p_lease_grace', p_lease_grace, interval '0', interval '1 day', '0 to 1 day');

    -- A transaction open for long keeps every row version newer than its snapshot or its own id, on every table:
    -- vacuum cannot reclaim the hot table's churn, and claims wade through dead rows.
    FOR v_row IN
        SELECT a.pid, v_now - a.xact_start AS age, a.xact_start, a.query_start, a.state, a.application_name,
               a.usename::text AS usename, left(a.query, 200) AS query
        FROM pg_stat_activity a
        WHERE (a.backend_xmin IS NOT NULL OR a.backend_xid IS NOT NULL) AND a.xact_start IS NOT NULL
          AND a.pid <> pg_backend_pid()
          AND a.backend_type = 'client backend'
          AND a.xact_start < v_now - p_max_transaction_age
        ORDER BY a.xact_start
        LIMIT 20
    LOOP
        code := 'long_transaction';
        namespace := NULL;
        queue := NULL;
        message := format('transaction of backend %s (%s) open for %s holds back the vacuum horizon',
                          v_row.pid, coalesce(nullif(v_row.application_name, ''), 'no application name'),
                          "${schema}"._shown_age(v_row.age));
        evidence := jsonb_build_object('pid', v_row.pid, 'age', "${schema}"._shown_age(v_row.age),
                                       'transaction_start', v_row.xact_start, 'query_start', v_row.query_start,
                                       'state', v_row.state, 'application_name', v_row.application_name,
                                       'user', v_row.usename, 'query', v_row.query);
        advice := format('end that transaction (commit it in its application, or SELECT pg_terminate_backend(%s)), '
                         'and set idle_in_transaction_session_timeout so it cannot recur', v_row.pid);
        RETURN NEXT;
    END LOOP;

    -- A replication slot's xmin holds the horizon back like a transaction, for as long as its consumer lags.
    FOR v_row IN
        SELECT s.slot_name::text AS slot_name, s.slot_type, s.active, s.xmin, s.catalog_xmin,
               greatest(age(s.xmin), age(s.catalog_xmin)) AS xmin_age
        FROM pg_replication_slots s
        WHERE greatest(age(s.xmin), age(s.catalog_xmin)) > p_max_slot_xmin_age
        ORDER BY 6 DESC
        LIMIT 20
    LOOP
        code := 'replication_slot';
        namespace := NULL;
        queue := NULL;
        message := format('replication slot %s (%s) holds back the vacuum horizon by %s transactions',
                          v_row.slot_name, CASE WHEN v_row.active THEN 'active' ELSE 'inactive' END, v_row.xmin_age);
        evidence := jsonb_build_object('slot_name', v_row.slot_name, 'slot_type', v_row.slot_type,
                                       'active', v_row.active, 'xmin', v_row.xmin::text,
                                       'catalog_xmin', v_row.catalog_xmin::text, 'xmin_age', v_row.xmin_age);
        advice := format('let its consumer catch up, or drop a slot nobody uses: SELECT pg_drop_replication_slot(%L)',
                         v_row.slot_name);
        RETURN NEXT;
    END LOOP;

    -- Dead row versions on the hot table: claims skip them one by one until vacuum reclaims them.
    SELECT t.n_dead_tup, t.n_live_tup, t.last_autovacuum, t.last_vacuum INTO v_row
    FROM pg_stat_all_tables t
    WHERE t.schemaname = '${schema}' AND t.relname = 'messages';
    IF FOUND AND v_row.n_dead_tup > p_max_dead_rows THEN
        code := 'dead_rows';
        namespace := NULL;
        queue := NULL;
        message := format('the hot table has %s dead row versions (%s live)', v_row.n_dead_tup, v_row.n_live_tup);
        evidence := jsonb_build_object('dead_rows', v_row.n_dead_tup, 'live_rows', v_row.n_live_tup,
                                       'last_autovacuum', v_row.last_autovacuum, 'last_vacuum', v_row.last_vacuum);
        advice := 'look for a long transaction or replication slot first (vacuum cannot reclaim rows they still see), '
                  'then VACUUM "${schema}".messages, and check that autovacuum runs on it';
        RETURN NEXT;
    END IF;

    -- The oldest due message per topic: ten index probes on the claim index (one per priority) per topic.
    FOR v_row IN
        SELECT t.namespace::text AS ns, t.topic::text AS topic, o.oldest
        FROM (SELECT x.namespace, x.topic FROM "${schema}".topics x
              WHERE p_namespace IS NULL OR x.namespace = p_namespace
              ORDER BY x.namespace, x.topic LIMIT 1000) t
        CROSS JOIN LATERAL (
            SELECT min(f.run_at) AS oldest
            FROM generate_series(0, 9) p
            CROSS JOIN LATERAL (SELECT m.run_at FROM "${schema}".messages m
                                WHERE m.namespace = t.namespace AND m.topic = t.topic AND m.state = 'pending'
                                  AND m.priority = p
                                ORDER BY m.run_at LIMIT 1) f) o
        WHERE o.oldest < v_now - p_max_pending_age
    LOOP
        v_subs := "${schema}"._topic_subscribers(v_row.ns, v_row.topic);
        namespace := v_row.ns;
        queue := v_row.topic;
        evidence := jsonb_build_object('oldest_due_at', v_row.oldest, 'waiting', "${schema}"._shown_age(v_now - v_row.oldest),
                                       'live_subscribers', v_subs);
        IF v_subs = 0 THEN
            code := 'no_subscriber';
            message := format('topic %s/%s: a message due since %s (%s) waits and no live worker subscribes the topic',
                              v_row.ns, v_row.topic, "${schema}"._shown_time(v_row.oldest),
                              "${schema}"._shown_age(v_now - v_row.oldest));
            advice := 'start a worker that subscribes the topic (queue workers shows what runs), or check that its '
                      'processes are up and can reach the database';
        ELSE
            code := 'falling_behind';
            message := format('topic %s/%s: a message due since %s (%s) waits although %s live workers subscribe it',
                              v_row.ns, v_row.topic, "${schema}"._shown_time(v_row.oldest),
                              "${schema}"._shown_age(v_now - v_row.oldest), v_subs);
            advice := 'the workers fall behind: raise their concurrency or add workers, or look for slow handlers '
                      '(in-flight at the concurrency in queue workers)';
        END IF;
        RETURN NEXT;
    END LOOP;

    -- Processes whose wake-up listener is down: their subscribers still sweep, so messages run, only later.
    FOR v_row IN
        SELECT w.id, w.host, w.pid, w.listener, w.heartbeat_at
        FROM "${schema}".workers w
        WHERE "${schema}"._worker_alive(w.heartbeat_at, w.heartbeat_interval)
          AND w.listener IN ('RECONNECTING', 'POLLING')
          AND (p_namespace IS NULL OR w.subscriptions @> jsonb_build_array(jsonb_build_object('namespace', p_namespace)))
        ORDER BY w.id
    LOOP
        code := 'listener_down';
        namespace := p_namespace;
        queue := NULL;
        message := format('worker %s (host %s, pid %s): wake-up listener is %s, subscribers find work by sweeping only',
                          v_row.id, v_row.host, v_row.pid, v_row.listener);
        evidence := jsonb_build_object('worker', v_row.id, 'host', v_row.host, 'pid', v_row.pid,
                                       'listener', v_row.listener, 'heartbeat_at', v_row.heartbeat_at);
        advice := CASE v_row.listener
            WHEN 'POLLING' THEN 'LISTEN does not deliver through this connection (a transaction-pooling proxy): give '
                                'the queue a direct connection for listening (PostgresQueue.create with a listen DataSource)'
            ELSE 'the listening connection is lost and being re-established: check the network and the server log' END;
        RETURN NEXT;
    END LOOP;

    -- Processes that stopped heartbeating without stopping: crashed, hung, or cut off from the database.
    FOR v_row IN
        SELECT w.id, w.host, w.pid, w.heartbeat_at
        FROM "${schema}".workers w
        WHERE NOT "${schema}"._worker_alive(w.heartbeat_at, w.heartbeat_interval)
          AND (p_namespace IS NULL OR w.subscriptions @> jsonb_build_array(jsonb_build_object('namespace', p_namespace)))
        ORDER BY w.id
        LIMIT 20
    LOOP
        code := 'worker_gone';
        namespace := p_namespace;
        queue := NULL;
        message := format('worker %s (host %s, pid %s) stopped heartbeating at %s without stopping',
                          v_row.id, v_row.host, v_row.pid, "${schema}"._shown_time(v_row.heartbeat_at));
        evidence := jsonb_build_object('worker', v_row.id, 'host', v_row.host, 'pid', v_row.pid,
                                       'heartbeat_at', v_row.heartbeat_at);
        advice := 'check whether that process still runs; its leases are rescued when they expire, and its row is '
                  'removed an hour after its last heartbeat';
        RETURN NEXT;
    END LOOP;

    -- Dead letters arriving: per topic, counted in the window (capped, on the failed_at index).
    FOR v_row IN
        SELECT t.namespace::text AS ns, t.topic::text AS topic, c.n
        FROM (SELECT x.namespace, x.topic FROM "${schema}".topics x
              WHERE p_namespace IS NULL OR x.namespace = p_namespace
              ORDER BY x.namespace, x.topic LIMIT 1000) t
        CROSS JOIN LATERAL (
            SELECT count(*) AS n FROM (
                SELECT 1 FROM "${schema}".dead_letters d
                WHERE d.namespace = t.namespace AND d.failed_at > v_now - p_dead_letter_window AND d.topic = t.topic
                LIMIT p_max_new_dead_letters + 1) l) c
        WHERE c.n > p_max_new_dead_letters
    LOOP
        code := 'dead_letters_growing';
        namespace := v_row.ns;
        queue := v_row.topic;
        message := format('topic %s/%s: %s%s new dead letters in the last %s', v_row.ns, v_row.topic,
                          CASE WHEN v_row.n > p_max_new_dead_letters THEN 'more than ' ELSE '' END,
                          p_max_new_dead_letters, "${schema}"._shown_age(p_dead_letter_window));
        evidence := jsonb_build_object('new_dead_letters_over', p_max_new_dead_letters,
                                       'window', "${schema}"._shown_age(p_dead_letter_window));
        advice := format('read their errors (queue dead list --topic %s), fix the cause, then redrive them '
                         '(queue dead redrive --topic %s)', v_row.topic, v_row.topic);
        RETURN NEXT;
    END LOOP;

    -- Running messages whose lease ended a while ago: their handler outlived the lease (another worker may run the
    -- message again) or nothing rescues expired leases. Capped count on the lease index.
    FOR v_row IN
        SELECT l.ns, count(*) AS n, min(l.lease_until) AS oldest
        FROM (SELECT m.namespace::text AS ns, m.lease_until FROM "${schema}".messages m
              WHERE m.state = 'running' AND m.lease_until < v_now - p_lease_grace
                AND (p_namespace IS NULL OR m.namespace = p_namespace)
              ORDER BY m.lease_until LIMIT 1001) l
        GROUP BY l.ns
        ORDER BY l.ns
    LOOP
        code := 'leases_expiring';
        namespace := v_row.ns;
        queue := NULL;
        message := format('namespace %s: %s%s running messages hold a lease that ended (the oldest at %s)', v_row.ns,
                          CASE WHEN v_row.n > 1000 THEN 'more than ' ELSE '' END, least(v_row.n, 1000),
                          "${schema}"._shown_time(v_row.oldest));
        evidence := jsonb_build_object('running_with_expired_lease', least(v_row.n, 1000),
                                       'oldest_lease_until', v_row.oldest);
        advice := 'handlers outlive their lease: give the subscription a longer lease (or extend it while working), '
                  'and check that a queue process runs to rescue expired leases (SELECT * FROM rescue_expired())';
        RETURN NEXT;
    END LOOP;
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".health(
    p_namespace text DEFAULT NULL,
    p_max_transaction_age interval DEFAULT interval '5 minutes',
    p_max_slot_xmin_age integer DEFAULT 10000000,
    p_max_dead_rows bigint DEFAULT 100000,
    p_max_pending_age interval DEFAULT interval '5 minutes',
    p_dead_letter_window interval DEFAULT interval '15 minutes',
    p_max_new_dead_letters integer DEFAULT 10,
    p_lease_grace interval DEFAULT interval '10 seconds')
RETURNS TABLE (code text, namespace text, queue text, message text, evidence jsonb, advice text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_trusted boolean := "${schema}".is_trusted();
    v_row     record;
BEGIN
    FOR v_row IN
        SELECT * FROM "${schema}"._health_unfiltered(p_namespace, p_max_transaction_age, p_max_slot_xmin_age,
                                                     p_max_dead_rows, p_max_pending_age, p_dead_letter_window,
                                                     p_max_new_dead_letters, p_lease_grace)
    LOOP
        code := v_row.code;
        namespace := v_row.namespace;
        queue := v_row.queue;
        message := v_row.message;
        evidence := v_row.evidence;
        advice := v_row.advice;
        IF NOT v_trusted AND v_row.code = 'long_transaction'
                AND v_row.evidence ->> 'user' IS DISTINCT FROM session_user::text THEN
            message := format('a transaction of another login, open for %s, holds back the vacuum horizon',
                              v_row.evidence ->> 'age');
            evidence := jsonb_build_object('age', v_row.evidence -> 'age',
                                           'transaction_start', v_row.evidence -> 'transaction_start');
            advice := 'ask an operator of the database to end that transaction (queue status names it to them)';
        ELSIF NOT v_trusted AND v_row.code = 'replication_slot' THEN
            message := format('a replication slot holds back the vacuum horizon by %s transactions',
                              v_row.evidence ->> 'xmin_age');
            evidence := jsonb_build_object('xmin_age', v_row.evidence -> 'xmin_age');
            advice := 'ask an operator of the database to look at its replication slots';
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;


-- Messages of the namespace by unique key, or by header, newest first within each state, at most p_limit.
--   By unique key (p_unique_key): the live message holding it, the dead letters and the archived messages that had
--   it, in every topic of the namespace (at most 1000, by name) or in p_queue. One index probe per topic and table.
--   By header (p_header_name, optionally p_header_value, any value when NULL): headers have no index, so only a
--   window of p_queue's messages is searched, each part an index range of at most p_window rows: the next
--   p_window pending messages in claim order, up to p_window running ones, the newest p_window dead letters and
--   the newest p_window archived messages. A message outside that window is not found.
-- state is pending, running, dead or completed (archived), finished_at the failure or completion time.
CREATE OR REPLACE FUNCTION "${schema}".find_messages(
    p_namespace text, p_queue text DEFAULT NULL, p_unique_key text DEFAULT NULL, p_header_name text DEFAULT NULL,
    p_header_value text DEFAULT NULL, p_window integer DEFAULT 1000, p_limit integer DEFAULT 50)
RETURNS TABLE (id bigint, queue text, state text, unique_key text, headers jsonb, priority integer, attempts integer,
               max_attempts integer, published_at timestamptz, run_at timestamptz, finished_at timestamptz,
               last_error text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_left integer;
    v_n    integer;
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    IF p_queue IS NOT NULL THEN
        PERFORM "${schema}"._check_name('p_queue', p_queue);
    END IF;
    p_limit := coalesce(p_limit, 50);
    p_window := coalesce(p_window, 1000);
    PERFORM "${schema}"._check_range('p_limit', p_limit, 1, 1000, '1 to 1000');
    PERFORM "${schema}"._check_range('p_window', p_window, 1, 10000, '1 to 10000');
    IF (p_unique_key IS NULL) = (p_header_name IS NULL) THEN
        PERFORM "${schema}"._invalid(CASE WHEN p_unique_key IS NULL THEN 'p_unique_key' ELSE 'p_header_name' END,
            CASE WHEN p_unique_key IS NULL THEN 'null' ELSE "${schema}"._shown(p_header_name) END,
            'exactly one of p_unique_key and p_header_name');
    END IF;
    v_left := p_limit;

    IF p_unique_key IS NOT NULL THEN
        PERFORM "${schema}"._check_text('p_unique_key', p_unique_key, 255);
        IF p_header_value IS NOT NULL THEN
            PERFORM "${schema}"._invalid('p_header_value', "${schema}"._shown(p_header_value),
                'null when searching by p_unique_key');
        END IF;
        -- the topics are the index's second column: one probe per topic of the registry, which is small
        RETURN QUERY
        SELECT m.id, m.topic::text, m.state, m.unique_key::text, m.headers, m.priority::integer, m.attempts,
               m.max_attempts, m.published_at, m.run_at, NULL::timestamptz, m.last_error
        FROM (SELECT t.topic FROM "${schema}".topics t
              WHERE t.namespace = p_namespace AND (p_queue IS NULL OR t.topic = p_queue)
              ORDER BY t.topic LIMIT 1000) t
        CROSS JOIN LATERAL (SELECT * FROM "${schema}".messages x
                            WHERE x.namespace = p_namespace AND x.topic = t.topic AND x.unique_key = p_unique_key) m
        ORDER BY m.id DESC
        LIMIT v_left;
        GET DIAGNOSTICS v_n = ROW_COUNT;
        v_left := v_left - v_n;
        IF v_left > 0 THEN
            RETURN QUERY
            SELECT d.id, d.topic::text, 'dead'::text, d.unique_key::text, d.headers, d.priority::integer, d.attempts,
                   d.max_attempts, d.published_at, NULL::timestamptz, d.failed_at, d.last_error
            FROM (SELECT t.topic FROM "${schema}".topics t
                  WHERE t.namespace = p_namespace AND (p_queue IS NULL OR t.topic = p_queue)
                  ORDER BY t.topic LIMIT 1000) t
            CROSS JOIN LATERAL (SELECT * FROM "${schema}".dead_letters x
                                WHERE x.namespace = p_namespace AND x.topic = t.topic AND x.unique_key = p_unique_key
                                ORDER BY x.id DESC LIMIT v_left) d
            ORDER BY d.id DESC
            LIMIT v_left;
            GET DIAGNOSTICS v_n = ROW_COUNT;
            v_left := v_left - v_n;
        END IF;
        IF v_left > 0 THEN
            RETURN QUERY
            SELECT c.id, c.topic::text, 'completed'::text, c.unique_key::text, c.headers, c.priority::integer,
                   c.attempts, c.max_attempts, c.published_at, NULL::timestamptz, c.completed_at, NULL::text
            FROM (SELECT t.topic FROM "${schema}".topics t
                  WHERE t.namespace = p_namespace AND (p_queue IS NULL OR t.topic = p_queue)
                  ORDER BY t.topic LIMIT 1000) t
            CROSS JOIN LATERAL (SELECT * FROM "${schema}".completed_messages x
                                WHERE x.namespace = p_namespace AND x.topic = t.topic AND x.unique_key = p_unique_key
                                ORDER BY x.id DESC LIMIT v_left) c
            ORDER BY c.id DESC
            LIMIT v_left;
        END IF;
        RETURN;
    END IF;

    IF p_queue IS NULL THEN
        PERFORM "${schema}"._invalid('p_queue', 'null',
            'a queue name: a header search reads a bounded window of one queue''s messages');
    END IF;
    PERFORM "${schema}"._check_name('p_header_name', p_header_name);
    IF p_header_value IS NOT NULL THEN
        PERFORM "${schema}"._check_text('p_header_value', p_header_value, 1024);
    END IF;
    -- each window is an index range ended by its LIMIT: the filter on headers runs over those rows only
    RETURN QUERY
    SELECT m.id, m.topic::text, m.state, m.unique_key::text, m.headers, m.priority::integer, m.attempts,
           m.max_attempts, m.published_at, m.run_at, NULL::timestamptz, m.last_error
    FROM (SELECT * FROM "${schema}".messages x
          WHERE x.namespace = p_namespace AND x.topic = p_queue AND x.state = 'pending'
          ORDER BY x.priority, x.run_at, x.id
          LIMIT p_window) m
    WHERE m.headers ? p_header_name AND (p_header_value IS NULL OR m.headers ->> p_header_name = p_header_value)
    ORDER BY m.id DESC
    LIMIT v_left;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    v_left := v_left - v_n;
    IF v_left > 0 THEN
        -- the lease index holds the running messages of every namespace: as many as workers run at once
        RETURN QUERY
        SELECT m.id, m.topic::text, m.state, m.unique_key::text, m.headers, m.priority::integer, m.attempts,
               m.max_attempts, m.published_at, m.run_at, NULL::timestamptz, m.last_error
        FROM (SELECT * FROM "${schema}".messages x
              WHERE x.state = 'running' AND x.namespace = p_namespace AND x.topic = p_queue
              ORDER BY x.lease_until
              LIMIT p_window) m
        WHERE m.headers ? p_header_name AND (p_header_value IS NULL OR m.headers ->> p_header_name = p_header_value)
        ORDER BY m.id DESC
        LIMIT v_left;
        GET DIAGNOSTICS v_n = ROW_COUNT;
        v_left := v_left - v_n;
    END IF;
    IF v_left > 0 THEN
        RETURN QUERY
        SELECT d.id, d.topic::text, 'dead'::text, d.unique_key::text, d.headers, d.priority::integer, d.attempts,
               d.max_attempts, d.published_at, NULL::timestamptz, d.failed_at, d.last_error
        FROM (SELECT * FROM "${schema}".dead_letters x
              WHERE x.namespace = p_namespace AND x.topic = p_queue
              ORDER BY x.id DESC
              LIMIT p_window) d
        WHERE d.headers ? p_header_name AND (p_header_value IS NULL OR d.headers ->> p_header_name = p_header_value)
        ORDER BY d.id DESC
        LIMIT v_left;
        GET DIAGNOSTICS v_n = ROW_COUNT;
        v_left := v_left - v_n;
    END IF;
    IF v_left > 0 THEN
        RETURN QUERY
        SELECT c.id, c.topic::text, 'completed'::text, c.unique_key::text, c.headers, c.priority::integer,
               c.attempts, c.max_attempts, c.published_at, NULL::timestamptz, c.completed_at, NULL::text
        FROM (SELECT * FROM "${schema}".completed_messages x
              WHERE x.namespace = p_namespace AND x.topic = p_queue
              ORDER BY x.id DESC
              LIMIT p_window) c
        WHERE c.headers ? p_header_name AND (p_header_value IS NULL OR c.headers ->> p_header_name = p_header_value)
        ORDER BY c.id DESC
        LIMIT v_left;
    END IF;
END
$$;


-- The namespaces that hold topics or schedules, by name, at most p_limit (1 to 1000). Every namespace that ever held
-- a message is in the topics registry (a publish registers its topic, and a dead letter was published first).
-- A trusted login walks the leading namespace column of the registry's and the schedules' primary keys, one index
-- probe per namespace (a loose index scan), however many topics and schedules each holds. Another login gets its
-- granted namespaces that hold something, and with a session tenant set, that one only.
CREATE OR REPLACE FUNCTION "${schema}".list_namespaces(p_limit integer DEFAULT 100)
RETURNS TABLE (namespace text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_tenant text := "${schema}".current_tenant();
BEGIN
    p_limit := coalesce(p_limit, 100);
    PERFORM "${schema}"._check_range('p_limit', p_limit, 1, 1000, '1 to 1000');
    IF v_tenant IS NOT NULL OR NOT "${schema}".is_trusted() THEN
        RETURN QUERY
        SELECT g.n::text
        FROM unnest(CASE WHEN v_tenant IS NULL THEN "${schema}".granted_namespaces()
                         WHEN "${schema}".may_use(v_tenant) THEN ARRAY[v_tenant]
                         ELSE ARRAY[]::text[] END) AS g(n)
        WHERE EXISTS (SELECT 1 FROM "${schema}".topics t WHERE t.namespace = g.n)
           OR EXISTS (SELECT 1 FROM "${schema}".schedules s WHERE s.namespace = g.n)
        ORDER BY 1
        LIMIT p_limit;
        RETURN;
    END IF;
    RETURN QUERY
    WITH RECURSIVE by_topic (n, depth) AS (
        (SELECT t.namespace, 1 FROM "${schema}".topics t ORDER BY t.namespace LIMIT 1)
        UNION ALL
        SELECT (SELECT t.namespace FROM "${schema}".topics t WHERE t.namespace > b.n ORDER BY t.namespace LIMIT 1),
               b.depth + 1
        FROM by_topic b
        WHERE b.n IS NOT NULL AND b.depth < p_limit
    ), by_schedule (n, depth) AS (
        (SELECT s.namespace, 1 FROM "${schema}".schedules s ORDER BY s.namespace LIMIT 1)
        UNION ALL
        SELECT (SELECT s.namespace FROM "${schema}".schedules s WHERE s.namespace > b.n ORDER BY s.namespace LIMIT 1),
               b.depth + 1
        FROM by_schedule b
        WHERE b.n IS NOT NULL AND b.depth < p_limit
    )
    SELECT u.n::text
    FROM (SELECT b.n FROM by_topic b WHERE b.n IS NOT NULL
          UNION
          SELECT b.n FROM by_schedule b WHERE b.n IS NOT NULL) u
    ORDER BY u.n COLLATE "C"
    LIMIT p_limit;
END
$$;


-- A live message or a dead letter of the namespace by id (archived messages are not looked up here).
CREATE OR REPLACE FUNCTION "${schema}"._engine_find(p_namespace text, p_id bigint)
RETURNS TABLE (id bigint, namespace text, topic text, state text, payload json, headers jsonb, priority integer,
               attempts integer, max_attempts integer, unique_key text, published_at timestamptz, run_at timestamptz,
               lease_until timestamptz, worker text, last_error text, failed_at timestamptz, published_by text,
               failed_by text, ordering_key text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_find');
    END IF;
    RETURN QUERY
    SELECT m.id, m.namespace::text, m.topic::text, m.state, m.payload, m.headers, m.priority::integer, m.attempts,
           m.max_attempts, m.unique_key::text, m.published_at, m.run_at, m.lease_until, m.worker, m.last_error,
           NULL::timestamptz, m.published_by, NULL::text, m.ordering_key::text
    FROM "${schema}".messages m
    WHERE m.namespace = p_namespace AND m.id = p_id
    UNION ALL
    SELECT d.id, d.namespace::text, d.topic::text, 'dead', d.payload, d.headers, d.priority::integer, d.attempts,
           d.max_attempts, d.unique_key::text, d.published_at, NULL, NULL, NULL, d.last_error, d.failed_at,
           d.published_by, d.failed_by, d.ordering_key::text
    FROM "${schema}".dead_letters d
    WHERE d.namespace = p_namespace AND d.id = p_id;
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_find(p_namespace text, p_id bigint)
RETURNS TABLE (id bigint, namespace text, topic text, state text, payload json, headers jsonb, priority integer,
               attempts integer, max_attempts integer, unique_key text, published_at timestamptz, run_at timestamptz,
               lease_until timestamptz, worker text, last_error text, failed_at timestamptz, published_by text,
               failed_by text, ordering_key text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    IF p_id IS NULL THEN
        PERFORM "${schema}"._invalid('p_id', 'null', 'a message id');
    END IF;
    RETURN QUERY SELECT * FROM "${schema}"._engine_find(p_namespace, p_id);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".inspect(p_namespace text, p_id bigint)
RETURNS TABLE (id bigint, queue text, state text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, unique_key text, published_at timestamptz, run_at timestamptz,
               lease_until timestamptz, worker_id text, last_error text, failed_at timestamptz, published_by text,
               failed_by text, attempt_history jsonb, attempts_not_kept integer, ordering_key text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
#variable_conflict use_column
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    IF p_id IS NULL THEN
        PERFORM "${schema}"._invalid('p_id', 'null', 'a message id');
    END IF;
    RETURN QUERY
    SELECT f.id, f.topic, f.state, f.payload, f.headers, f.priority, f.attempts, f.max_attempts, f.unique_key,
           f.published_at, f.run_at, f.lease_until, f.worker, f.last_error, f.failed_at, f.published_by, f.failed_by,
           h.history, h.not_kept, f.ordering_key
    FROM "${schema}"._engine_find(p_namespace, p_id) f
    CROSS JOIN "${schema}"._attempt_history(p_namespace, p_id) h;
END
$$;


-- "Why did this message not run?": a verdict in words on message p_id, live, dead or archived, with the evidence
-- behind it (its lease and whether its worker heartbeats, the topic's live subscribers, the holder of its unique key)
-- and its attempt history. A message waiting behind its ordering key is told the message it waits for.
CREATE OR REPLACE FUNCTION "${schema}".explain(p_namespace text, p_id bigint)
RETURNS TABLE (verdict text, id bigint, queue text, state text, now timestamptz, run_at timestamptz,
               attempts integer, max_attempts integer, last_error text, worker text, lease_until timestamptz,
               worker_alive boolean, live_subscribers integer, unique_key text, key_held_by bigint,
               failed_at timestamptz, completed_at timestamptz, attempt_history jsonb, attempts_not_kept integer)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_now   timestamptz := statement_timestamp();
    m       "${schema}".messages;
    d       "${schema}".dead_letters;
    c       "${schema}".completed_messages;
    v_error text;
    v_ahead bigint;
    v_ahead_state text;
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    IF p_id IS NULL THEN
        PERFORM "${schema}"._invalid('p_id', 'null', 'a message id');
    END IF;
    id := p_id;
    now := v_now;
    -- the ended attempts kept (the last 20 of each message), then the running or completed one, oldest first
    SELECT h.history, h.not_kept INTO attempt_history, attempts_not_kept
    FROM "${schema}"._attempt_history(p_namespace, p_id) h;
    SELECT * INTO m FROM "${schema}".messages x WHERE x.namespace = p_namespace AND x.id = p_id;
    IF FOUND THEN
        queue := m.topic;
        state := m.state;
        run_at := m.run_at;
        attempts := m.attempts;
        max_attempts := m.max_attempts;
        last_error := m.last_error;
        worker := m.worker;
        lease_until := m.lease_until;
        unique_key := m.unique_key;
        live_subscribers := "${schema}"._topic_subscribers(p_namespace, m.topic);
        v_error := CASE WHEN m.last_error IS NULL THEN '' ELSE ', last error: ' || left(m.last_error, 200) END;
        IF m.state = 'running' THEN
            worker_alive := "${schema}"._worker_name_alive(p_namespace, m.worker);
            IF m.lease_until < v_now THEN
                verdict := format('its lease held by worker %s ended at %s (attempt %s of %s); the next rescue of '
                                  'expired leases gives it back%s', m.worker, "${schema}"._shown_time(m.lease_until),
                                  m.attempts, m.max_attempts, v_error);
            ELSIF worker_alive THEN
                verdict := format('running on worker %s (attempt %s of %s), lease until %s', m.worker, m.attempts,
                                  m.max_attempts, "${schema}"._shown_time(m.lease_until));
            ELSE
                verdict := format('held by worker %s, which is not heartbeating; it runs again after its lease ends '
                                  'at %s (attempt %s of %s)', m.worker, "${schema}"._shown_time(m.lease_until),
                                  m.attempts, m.max_attempts);
            END IF;
        ELSIF m.state = 'waiting' THEN
            SELECT x.id, x.state INTO v_ahead, v_ahead_state FROM "${schema}".messages x
            WHERE x.namespace = p_namespace AND x.topic = m.topic AND x.ordering_key = m.ordering_key
              AND x.state <> 'waiting';
            IF v_ahead IS NULL THEN
                SELECT x.id, 'a dead letter' INTO v_ahead, v_ahead_state FROM "${schema}".dead_letters x
                WHERE x.namespace = p_namespace AND x.topic = m.topic AND x.ordering_key = m.ordering_key
                  AND x.id < m.id
                ORDER BY x.id
                LIMIT 1;
            END IF;
            verdict := format('waiting behind %s of its ordering key %s: it runs once the earlier messages of its key '
                              'have left', CASE WHEN v_ahead IS NULL THEN 'the earlier messages'
                                                ELSE format('message %s (%s)', v_ahead, v_ahead_state) END,
                              m.ordering_key);
        ELSIF m.run_at > v_now THEN
            IF m.attempts > 0 THEN
                verdict := format('waiting for its retry at %s, attempt %s of %s%s', "${schema}"._shown_time(m.run_at),
                                  m.attempts + 1, m.max_attempts, v_error);
            ELSE
                verdict := format('not due yet: it runs at %s (in %s)', "${schema}"._shown_time(m.run_at),
                                  "${schema}"._shown_age(m.run_at - v_now));
            END IF;
        ELSIF live_subscribers = 0 THEN
            verdict := format('due since %s (%s ago) but no live worker subscribes topic %s',
                              "${schema}"._shown_time(m.run_at), "${schema}"._shown_age(v_now - m.run_at), m.topic);
        ELSE
            verdict := format('due since %s (%s ago) and waiting to be claimed by one of %s live workers of topic %s',
                              "${schema}"._shown_time(m.run_at), "${schema}"._shown_age(v_now - m.run_at),
                              live_subscribers, m.topic);
        END IF;
        RETURN NEXT;
        RETURN;
    END IF;

    SELECT * INTO d FROM "${schema}".dead_letters x WHERE x.namespace = p_namespace AND x.id = p_id;
    IF FOUND THEN
        queue := d.topic;
        state := 'dead';
        attempts := d.attempts;
        max_attempts := d.max_attempts;
        last_error := d.last_error;
        unique_key := d.unique_key;
        failed_at := d.failed_at;
        live_subscribers := "${schema}"._topic_subscribers(p_namespace, d.topic);
        IF d.unique_key IS NOT NULL THEN
            SELECT x.id INTO key_held_by FROM "${schema}".messages x
            WHERE x.namespace = p_namespace AND x.topic = d.topic AND x.unique_key = d.unique_key;
        END IF;
        verdict := format('dead letter since %s after %s of %s attempts, last error: %s%s',
                          "${schema}"._shown_time(d.failed_at), d.attempts, d.max_attempts, left(d.last_error, 200),
                          CASE WHEN key_held_by IS NOT NULL
                               THEN format('; a redrive would leave it dead: message %s holds its unique key', key_held_by)
                               ELSE '' END);
        RETURN NEXT;
        RETURN;
    END IF;

    SELECT * INTO c FROM "${schema}".completed_messages x WHERE x.namespace = p_namespace AND x.id = p_id;
    IF FOUND THEN
        queue := c.topic;
        state := 'completed';
        attempts := c.attempts;
        max_attempts := c.max_attempts;
        worker := c.worker;
        unique_key := c.unique_key;
        completed_at := c.completed_at;
        verdict := format('it ran: completed at %s by worker %s after %s attempts', "${schema}"._shown_time(c.completed_at),
                          coalesce(c.worker, 'unknown'), c.attempts);
        RETURN NEXT;
        RETURN;
    END IF;

    state := 'unknown';
    verdict := format('no message %s in namespace %s: it completed (completed messages are kept only when the '
                      'queue archives them), was purged, or never existed', p_id, p_namespace);
    RETURN NEXT;
END
$$;


-- The attempts of a message, oldest first: the ended ones kept in attempt_errors (the last 20), then the running or
-- the archived completed one. ordinal is an ended attempt's place among all ended attempts of the message.
CREATE OR REPLACE FUNCTION "${schema}"._engine_attempts(p_namespace text, p_id bigint)
RETURNS TABLE (attempt integer, outcome text, worker text, started_at timestamptz, ended_at timestamptz, error text,
               actor text, ordinal integer)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_attempts');
    END IF;
    RETURN QUERY
    SELECT h.attempt, h.outcome, h.worker, h.started_at, h.ended_at, h.error, h.actor, h.ordinal
    FROM (SELECT a.attempt, a.outcome, a.worker, a.started_at, a.failed_at AS ended_at, a.error, a.actor, a.ordinal,
                 a.id AS sort_key
          FROM "${schema}".attempt_errors a
          WHERE a.message_id = p_id AND a.namespace = p_namespace
          UNION ALL
          SELECT m.attempts, 'running', m.worker, m.attempt_started_at, NULL, NULL, NULL, NULL, NULL
          FROM "${schema}".messages m
          WHERE m.id = p_id AND m.namespace = p_namespace AND m.state = 'running'
          UNION ALL
          SELECT c.attempts, 'completed', c.worker, c.attempt_started_at, c.completed_at, NULL, NULL, NULL, NULL
          FROM "${schema}".completed_messages c
          WHERE c.id = p_id AND c.namespace = p_namespace) h
    ORDER BY h.sort_key NULLS LAST;
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_attempts(p_namespace text, p_id bigint)
RETURNS TABLE (attempt integer, outcome text, worker text, started_at timestamptz, ended_at timestamptz, error text,
               actor text, ordinal integer)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    IF p_id IS NULL THEN
        PERFORM "${schema}"._invalid('p_id', 'null', 'a message id');
    END IF;
    RETURN QUERY SELECT * FROM "${schema}"._engine_attempts(p_namespace, p_id);
END
$$;


-- The same as one JSON array (NULL when there is no attempt), and how many older ended attempts are not kept.
CREATE OR REPLACE FUNCTION "${schema}"._attempt_history(p_namespace text, p_id bigint)
RETURNS TABLE (history jsonb, not_kept integer)
LANGUAGE sql STABLE AS $$
    SELECT jsonb_agg(jsonb_build_object('attempt', a.attempt, 'outcome', a.outcome, 'worker', a.worker,
                                        'started_at', a.started_at, 'ended_at', a.ended_at, 'error', a.error,
                                        'actor', a.actor) ORDER BY a.n),
           coalesce(min(a.ordinal) - 1, 0)
    FROM "${schema}"._engine_attempts(p_namespace, p_id)
         WITH ORDINALITY AS a(attempt, outcome, worker, started_at, ended_at, error, actor, ordinal, n)
$$;


CREATE OR REPLACE FUNCTION "${schema}".inspect_attempts(p_namespace text, p_id bigint)
RETURNS TABLE (attempt integer, outcome text, worker_id text, started_at timestamptz, ended_at timestamptz,
               error text, actor text, ordinal integer)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    IF p_id IS NULL THEN
        PERFORM "${schema}"._invalid('p_id', 'null', 'a message id');
    END IF;
    RETURN QUERY SELECT * FROM "${schema}"._engine_attempts(p_namespace, p_id);
END
$$;
