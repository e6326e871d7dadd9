-- Durable schedules, by cron expression or fixed interval (docs/schedules.md). The database keeps the definition and
-- its state (next and last run): a ticker fires a due schedule by locking its row (FOR UPDATE SKIP LOCKED), publishing
-- its messages and storing its next run in one transaction, so that tickers of several replicas fire each due time
-- exactly once. A fired message carries the headers queue-schedule and queue-due-at and the unique key
-- 'schedule:<name>:<due time>', the same text whichever ticker fired it. Tables: schedules, and messages through
-- _insert_message. Changes to a definition are recorded in audit_log by the triggers of R__audit.sql.
--
-- Due times follow the Java domain (DueTimes): cron_next_run (R__rules.sql) for cron expressions, steps from the start
-- (or the creation time) for intervals, within the optional start and end. Missed due times are fired once
-- (FIRE_ONCE), fired only within a grace (SKIP), or fired each, up to a bound (FIRE_EACH).
--
-- For psql users: create_schedule, update_schedule, delete_schedule, list_schedules, pause_schedule,
-- resume_schedule, tick_schedules and run_schedule_now. For the Java adapter, which computes due times itself: the
-- _engine_ functions here, called directly by trusted logins, else through their engine_ gates, which check the
-- caller's namespace and every argument first (NULL, for every namespace, is narrowed to the session's tenant when
-- one is set, and by row-level security).


-- The first due time strictly after p_after, within the optional start and end (DueTimes.firstAfter).
-- Intervals: start_at + k * interval for k >= 0, or, without a start, created_at + k * interval for k >= 1.
CREATE OR REPLACE FUNCTION "${schema}"._schedule_next_after(p_schedule "${schema}".schedules, p_after timestamptz)
RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_from    timestamptz := p_after;
    v_next    timestamptz;
    v_anchor  timestamptz;
    v_first_k bigint;
    v_elapsed numeric;
    v_k       bigint;
BEGIN
    IF p_schedule.start_at IS NOT NULL AND v_from < p_schedule.start_at THEN
        v_from := p_schedule.start_at - interval '1 microsecond';
    END IF;
    IF p_schedule.cron IS NOT NULL THEN
        v_next := "${schema}".cron_next_run(p_schedule.cron, p_schedule.time_zone, v_from);
    ELSE
        v_anchor := coalesce(p_schedule.start_at, p_schedule.created_at);
        v_first_k := CASE WHEN p_schedule.start_at IS NULL THEN 1 ELSE 0 END;
        v_elapsed := extract(epoch FROM v_from - v_anchor) * 1000000;
        v_k := CASE WHEN v_elapsed < 0 THEN v_first_k
                    ELSE greatest(v_first_k, floor(v_elapsed / p_schedule.interval_micros)::bigint + 1) END;
        v_next := v_anchor + (v_k * p_schedule.interval_micros) * interval '1 microsecond';
    END IF;
    IF v_next IS NULL OR (p_schedule.end_at IS NOT NULL AND v_next > p_schedule.end_at) THEN
        RETURN NULL;
    END IF;
    RETURN v_next;
END
$$;


-- The latest due time at or before p_at and not before p_lower (nor the start, nor after the end), or NULL
-- (DueTimes.latestAtOrBefore). Cron: cron_next_run only looks forward, so the window before p_at doubles until
-- a due time falls in it, then the last one in it is found walking forward.
CREATE OR REPLACE FUNCTION "${schema}"._schedule_latest(p_schedule "${schema}".schedules, p_at timestamptz, p_lower timestamptz)
RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_to      timestamptz := least(p_at, coalesce(p_schedule.end_at, p_at));
    v_lower   timestamptz := greatest(p_lower, p_schedule.start_at);
    v_anchor  timestamptz;
    v_first_k bigint;
    v_k       bigint;
    v_window  interval := interval '1 second';
    v_from    timestamptz;
    v_last    boolean;
    v_next    timestamptz;
    v_after   timestamptz;
    v_found   timestamptz;
BEGIN
    IF v_lower IS NOT NULL AND v_lower > v_to THEN
        RETURN NULL;
    END IF;
    IF p_schedule.cron IS NULL THEN
        v_anchor := coalesce(p_schedule.start_at, p_schedule.created_at);
        v_first_k := CASE WHEN p_schedule.start_at IS NULL THEN 1 ELSE 0 END;
        v_k := floor(extract(epoch FROM v_to - v_anchor) * 1000000 / p_schedule.interval_micros)::bigint;
        IF v_k < v_first_k THEN
            RETURN NULL;
        END IF;
        v_found := v_anchor + (v_k * p_schedule.interval_micros) * interval '1 microsecond';
        RETURN CASE WHEN v_lower IS NULL OR v_found >= v_lower THEN v_found END;
    END IF;
    LOOP
        v_from := v_to - v_window;
        v_last := v_lower IS NOT NULL AND v_from < v_lower;
        IF v_last THEN
            v_from := v_lower - interval '1 microsecond';
        END IF;
        v_next := "${schema}".cron_next_run(p_schedule.cron, p_schedule.time_zone, v_from);
        IF v_next IS NOT NULL AND v_next <= v_to THEN
            LOOP
                v_after := "${schema}".cron_next_run(p_schedule.cron, p_schedule.time_zone, v_next);
                EXIT WHEN v_after IS NULL OR v_after > v_to;
                v_next := v_after;
            END LOOP;
            RETURN v_next;
        END IF;
        IF v_last OR v_window > interval '1000 years' THEN
            RETURN NULL;
        END IF;
        v_window := v_window * 2;
    END LOOP;
END
$$;


-- Whether two rows differ in their definition, not in their state (pause, next and last run, who changed them).
CREATE OR REPLACE FUNCTION "${schema}"._schedule_changed(p_old "${schema}".schedules, p_new "${schema}".schedules) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT p_old.cron IS DISTINCT FROM p_new.cron
        OR p_old.interval_micros IS DISTINCT FROM p_new.interval_micros
        OR p_old.time_zone IS DISTINCT FROM p_new.time_zone
        OR p_old.topic IS DISTINCT FROM p_new.topic
        OR p_old.payload::text IS DISTINCT FROM p_new.payload::text
        OR p_old.headers IS DISTINCT FROM p_new.headers
        OR p_old.priority IS DISTINCT FROM p_new.priority
        OR p_old.max_attempts IS DISTINCT FROM p_new.max_attempts
        OR p_old.start_at IS DISTINCT FROM p_new.start_at
        OR p_old.end_at IS DISTINCT FROM p_new.end_at
        OR p_old.missed_policy IS DISTINCT FROM p_new.missed_policy
        OR p_old.missed_bound IS DISTINCT FROM p_new.missed_bound
        OR p_old.missed_grace_micros IS DISTINCT FROM p_new.missed_grace_micros
$$;


-- Checks a whole definition like the Java Schedules.create and computes its first run (the first due time at or
-- after now). The row's created_at is the anchor of an interval without a start.
CREATE OR REPLACE FUNCTION "${schema}"._prepare_schedule(p_schedule "${schema}".schedules) RETURNS "${schema}".schedules
LANGUAGE plpgsql AS $$
DECLARE
    s      "${schema}".schedules := p_schedule;
    v_text text;
BEGIN
    PERFORM "${schema}"._check_name('p_name', s.name);
    PERFORM "${schema}"._check_name('p_queue', s.topic);
    PERFORM "${schema}"._check_payload('p_payload', s.payload,
        ("${schema}".get_queue_policy(s.namespace, s.topic)).max_payload_bytes);
    IF (s.cron IS NULL) = (s.interval_micros IS NULL) THEN
        PERFORM "${schema}"._invalid('p_cron_expression', "${schema}"._shown(s.cron),
            'exactly one of p_cron_expression and p_every_interval');
    END IF;
    IF s.interval_micros IS NOT NULL AND (s.interval_micros < 1000000 OR s.interval_micros > 365 * 86400 * 1000000::bigint) THEN
        PERFORM "${schema}"._invalid('p_every_interval', (s.interval_micros * interval '1 microsecond')::text,
            '1 s to 365 days');
    END IF;
    -- the zone must be one java.time reads (the Java engine reads the row too): cron_next_run checks it so
    IF s.time_zone IS NULL THEN
        PERFORM "${schema}"._invalid('p_timezone', 'null', 'a time zone ID such as UTC, Europe/Paris or +02:00');
    END IF;
    BEGIN
        PERFORM "${schema}".cron_next_run('0 0 1 1 *', s.time_zone, statement_timestamp());
    EXCEPTION WHEN SQLSTATE 'QU001' THEN
        PERFORM "${schema}"._invalid('p_timezone', "${schema}"._shown(s.time_zone),
            'a time zone ID such as UTC, Europe/Paris or +02:00');
    END;
    IF s.start_at IS NOT NULL THEN
        PERFORM "${schema}"._check_instant('p_start_at', s.start_at);
    END IF;
    IF s.end_at IS NOT NULL THEN
        PERFORM "${schema}"._check_instant('p_end_at', s.end_at);
    END IF;
    IF s.start_at IS NOT NULL AND s.end_at IS NOT NULL AND s.end_at <= s.start_at THEN
        PERFORM "${schema}"._invalid('p_end_at', s.end_at::text, 'an instant after p_start_at ' || s.start_at);
    END IF;
    IF s.missed_policy IS NULL OR s.missed_policy NOT IN ('FIRE_ONCE', 'SKIP', 'FIRE_EACH') THEN
        PERFORM "${schema}"._invalid('p_missed_policy', "${schema}"._shown(s.missed_policy),
            'FIRE_ONCE, SKIP or FIRE_EACH');
    END IF;
    PERFORM "${schema}"._check_range('p_missed_bound', s.missed_bound, 1, 1000, '1 to 1000');
    IF s.missed_grace_micros IS NULL OR s.missed_grace_micros < 0 OR s.missed_grace_micros > 365 * 86400 * 1000000::bigint THEN
        PERFORM "${schema}"._invalid('p_missed_grace', coalesce((s.missed_grace_micros * interval '1 microsecond')::text, 'null'),
            '0 to 365 days');
    END IF;
    -- the policy's own parameters only, as MissedRuns keeps them
    IF s.missed_policy <> 'FIRE_EACH' THEN
        s.missed_bound := 1;
    END IF;
    IF s.missed_policy <> 'SKIP' THEN
        s.missed_grace_micros := 0;
    END IF;
    PERFORM "${schema}"._check_headers('p_headers', s.headers, 30);
    PERFORM "${schema}"._check_range('p_priority', s.priority, 0, 9, '0 (first) to 9 (last)');
    PERFORM "${schema}"._check_range('p_max_attempts', s.max_attempts, 1, 1000, '1 to 1000');
    IF s.cron IS NOT NULL THEN
        BEGIN
            PERFORM "${schema}".cron_next_run(s.cron, s.time_zone, statement_timestamp());
        EXCEPTION WHEN SQLSTATE 'QU001' THEN
            GET STACKED DIAGNOSTICS v_text = MESSAGE_TEXT;
            RAISE EXCEPTION USING ERRCODE = 'QU001', MESSAGE = replace(v_text, 'p_expression', 'p_cron_expression'),
                COLUMN = 'p_cron_expression';
        END;
    END IF;
    IF "${schema}"._schedule_next_after(s, coalesce(s.start_at - interval '1 microsecond', timestamptz 'epoch')) IS NULL THEN
        IF s.cron IS NOT NULL THEN
            PERFORM "${schema}"._invalid('p_cron_expression', "${schema}"._shown(s.cron),
                'an expression that matches at least one time' || CASE WHEN s.start_at IS NULL AND s.end_at IS NULL THEN ''
                    ELSE ' between p_start_at ' || coalesce(s.start_at::text, '-') || ' and p_end_at ' || coalesce(s.end_at::text, '-') END
                || ', but it never does');
        END IF;
        PERFORM "${schema}"._invalid('p_end_at', coalesce(s.end_at::text, 'null'),
            'an end after the first run, but no run falls before it');
    END IF;
    s.next_run_at := "${schema}"._schedule_next_after(s, statement_timestamp() - interval '1 microsecond');
    RETURN s;
END
$$;


CREATE OR REPLACE FUNCTION "${schema}"._schedule_not_found(p_namespace text, p_name text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'QU003',
        MESSAGE = format('schedule %s not found in namespace %s', "${schema}"._shown(p_name), "${schema}"._shown(p_namespace)),
        COLUMN = 'p_name';
END
$$;


-- The arguments of create_schedule and update_schedule that are converted before _prepare_schedule checks the whole
-- definition: the intervals to microseconds (which overflow past about 292,000 years) and the priority to the
-- column's smallint. Each is checked when given.
CREATE OR REPLACE FUNCTION "${schema}"._check_schedule_arguments(p_every_interval interval, p_priority integer,
                                                                 p_missed_grace interval) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_every_interval IS NOT NULL THEN
        PERFORM "${schema}"._check_interval('p_every_interval', p_every_interval, interval '1 second',
            interval '365 days', '1 s to 365 days');
    END IF;
    IF p_priority IS NOT NULL THEN
        PERFORM "${schema}"._check_range('p_priority', p_priority, 0, 9, '0 (first) to 9 (last)');
    END IF;
    IF p_missed_grace IS NOT NULL THEN
        PERFORM "${schema}"._check_interval('p_missed_grace', p_missed_grace, interval '0', interval '365 days',
            '0 to 365 days');
    END IF;
END
$$;


-- Changes the given parts of a schedule's definition (parameters left null keep theirs, a cron expression
-- replaces an interval and the other way round): 'updated' or 'unchanged', QU003 for an unknown name.
CREATE OR REPLACE FUNCTION "${schema}".update_schedule(
    p_namespace text, p_name text, p_queue text DEFAULT NULL, p_payload json DEFAULT NULL,
    p_cron_expression text DEFAULT NULL, p_every_interval interval DEFAULT NULL, p_timezone text DEFAULT NULL,
    p_headers jsonb DEFAULT NULL, p_priority integer DEFAULT NULL, p_max_attempts integer DEFAULT NULL,
    p_start_at timestamptz DEFAULT NULL, p_end_at timestamptz DEFAULT NULL,
    p_missed_policy text DEFAULT NULL, p_missed_bound integer DEFAULT NULL, p_missed_grace interval DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
DECLARE
    v_old "${schema}".schedules;
    s     "${schema}".schedules;
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    PERFORM "${schema}"._check_name('p_name', p_name);
    IF p_cron_expression IS NOT NULL AND p_every_interval IS NOT NULL THEN
        PERFORM "${schema}"._invalid('p_cron_expression', "${schema}"._shown(p_cron_expression),
            'exactly one of p_cron_expression and p_every_interval');
    END IF;
    -- what can be checked without the schedule's row, before it is locked (_prepare_schedule checks the whole)
    IF p_queue IS NOT NULL THEN
        PERFORM "${schema}"._check_name('p_queue', p_queue);
    END IF;
    PERFORM "${schema}"._check_schedule_arguments(p_every_interval, p_priority, p_missed_grace);
    IF p_max_attempts IS NOT NULL THEN
        PERFORM "${schema}"._check_range('p_max_attempts', p_max_attempts, 1, 1000, '1 to 1000');
    END IF;
    IF p_missed_bound IS NOT NULL THEN
        PERFORM "${schema}"._check_range('p_missed_bound', p_missed_bound, 1, 1000, '1 to 1000');
    END IF;
    IF p_start_at IS NOT NULL THEN
        PERFORM "${schema}"._check_instant('p_start_at', p_start_at);
    END IF;
    IF p_end_at IS NOT NULL THEN
        PERFORM "${schema}"._check_instant('p_end_at', p_end_at);
    END IF;
    IF p_headers IS NOT NULL THEN
        PERFORM "${schema}"._check_headers('p_headers', p_headers, 30);
    END IF;
    IF upper(p_missed_policy) NOT IN ('FIRE_ONCE', 'SKIP', 'FIRE_EACH') THEN
        PERFORM "${schema}"._invalid('p_missed_policy', "${schema}"._shown(p_missed_policy),
            'FIRE_ONCE, SKIP or FIRE_EACH');
    END IF;
    SELECT * INTO v_old FROM "${schema}".schedules x WHERE x.namespace = p_namespace AND x.name = p_name FOR UPDATE;
    IF NOT FOUND THEN
        PERFORM "${schema}"._schedule_not_found(p_namespace, p_name);
    END IF;
    s := v_old;
    IF p_cron_expression IS NOT NULL THEN
        s.cron := btrim(p_cron_expression);
        s.interval_micros := NULL;
    END IF;
    IF p_every_interval IS NOT NULL THEN
        s.interval_micros := "${schema}"._micros(p_every_interval);
        s.cron := NULL;
    END IF;
    s.time_zone := coalesce(p_timezone, s.time_zone);
    s.topic := coalesce(p_queue, s.topic);
    s.payload := coalesce(p_payload, s.payload);
    s.headers := coalesce(p_headers, s.headers);
    s.priority := coalesce(p_priority, s.priority);
    s.max_attempts := coalesce(p_max_attempts, s.max_attempts);
    s.start_at := coalesce(p_start_at, s.start_at);
    s.end_at := coalesce(p_end_at, s.end_at);
    s.missed_policy := upper(coalesce(p_missed_policy, s.missed_policy));
    s.missed_bound := coalesce(p_missed_bound, s.missed_bound);
    s.missed_grace_micros := coalesce("${schema}"._micros(p_missed_grace), s.missed_grace_micros);
    s := "${schema}"._prepare_schedule(s);
    IF NOT "${schema}"._schedule_changed(v_old, s) THEN
        RETURN 'unchanged';
    END IF;
    PERFORM "${schema}"._replace_schedule(v_old, s);
    RETURN 'updated';
END
$$;


-- A schedule row as the caller prepared it (the Java domain, or _prepare_schedule): stored when the name is
-- free. True when stored.
CREATE OR REPLACE FUNCTION "${schema}"._engine_schedule_insert(
    p_namespace text, p_name text, p_cron text, p_interval_micros bigint, p_time_zone text, p_topic text,
    p_payload text, p_headers text, p_priority integer, p_max_attempts integer, p_start_at timestamptz,
    p_end_at timestamptz, p_missed_policy text, p_missed_bound integer, p_missed_grace_micros bigint,
    p_paused boolean, p_next_run_at timestamptz, p_last_run_at timestamptz, p_created_at timestamptz,
    p_updated_at timestamptz, p_actor text)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_schedule_insert');
    END IF;
    INSERT INTO "${schema}".schedules (namespace, name, cron, interval_micros, time_zone, topic, payload, headers,
                                       priority, max_attempts, start_at, end_at, missed_policy, missed_bound,
                                       missed_grace_micros, paused, next_run_at, last_run_at, created_at, updated_at,
                                       updated_by)
    VALUES (p_namespace, p_name, p_cron, p_interval_micros, p_time_zone, p_topic, p_payload::json, p_headers::jsonb,
            p_priority, p_max_attempts, p_start_at, p_end_at, p_missed_policy, p_missed_bound, p_missed_grace_micros,
            p_paused, p_next_run_at, p_last_run_at, p_created_at, p_updated_at, p_actor)
    ON CONFLICT (namespace, name) DO NOTHING;
    RETURN FOUND;
END
$$;


-- A new definition over an existing row: identity, creation time and last run kept, the pause state too when
-- p_paused is NULL. True when the schedule exists.
CREATE OR REPLACE FUNCTION "${schema}"._engine_schedule_replace(
    p_namespace text, p_name text, p_cron text, p_interval_micros bigint, p_time_zone text, p_topic text,
    p_payload text, p_headers text, p_priority integer, p_max_attempts integer, p_start_at timestamptz,
    p_end_at timestamptz, p_missed_policy text, p_missed_bound integer, p_missed_grace_micros bigint,
    p_paused boolean, p_next_run_at timestamptz, p_updated_at timestamptz, p_actor text)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_schedule_replace');
    END IF;
    UPDATE "${schema}".schedules x
    SET cron = p_cron, interval_micros = p_interval_micros, time_zone = p_time_zone, topic = p_topic,
        payload = p_payload::json, headers = p_headers::jsonb, priority = p_priority, max_attempts = p_max_attempts,
        start_at = p_start_at, end_at = p_end_at, missed_policy = p_missed_policy, missed_bound = p_missed_bound,
        missed_grace_micros = p_missed_grace_micros, paused = coalesce(p_paused, x.paused),
        next_run_at = p_next_run_at, updated_at = p_updated_at, updated_by = p_actor
    WHERE x.namespace = p_namespace AND x.name = p_name;
    RETURN FOUND;
END
$$;


-- Pause (the definition kept, nothing fires) or resume (next run p_next_run_at, NULL to keep it). The actor is
-- recorded as who paused, or as who updated on resume. True when the schedule exists.
CREATE OR REPLACE FUNCTION "${schema}"._engine_schedule_pause(p_namespace text, p_name text, p_paused boolean,
                                                              p_next_run_at timestamptz, p_updated_at timestamptz, p_actor text)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_schedule_pause');
    END IF;
    UPDATE "${schema}".schedules x
    SET paused = p_paused, next_run_at = coalesce(p_next_run_at, x.next_run_at), updated_at = p_updated_at,
        paused_by = CASE WHEN p_paused THEN p_actor END,
        updated_by = CASE WHEN p_paused THEN x.updated_by ELSE p_actor END
    WHERE x.namespace = p_namespace AND x.name = p_name;
    RETURN FOUND;
END
$$;


CREATE OR REPLACE FUNCTION "${schema}"._engine_schedule_delete(p_namespace text, p_name text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_schedule_delete');
    END IF;
    DELETE FROM "${schema}".schedules x WHERE x.namespace = p_namespace AND x.name = p_name;
    RETURN FOUND;
END
$$;


-- One schedule (p_name), or every schedule of the namespace by name in code point order (COLLATE "C"), as Java
-- sorts strings whatever the database's collation.
CREATE OR REPLACE FUNCTION "${schema}"._engine_schedules(p_namespace text, p_name text)
RETURNS SETOF "${schema}".schedules
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_schedules');
    END IF;
    RETURN QUERY
    SELECT s.* FROM "${schema}".schedules s
    WHERE s.namespace = p_namespace AND (p_name IS NULL OR s.name = p_name)
    ORDER BY s.name COLLATE "C";
END
$$;


-- The due schedules (of one namespace, or of all with NULL), at most p_limit, locked until the caller's
-- transaction ends and skipped by every other ticker meanwhile (FOR UPDATE SKIP LOCKED): a due time fires once.
CREATE OR REPLACE FUNCTION "${schema}"._engine_lock_due_schedules(p_namespace text, p_limit integer, p_now timestamptz)
RETURNS SETOF "${schema}".schedules
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_lock_due_schedules');
    END IF;
    RETURN QUERY
    SELECT s.* FROM "${schema}".schedules s
    WHERE NOT s.paused
      AND s.next_run_at IS NOT NULL
      AND s.next_run_at <= coalesce(p_now, statement_timestamp())
      AND (p_namespace IS NULL OR s.namespace = p_namespace)
    ORDER BY s.next_run_at, s.namespace, s.name
    LIMIT p_limit
    FOR UPDATE SKIP LOCKED;
END
$$;


-- After a firing: the next run, and the latest due time fired.
CREATE OR REPLACE FUNCTION "${schema}"._engine_schedule_ran(p_namespace text, p_name text, p_next_run_at timestamptz,
                                                            p_last_run_at timestamptz)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_schedule_ran');
    END IF;
    UPDATE "${schema}".schedules x
    SET next_run_at = p_next_run_at, last_run_at = p_last_run_at
    WHERE x.namespace = p_namespace AND x.name = p_name;
    RETURN FOUND;
END
$$;


-- The earliest next run of the schedules not paused (of one namespace, or of all with NULL).
CREATE OR REPLACE FUNCTION "${schema}"._engine_next_schedule_run(p_namespace text) RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_next timestamptz;
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_next_schedule_run');
    END IF;
    SELECT min(s.next_run_at) INTO v_next
    FROM "${schema}".schedules s
    WHERE NOT s.paused AND s.next_run_at IS NOT NULL AND (p_namespace IS NULL OR s.namespace = p_namespace);
    RETURN v_next;
END
$$;


-- A schedule's definition as the engine_ gates take it from the Java domain, checked by the rules of the Java
-- Schedules.create (and of _prepare_schedule): the Java tickers of every namespace read these rows, so nothing they
-- could not read is stored. The due times are the caller's: the first run and the next are not computed here.
CREATE OR REPLACE FUNCTION "${schema}"._check_engine_schedule(
    p_name text, p_cron text, p_interval_micros bigint, p_time_zone text, p_topic text, p_payload text,
    p_headers text, p_priority integer, p_max_attempts integer, p_start_at timestamptz, p_end_at timestamptz,
    p_missed_policy text, p_missed_bound integer, p_missed_grace_micros bigint, p_next_run_at timestamptz,
    p_updated_at timestamptz)
RETURNS void
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_headers jsonb;
    v_text    text;
BEGIN
    PERFORM "${schema}"._check_name('p_name', p_name);
    IF (p_cron IS NULL) = (p_interval_micros IS NULL) THEN
        PERFORM "${schema}"._invalid('p_cron', "${schema}"._shown(p_cron),
            'exactly one of p_cron and p_interval_micros');
    END IF;
    IF p_interval_micros IS NOT NULL THEN
        PERFORM "${schema}"._check_range('p_interval_micros', p_interval_micros, 1000000, 31536000000000,
                                         '1000000 to 31536000000000 microseconds (1 s to 365 days)');
    END IF;
    IF p_time_zone IS NULL OR length(p_time_zone) > 100 THEN
        PERFORM "${schema}"._invalid('p_time_zone', "${schema}"._shown(p_time_zone),
            'a time zone ID such as UTC, Europe/Paris or +02:00');
    END IF;
    -- the zone and the expression as java.time and the Java parser read them (cron_next_run follows both)
    BEGIN
        PERFORM "${schema}".cron_next_run('0 0 1 1 *', p_time_zone, statement_timestamp());
    EXCEPTION WHEN SQLSTATE 'QU001' THEN
        PERFORM "${schema}"._invalid('p_time_zone', "${schema}"._shown(p_time_zone),
            'a time zone ID such as UTC, Europe/Paris or +02:00');
    END;
    IF p_cron IS NOT NULL THEN
        IF length(p_cron) > 1000 THEN
            PERFORM "${schema}"._invalid('p_cron', "${schema}"._shown(p_cron),
                'a cron expression of at most 1000 characters');
        END IF;
        BEGIN
            PERFORM "${schema}".cron_next_run(p_cron, p_time_zone, statement_timestamp());
        EXCEPTION WHEN SQLSTATE 'QU001' THEN
            GET STACKED DIAGNOSTICS v_text = MESSAGE_TEXT;
            RAISE EXCEPTION USING ERRCODE = 'QU001', MESSAGE = replace(v_text, 'p_expression', 'p_cron'),
                COLUMN = 'p_cron';
        END;
    END IF;
    PERFORM "${schema}"._check_name('p_topic', p_topic);
    PERFORM "${schema}"._check_engine_payloads('p_payload', ARRAY[p_payload]);
    BEGIN
        v_headers := p_headers::jsonb;
    EXCEPTION WHEN data_exception THEN
        PERFORM "${schema}"._invalid('p_headers', "${schema}"._shown(p_headers),
            'a JSON object of header names to strings');
    END;
    -- two more are added to each message fired (queue-schedule, queue-due-at)
    PERFORM "${schema}"._check_headers('p_headers', v_headers, 30);
    PERFORM "${schema}"._check_range('p_priority', p_priority, 0, 9, '0 (first) to 9 (last)');
    PERFORM "${schema}"._check_range('p_max_attempts', p_max_attempts, 1, 1000, '1 to 1000');
    IF p_start_at IS NOT NULL THEN
        PERFORM "${schema}"._check_instant('p_start_at', p_start_at);
    END IF;
    IF p_end_at IS NOT NULL THEN
        PERFORM "${schema}"._check_instant('p_end_at', p_end_at);
    END IF;
    IF p_start_at IS NOT NULL AND p_end_at IS NOT NULL AND p_end_at <= p_start_at THEN
        PERFORM "${schema}"._invalid('p_end_at', p_end_at::text, 'an instant after p_start_at ' || p_start_at);
    END IF;
    IF p_missed_policy IS NULL OR p_missed_policy NOT IN ('FIRE_ONCE', 'SKIP', 'FIRE_EACH') THEN
        PERFORM "${schema}"._invalid('p_missed_policy', "${schema}"._shown(p_missed_policy),
            'FIRE_ONCE, SKIP or FIRE_EACH');
    END IF;
    PERFORM "${schema}"._check_range('p_missed_bound', p_missed_bound, 1, 1000, '1 to 1000');
    PERFORM "${schema}"._check_range('p_missed_grace_micros', p_missed_grace_micros, 0, 31536000000000,
                                     '0 to 31536000000000 microseconds (365 days)');
    IF p_next_run_at IS NOT NULL THEN
        PERFORM "${schema}"._check_instant('p_next_run_at', p_next_run_at);
    END IF;
    PERFORM "${schema}"._check_instant('p_updated_at', p_updated_at);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_schedule_insert(
    p_namespace text, p_name text, p_cron text, p_interval_micros bigint, p_time_zone text, p_topic text,
    p_payload text, p_headers text, p_priority integer, p_max_attempts integer, p_start_at timestamptz,
    p_end_at timestamptz, p_missed_policy text, p_missed_bound integer, p_missed_grace_micros bigint,
    p_paused boolean, p_next_run_at timestamptz, p_last_run_at timestamptz, p_created_at timestamptz,
    p_updated_at timestamptz, p_actor text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    PERFORM "${schema}"._check_engine_schedule(p_name, p_cron, p_interval_micros, p_time_zone, p_topic, p_payload,
        p_headers, p_priority, p_max_attempts, p_start_at, p_end_at, p_missed_policy, p_missed_bound,
        p_missed_grace_micros, p_next_run_at, p_updated_at);
    IF p_last_run_at IS NOT NULL THEN
        PERFORM "${schema}"._check_instant('p_last_run_at', p_last_run_at);
    END IF;
    PERFORM "${schema}"._check_instant('p_created_at', p_created_at);
    PERFORM "${schema}"._check_engine_actor('p_actor', p_actor);
    RETURN "${schema}"._engine_schedule_insert(p_namespace, p_name, p_cron, p_interval_micros, p_time_zone, p_topic,
        p_payload, p_headers, p_priority, p_max_attempts, p_start_at, p_end_at, p_missed_policy, p_missed_bound,
        p_missed_grace_micros, coalesce(p_paused, false), p_next_run_at, p_last_run_at, p_created_at, p_updated_at,
        p_actor);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_schedule_replace(
    p_namespace text, p_name text, p_cron text, p_interval_micros bigint, p_time_zone text, p_topic text,
    p_payload text, p_headers text, p_priority integer, p_max_attempts integer, p_start_at timestamptz,
    p_end_at timestamptz, p_missed_policy text, p_missed_bound integer, p_missed_grace_micros bigint,
    p_paused boolean, p_next_run_at timestamptz, p_updated_at timestamptz, p_actor text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    PERFORM "${schema}"._check_engine_schedule(p_name, p_cron, p_interval_micros, p_time_zone, p_topic, p_payload,
        p_headers, p_priority, p_max_attempts, p_start_at, p_end_at, p_missed_policy, p_missed_bound,
        p_missed_grace_micros, p_next_run_at, p_updated_at);
    PERFORM "${schema}"._check_engine_actor('p_actor', p_actor);
    -- p_paused NULL keeps the schedule's pause
    RETURN "${schema}"._engine_schedule_replace(p_namespace, p_name, p_cron, p_interval_micros, p_time_zone, p_topic,
        p_payload, p_headers, p_priority, p_max_attempts, p_start_at, p_end_at, p_missed_policy, p_missed_bound,
        p_missed_grace_micros, p_paused, p_next_run_at, p_updated_at, p_actor);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_schedule_pause(p_namespace text, p_name text, p_paused boolean,
                                                             p_next_run_at timestamptz, p_updated_at timestamptz, p_actor text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    PERFORM "${schema}"._check_name('p_name', p_name);
    IF p_paused IS NULL THEN
        PERFORM "${schema}"._invalid('p_paused', 'null', 'true (pause) or false (resume)');
    END IF;
    IF p_next_run_at IS NOT NULL THEN
        PERFORM "${schema}"._check_instant('p_next_run_at', p_next_run_at);
    END IF;
    PERFORM "${schema}"._check_instant('p_updated_at', p_updated_at);
    PERFORM "${schema}"._check_engine_actor('p_actor', p_actor);
    RETURN "${schema}"._engine_schedule_pause(p_namespace, p_name, p_paused, p_next_run_at, p_updated_at, p_actor);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_schedule_delete(p_namespace text, p_name text) RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    PERFORM "${schema}"._check_name('p_name', p_name);
    RETURN "${schema}"._engine_schedule_delete(p_namespace, p_name);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_schedules(p_namespace text, p_name text)
RETURNS SETOF "${schema}".schedules
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    IF p_name IS NOT NULL THEN
        PERFORM "${schema}"._check_name('p_name', p_name);
    END IF;
    RETURN QUERY SELECT * FROM "${schema}"._engine_schedules(p_namespace, p_name);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_lock_due_schedules(p_namespace text, p_limit integer, p_now timestamptz)
RETURNS SETOF "${schema}".schedules
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
DECLARE
    v_namespace text := "${schema}"._check_gate_namespace(p_namespace, true);
BEGIN
    PERFORM "${schema}"._check_range('p_limit', p_limit, 1, 1000, '1 to 1000');
    PERFORM "${schema}"._check_engine_now(p_now);
    RETURN QUERY SELECT * FROM "${schema}"._engine_lock_due_schedules(v_namespace, p_limit, p_now);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_schedule_ran(p_namespace text, p_name text, p_next_run_at timestamptz,
                                                           p_last_run_at timestamptz)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    PERFORM "${schema}"._check_name('p_name', p_name);
    IF p_next_run_at IS NOT NULL THEN
        PERFORM "${schema}"._check_instant('p_next_run_at', p_next_run_at);
    END IF;
    IF p_last_run_at IS NOT NULL THEN
        PERFORM "${schema}"._check_instant('p_last_run_at', p_last_run_at);
    END IF;
    RETURN "${schema}"._engine_schedule_ran(p_namespace, p_name, p_next_run_at, p_last_run_at);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_next_schedule_run(p_namespace text) RETURNS timestamptz
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    RETURN "${schema}"._engine_next_schedule_run("${schema}"._check_gate_namespace(p_namespace, true));
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".create_schedule(
    p_namespace text, p_name text, p_queue text, p_payload json,
    p_cron_expression text DEFAULT NULL, p_every_interval interval DEFAULT NULL, p_timezone text DEFAULT 'UTC',
    p_headers jsonb DEFAULT '{}', p_priority integer DEFAULT 0, p_max_attempts integer DEFAULT NULL,
    p_start_at timestamptz DEFAULT NULL, p_end_at timestamptz DEFAULT NULL,
    p_missed_policy text DEFAULT 'FIRE_ONCE', p_missed_bound integer DEFAULT 1,
    p_missed_grace interval DEFAULT interval '1 minute')
RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
DECLARE
    s     "${schema}".schedules;
    v_old "${schema}".schedules;
    v_now timestamptz := statement_timestamp();
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    PERFORM "${schema}"._check_name('p_queue', p_queue);
    PERFORM "${schema}"._check_schedule_arguments(p_every_interval, p_priority, p_missed_grace);
    s.namespace := p_namespace;
    s.name := p_name;
    s.cron := btrim(p_cron_expression);
    s.interval_micros := "${schema}"._micros(p_every_interval);
    s.time_zone := coalesce(p_timezone, 'UTC');
    s.topic := p_queue;
    s.payload := p_payload;
    s.headers := coalesce(p_headers, '{}');
    s.priority := coalesce(p_priority, 0);
    s.max_attempts := coalesce(p_max_attempts, ("${schema}".get_queue_policy(p_namespace, p_queue)).max_attempts);
    s.start_at := p_start_at;
    s.end_at := p_end_at;
    s.missed_policy := upper(coalesce(p_missed_policy, 'FIRE_ONCE'));
    s.missed_bound := coalesce(p_missed_bound, 1);
    s.missed_grace_micros := "${schema}"._micros(coalesce(p_missed_grace, interval '1 minute'));
    s.paused := false;
    s.created_at := v_now;
    s.updated_at := v_now;
    s.updated_by := "${schema}".current_actor();
    s := "${schema}"._prepare_schedule(s);
    IF "${schema}"._engine_schedule_insert(s.namespace, s.name, s.cron, s.interval_micros, s.time_zone, s.topic,
            s.payload::text, s.headers::text, s.priority, s.max_attempts, s.start_at, s.end_at, s.missed_policy,
            s.missed_bound, s.missed_grace_micros, s.paused, s.next_run_at, s.last_run_at, s.created_at, s.updated_at,
            s.updated_by) THEN
        RETURN 'created';
    END IF;
    SELECT * INTO v_old FROM "${schema}".schedules x WHERE x.namespace = p_namespace AND x.name = p_name FOR UPDATE;
    IF NOT "${schema}"._schedule_changed(v_old, s) THEN
        RETURN 'unchanged';
    END IF;
    PERFORM "${schema}"._replace_schedule(v_old, s);
    RETURN 'updated';
END
$$;


CREATE OR REPLACE FUNCTION "${schema}"._replace_schedule(p_old "${schema}".schedules, p_new "${schema}".schedules) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    s "${schema}".schedules := p_new;
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_replace_schedule');
    END IF;
    s.created_at := p_old.created_at;
    s.next_run_at := "${schema}"._schedule_next_after(s, statement_timestamp() - interval '1 microsecond');
    PERFORM "${schema}"._engine_schedule_replace(p_old.namespace, p_old.name, s.cron, s.interval_micros, s.time_zone,
        s.topic, s.payload::text, s.headers::text, s.priority, s.max_attempts, s.start_at, s.end_at, s.missed_policy,
        s.missed_bound, s.missed_grace_micros, NULL, s.next_run_at, statement_timestamp(), "${schema}".current_actor());
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".delete_schedule(p_namespace text, p_name text) RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    PERFORM "${schema}"._check_name('p_name', p_name);
    RETURN "${schema}"._engine_schedule_delete(p_namespace, p_name);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".list_schedules(p_namespace text)
RETURNS TABLE (name text, queue text, cron_expression text, every_interval interval, timezone text, payload json,
               headers jsonb, priority integer, max_attempts integer, start_at timestamptz, end_at timestamptz,
               missed_policy text, missed_bound integer, missed_grace interval, paused boolean,
               next_run_at timestamptz, last_run_at timestamptz, created_at timestamptz, updated_at timestamptz,
               paused_by text, updated_by text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
#variable_conflict use_column
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    RETURN QUERY
    SELECT s.name::text, s.topic::text, s.cron, s.interval_micros * interval '1 microsecond', s.time_zone, s.payload,
           s.headers, s.priority::integer, s.max_attempts, s.start_at, s.end_at, s.missed_policy, s.missed_bound,
           s.missed_grace_micros * interval '1 microsecond', s.paused, s.next_run_at, s.last_run_at, s.created_at,
           s.updated_at, s.paused_by, s.updated_by
    FROM "${schema}"._engine_schedules(p_namespace, NULL) s;
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".pause_schedule(p_namespace text, p_name text) RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
DECLARE
    v_old "${schema}".schedules;
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    PERFORM "${schema}"._check_name('p_name', p_name);
    SELECT * INTO v_old FROM "${schema}".schedules x WHERE x.namespace = p_namespace AND x.name = p_name FOR UPDATE;
    IF NOT FOUND THEN
        PERFORM "${schema}"._schedule_not_found(p_namespace, p_name);
    END IF;
    IF v_old.paused THEN
        RETURN false;
    END IF;
    PERFORM "${schema}"._engine_schedule_pause(p_namespace, p_name, true, NULL, statement_timestamp(),
                                               "${schema}".current_actor());
    RETURN true;
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".resume_schedule(p_namespace text, p_name text) RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
DECLARE
    v_old "${schema}".schedules;
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    PERFORM "${schema}"._check_name('p_name', p_name);
    SELECT * INTO v_old FROM "${schema}".schedules x WHERE x.namespace = p_namespace AND x.name = p_name FOR UPDATE;
    IF NOT FOUND THEN
        PERFORM "${schema}"._schedule_not_found(p_namespace, p_name);
    END IF;
    IF NOT v_old.paused THEN
        RETURN false;
    END IF;
    PERFORM "${schema}"._engine_schedule_pause(p_namespace, p_name, false,
        "${schema}"._schedule_next_after(v_old, statement_timestamp()), statement_timestamp(),
        "${schema}".current_actor());
    RETURN true;
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".tick_schedules(p_namespace text DEFAULT NULL, p_limit integer DEFAULT 100)
RETURNS TABLE (schedule_name text, job_id bigint, next_run_at timestamptz, due_at timestamptz, namespace text)
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
#variable_conflict use_column
DECLARE
    s         "${schema}".schedules;
    v_now     timestamptz := statement_timestamp();
    v_next    timestamptz;
    v_latest  timestamptz;
    v_t       timestamptz;
    v_due     timestamptz[];
    v_due_at  timestamptz;
    v_key     text;
    v_id      bigint;
BEGIN
    IF p_namespace IS NOT NULL OR "${schema}".current_tenant() IS NOT NULL THEN
        PERFORM "${schema}"._check_namespace(p_namespace);
    END IF;
    p_limit := coalesce(p_limit, 100);
    PERFORM "${schema}"._check_range('p_limit', p_limit, 1, 1000, '1 to 1000');
    FOR s IN
        SELECT * FROM "${schema}"._engine_lock_due_schedules(p_namespace, p_limit, v_now)
    LOOP
        v_next := "${schema}"._schedule_next_after(s, v_now);
        v_latest := "${schema}"._schedule_latest(s, v_now, s.next_run_at);
        v_due := '{}';
        IF v_latest IS NOT NULL THEN
            IF s.missed_policy = 'FIRE_ONCE' THEN
                v_due := ARRAY[v_latest];
            ELSIF s.missed_policy = 'SKIP' THEN
                IF v_latest >= v_now - s.missed_grace_micros * interval '1 microsecond' THEN
                    v_due := ARRAY[v_latest];
                END IF;
            ELSE
                v_t := v_latest;
                WHILE v_t IS NOT NULL AND cardinality(v_due) < s.missed_bound LOOP
                    v_due := v_t || v_due;
                    v_t := "${schema}"._schedule_latest(s, v_t - interval '1 microsecond', s.next_run_at);
                END LOOP;
            END IF;
        END IF;
        FOREACH v_due_at IN ARRAY v_due LOOP
            v_key := 'schedule:' || s.name || ':' || "${schema}"._instant_text(v_due_at);
            v_id := "${schema}"._insert_message(s.namespace, s.topic, s.payload,
                s.headers || jsonb_build_object('queue-schedule', s.name, 'queue-due-at', "${schema}"._instant_text(v_due_at)),
                s.priority, s.max_attempts, v_key, v_now, NULL);
            IF v_id IS NULL THEN
                SELECT m.id INTO v_id FROM "${schema}".messages m
                WHERE m.namespace = s.namespace AND m.topic = s.topic AND m.unique_key = v_key;
            END IF;
            schedule_name := s.name;
            job_id := v_id;
            next_run_at := v_next;
            due_at := v_due_at;
            namespace := s.namespace;
            RETURN NEXT;
        END LOOP;
        PERFORM "${schema}"._engine_schedule_ran(s.namespace, s.name, v_next,
                                                 coalesce(v_due[cardinality(v_due)], s.last_run_at));
    END LOOP;
END
$$;


-- Fires a schedule once now, outside its timetable: its message with the schedule's headers, due now. The next
-- run is unchanged. Returns the message id, NULL when a live message holds the key of this firing.
CREATE OR REPLACE FUNCTION "${schema}".run_schedule_now(p_namespace text, p_name text) RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
DECLARE
    s     "${schema}".schedules;
    v_now timestamptz := statement_timestamp();
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    PERFORM "${schema}"._check_name('p_name', p_name);
    SELECT * INTO s FROM "${schema}".schedules x WHERE x.namespace = p_namespace AND x.name = p_name;
    IF NOT FOUND THEN
        PERFORM "${schema}"._schedule_not_found(p_namespace, p_name);
    END IF;
    RETURN "${schema}"._insert_message(s.namespace, s.topic, s.payload,
        s.headers || jsonb_build_object('queue-schedule', s.name, 'queue-due-at', "${schema}"._instant_text(v_now)),
        s.priority, s.max_attempts, 'schedule:' || s.name || ':' || "${schema}"._instant_text(v_now), v_now, NULL);
END
$$;
