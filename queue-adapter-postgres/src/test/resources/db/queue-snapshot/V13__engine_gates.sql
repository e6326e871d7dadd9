-- queue schema, version 13: the engine behind a gate, so the Java adapter works over a pool of any role
-- (docs/security.md).
--
-- The engine functions of version 10 (_engine_*) trust their input and are the owner's only. A login that may not
-- execute them (the app role, a tenant's role) reaches them through the functions below: one per engine function,
-- named without the leading underscore (engine_publish for _engine_publish), with the same arguments and results.
-- Each checks the namespaces it is given against the login's grants first (QU005 naming the namespace, as every
-- function of version 11 does), then calls the engine function. Being public functions, _secure_schema() makes
-- them SECURITY DEFINER with a fixed search_path and grants them to the app, operator and tenant roles: the engine
-- then runs as the owner, under the forced row-level security of version 11, so a tenant's call sees and changes
-- only the rows of its granted namespaces, also where no namespace is given (a rescue or schedule tick of all).
-- The Java adapter calls the _engine_ functions directly when its login may (the owner, a superuser), else these.
--
-- Besides: the engine's redrive and purge with their audit_log row (the actor as a parameter, as the SQL
-- functions of version 10 write it), the attempt history as a function (a tenant reads no table), and the worker
-- registry of version 12 bound to the login that wrote a row.

-- ------------------------------------------------------------------ checks

-- Raises QU005 unless the login may use every namespace of the array (trusted logins skip the loop).
CREATE FUNCTION "${schema}"._check_engine_namespaces(p_namespaces text[]) RETURNS void
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_namespace text;
BEGIN
    IF "${schema}".is_trusted() THEN
        RETURN;
    END IF;
    FOR v_namespace IN SELECT DISTINCT n FROM unnest(p_namespaces) AS n LOOP
        PERFORM "${schema}"._check_access(v_namespace);
    END LOOP;
END
$$;

-- Raises QU005 unless the login may use the namespace. NULL (every namespace) passes: row-level security then
-- narrows the statement to the granted ones.
CREATE FUNCTION "${schema}"._check_engine_namespace(p_namespace text) RETURNS void
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF p_namespace IS NOT NULL THEN
        PERFORM "${schema}"._check_access(p_namespace);
    END IF;
END
$$;

-- ------------------------------------------------------------------ new engine functions

-- A redrive and its audit_log row (as redrive_dead_letters writes it), with the caller's actor.
CREATE FUNCTION "${schema}"._engine_redrive_audited(p_namespace text, p_topic text, p_ids bigint[], p_after_id bigint,
                                                    p_limit integer, p_now timestamptz, p_notify boolean, p_actor text)
RETURNS TABLE (redriven bigint[], examined integer, last_id bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_moved    bigint[];
    v_examined integer;
    v_last     bigint;
BEGIN
    SELECT r.redriven, r.examined, r.last_id INTO v_moved, v_examined, v_last
    FROM "${schema}"._engine_redrive(p_namespace, p_topic, p_ids, p_after_id, p_limit, p_now, p_notify, p_actor) r;
    IF cardinality(v_moved) > 0 THEN
        INSERT INTO "${schema}".audit_log (at, namespace, actor, action, subject, ids, count)
        VALUES (statement_timestamp(), p_namespace, p_actor, 'redrive_dead_letters', p_topic, v_moved,
                cardinality(v_moved));
    END IF;
    RETURN QUERY SELECT v_moved, v_examined, v_last;
END
$$;

-- A purge and its audit_log row (as purge_dead_letters writes it), with the caller's actor. Returns the ids.
CREATE FUNCTION "${schema}"._engine_purge_audited(p_namespace text, p_topic text, p_ids bigint[], p_limit integer,
                                                  p_actor text)
RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_purged bigint[];
BEGIN
    v_purged := ARRAY(SELECT p FROM "${schema}"._engine_purge(p_namespace, p_topic, p_ids, p_limit) p ORDER BY p);
    IF cardinality(v_purged) > 0 THEN
        INSERT INTO "${schema}".audit_log (at, namespace, actor, action, subject, ids, count)
        VALUES (statement_timestamp(), p_namespace, p_actor, 'purge_dead_letters', p_topic, v_purged,
                cardinality(v_purged));
    END IF;
    RETURN QUERY SELECT unnest(v_purged);
END
$$;

-- The failed attempts of a message of the namespace, oldest first.
CREATE FUNCTION "${schema}"._engine_attempts(p_namespace text, p_id bigint)
RETURNS TABLE (attempt integer, error text, worker text, failed_at timestamptz)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY SELECT a.attempt, a.error, a.worker, a.failed_at
                 FROM "${schema}".attempt_errors a
                 WHERE a.message_id = p_id AND a.namespace = p_namespace
                 ORDER BY a.id;
END
$$;

-- ------------------------------------------------------------------ the gates

CREATE FUNCTION "${schema}".engine_publish(
    p_namespaces text[], p_topics text[], p_payloads text[], p_headers text[], p_priorities integer[],
    p_max_attempts integer[], p_unique_keys text[], p_run_at_us bigint[], p_delay_us bigint[],
    p_now timestamptz, p_notify boolean, p_actor text)
RETURNS TABLE (ord integer, id bigint, duplicate boolean)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_engine_namespaces(p_namespaces);
    RETURN QUERY SELECT * FROM "${schema}"._engine_publish(p_namespaces, p_topics, p_payloads, p_headers, p_priorities,
        p_max_attempts, p_unique_keys, p_run_at_us, p_delay_us, p_now, p_notify, p_actor);
END
$$;

CREATE FUNCTION "${schema}".engine_publish_fast(
    p_namespaces text[], p_topics text[], p_payloads text[], p_headers text[], p_priorities integer[],
    p_max_attempts integer[], p_run_at_us bigint[], p_delay_us bigint[], p_notify_keys text[], p_now timestamptz,
    p_actor text)
RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_engine_namespaces(p_namespaces);
    RETURN QUERY SELECT * FROM "${schema}"._engine_publish_fast(p_namespaces, p_topics, p_payloads, p_headers,
        p_priorities, p_max_attempts, p_run_at_us, p_delay_us, p_notify_keys, p_now, p_actor);
END
$$;

CREATE FUNCTION "${schema}".engine_publish_one(
    p_namespace text, p_topic text, p_payload text, p_headers text, p_priority integer, p_max_attempts integer,
    p_run_at_us bigint, p_delay_us bigint, p_notify_key text, p_now timestamptz, p_actor text)
RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN "${schema}"._engine_publish_one(p_namespace, p_topic, p_payload, p_headers, p_priority, p_max_attempts,
        p_run_at_us, p_delay_us, p_notify_key, p_now, p_actor);
END
$$;

CREATE FUNCTION "${schema}".engine_claim(
    p_namespace text, p_topics text[], p_worker text, p_limit integer, p_lease_token bigint, p_lease_micros bigint,
    p_now timestamptz, p_async boolean, p_after_priorities integer[], p_after_run_at_micros bigint[],
    p_after_ids bigint[])
RETURNS TABLE (id bigint, namespace text, topic text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, lease_token bigint, worker text, lease_until timestamptz,
               published_at timestamptz, run_at timestamptz, unique_key text, published_by text)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_claim(p_namespace, p_topics, p_worker, p_limit, p_lease_token,
        p_lease_micros, p_now, p_async, p_after_priorities, p_after_run_at_micros, p_after_ids);
END
$$;

CREATE FUNCTION "${schema}".engine_complete(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_archive boolean, p_now timestamptz, p_async boolean)
RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_complete(p_namespace, p_ids, p_tokens, p_archive, p_now, p_async);
END
$$;

CREATE FUNCTION "${schema}".engine_retry(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_delay_micros bigint, p_error text, p_now timestamptz,
    p_notify boolean)
RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_retry(p_namespace, p_ids, p_tokens, p_delay_micros, p_error, p_now,
        p_notify);
END
$$;

CREATE FUNCTION "${schema}".engine_bury(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_error text, p_now timestamptz, p_failed_by text)
RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_bury(p_namespace, p_ids, p_tokens, p_error, p_now, p_failed_by);
END
$$;

CREATE FUNCTION "${schema}".engine_extend(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_lease_micros bigint, p_now timestamptz)
RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_extend(p_namespace, p_ids, p_tokens, p_lease_micros, p_now);
END
$$;

CREATE FUNCTION "${schema}".engine_release(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_notify boolean)
RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_release(p_namespace, p_ids, p_tokens, p_notify);
END
$$;

CREATE FUNCTION "${schema}".engine_rescue(p_namespace text, p_limit integer, p_now timestamptz, p_notify boolean,
                                           p_expired_since timestamptz)
RETURNS TABLE (requeued bigint, dead_lettered bigint, looked_up_to timestamptz)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_engine_namespace(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_rescue(p_namespace, p_limit, p_now, p_notify, p_expired_since);
END
$$;

CREATE FUNCTION "${schema}".engine_next_due(p_namespace text, p_topics text[], p_now timestamptz)
RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN "${schema}"._engine_next_due(p_namespace, p_topics, p_now);
END
$$;

CREATE FUNCTION "${schema}".engine_stats(p_namespace text, p_now timestamptz)
RETURNS TABLE (topic text, pending bigint, running bigint, completed bigint, dead bigint, oldest_due_at timestamptz)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_stats(p_namespace, p_now);
END
$$;

CREATE FUNCTION "${schema}".engine_find(p_namespace text, p_id bigint)
RETURNS TABLE (id bigint, namespace text, topic text, state text, payload json, headers jsonb, priority integer,
               attempts integer, max_attempts integer, unique_key text, published_at timestamptz, run_at timestamptz,
               lease_until timestamptz, worker text, last_error text, failed_at timestamptz, published_by text,
               failed_by text)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_find(p_namespace, p_id);
END
$$;

CREATE FUNCTION "${schema}".engine_attempts(p_namespace text, p_id bigint)
RETURNS TABLE (attempt integer, error text, worker text, failed_at timestamptz)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_attempts(p_namespace, p_id);
END
$$;

CREATE FUNCTION "${schema}".engine_dead_letters(p_namespace text, p_topic text, p_id bigint, p_after_id bigint,
                                                 p_limit integer)
RETURNS TABLE (id bigint, namespace text, topic text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, unique_key text, last_error text, published_at timestamptz,
               failed_at timestamptz, published_by text, failed_by text)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_dead_letters(p_namespace, p_topic, p_id, p_after_id, p_limit);
END
$$;

CREATE FUNCTION "${schema}".engine_redrive_audited(p_namespace text, p_topic text, p_ids bigint[], p_after_id bigint,
                                                    p_limit integer, p_now timestamptz, p_notify boolean, p_actor text)
RETURNS TABLE (redriven bigint[], examined integer, last_id bigint)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_redrive_audited(p_namespace, p_topic, p_ids, p_after_id, p_limit,
        p_now, p_notify, p_actor);
END
$$;

CREATE FUNCTION "${schema}".engine_purge_audited(p_namespace text, p_topic text, p_ids bigint[], p_limit integer,
                                                  p_actor text)
RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_purge_audited(p_namespace, p_topic, p_ids, p_limit, p_actor);
END
$$;

CREATE FUNCTION "${schema}".engine_schedule_insert(
    p_namespace text, p_name text, p_cron text, p_interval_micros bigint, p_time_zone text, p_topic text,
    p_payload text, p_headers text, p_priority integer, p_max_attempts integer, p_start_at timestamptz,
    p_end_at timestamptz, p_missed_policy text, p_missed_bound integer, p_missed_grace_micros bigint,
    p_paused boolean, p_next_run_at timestamptz, p_last_run_at timestamptz, p_created_at timestamptz,
    p_updated_at timestamptz, p_actor text)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN "${schema}"._engine_schedule_insert(p_namespace, p_name, p_cron, p_interval_micros, p_time_zone, p_topic,
        p_payload, p_headers, p_priority, p_max_attempts, p_start_at, p_end_at, p_missed_policy, p_missed_bound,
        p_missed_grace_micros, p_paused, p_next_run_at, p_last_run_at, p_created_at, p_updated_at, p_actor);
END
$$;

CREATE FUNCTION "${schema}".engine_schedule_replace(
    p_namespace text, p_name text, p_cron text, p_interval_micros bigint, p_time_zone text, p_topic text,
    p_payload text, p_headers text, p_priority integer, p_max_attempts integer, p_start_at timestamptz,
    p_end_at timestamptz, p_missed_policy text, p_missed_bound integer, p_missed_grace_micros bigint,
    p_paused boolean, p_next_run_at timestamptz, p_updated_at timestamptz, p_actor text)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN "${schema}"._engine_schedule_replace(p_namespace, p_name, p_cron, p_interval_micros, p_time_zone, p_topic,
        p_payload, p_headers, p_priority, p_max_attempts, p_start_at, p_end_at, p_missed_policy, p_missed_bound,
        p_missed_grace_micros, p_paused, p_next_run_at, p_updated_at, p_actor);
END
$$;

CREATE FUNCTION "${schema}".engine_schedule_pause(p_namespace text, p_name text, p_paused boolean,
                                                  p_next_run_at timestamptz, p_updated_at timestamptz, p_actor text)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN "${schema}"._engine_schedule_pause(p_namespace, p_name, p_paused, p_next_run_at, p_updated_at, p_actor);
END
$$;

CREATE FUNCTION "${schema}".engine_schedule_delete(p_namespace text, p_name text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN "${schema}"._engine_schedule_delete(p_namespace, p_name);
END
$$;

CREATE FUNCTION "${schema}".engine_schedules(p_namespace text, p_name text)
RETURNS SETOF "${schema}".schedules
LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_schedules(p_namespace, p_name);
END
$$;

CREATE FUNCTION "${schema}".engine_lock_due_schedules(p_namespace text, p_limit integer, p_now timestamptz)
RETURNS SETOF "${schema}".schedules
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_engine_namespace(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_lock_due_schedules(p_namespace, p_limit, p_now);
END
$$;

CREATE FUNCTION "${schema}".engine_schedule_ran(p_namespace text, p_name text, p_next_run_at timestamptz,
                                                p_last_run_at timestamptz)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN "${schema}"._engine_schedule_ran(p_namespace, p_name, p_next_run_at, p_last_run_at);
END
$$;

CREATE FUNCTION "${schema}".engine_next_schedule_run(p_namespace text) RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM "${schema}"._check_engine_namespace(p_namespace);
    RETURN "${schema}"._engine_next_schedule_run(p_namespace);
END
$$;

-- ------------------------------------------------------------------ the worker registry, per login

-- The login that wrote a worker's row: another untrusted login may neither overwrite nor remove it.
ALTER TABLE "${schema}".workers ADD COLUMN login text DEFAULT session_user;

-- Version 12's heartbeat, with a tenant held to its own namespaces (the subscriptions it reports) and its own rows
-- (those its login wrote, also when it removes rows of processes that stopped heartbeating).
CREATE OR REPLACE FUNCTION "${schema}".worker_heartbeat(
    p_id text, p_host text, p_pid bigint, p_started_at timestamptz, p_version text DEFAULT NULL,
    p_listener text DEFAULT NULL, p_subscriptions jsonb DEFAULT '[]', p_interval interval DEFAULT interval '5 seconds',
    p_remove_after interval DEFAULT interval '1 hour')
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    v_subscription jsonb;
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
    PERFORM "${schema}"._check_interval('p_interval', p_interval, interval '100 milliseconds', interval '1 hour',
        '100 ms to 1 h');
    PERFORM "${schema}"._check_interval('p_remove_after', p_remove_after, interval '1 minute', interval '30 days',
        '1 minute to 30 days');
    IF p_subscriptions IS NULL OR jsonb_typeof(p_subscriptions) <> 'array' OR jsonb_array_length(p_subscriptions) > 1000 THEN
        PERFORM "${schema}"._invalid('p_subscriptions', "${schema}"._shown(p_subscriptions::text),
            'a JSON array of at most 1000 objects {"namespace", "topics", "worker", "concurrency", "in_flight"}');
    END IF;
    FOR v_subscription IN SELECT value FROM jsonb_array_elements(p_subscriptions) LOOP
        IF jsonb_typeof(v_subscription) <> 'object' OR jsonb_typeof(v_subscription -> 'namespace') <> 'string'
                OR jsonb_typeof(v_subscription -> 'topics') <> 'array' THEN
            PERFORM "${schema}"._invalid('p_subscriptions', "${schema}"._shown(v_subscription::text),
                'an object with a "namespace" string and a "topics" array');
        END IF;
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
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_text('p_id', p_id, 200);
    DELETE FROM "${schema}".workers w
    WHERE w.id = p_id AND ("${schema}".is_trusted() OR w.login = session_user::text);
    RETURN FOUND;
END
$$;

-- Version 12's list of workers, where a tenant sees only the processes of its login.
CREATE OR REPLACE FUNCTION "${schema}".workers(p_namespace text DEFAULT NULL)
RETURNS TABLE (id text, host text, pid bigint, started_at timestamptz, version text, listener text, status text,
               namespaces text[], topics text[], concurrency integer, in_flight integer, heartbeat_at timestamptz,
               subscriptions jsonb)
LANGUAGE plpgsql STABLE AS $$
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
