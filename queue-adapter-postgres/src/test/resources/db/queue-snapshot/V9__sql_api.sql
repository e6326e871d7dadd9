-- queue schema, version 9: the SQL interface. Every queue operation as a function of this schema, callable from
-- psql or any client, on the same tables and with the same rules as the Java engine (docs/sql.md).
--
-- In SQL a topic is called a queue: p_queue and the "queue" columns returned hold what the Java API calls a topic.
-- Errors raised by these functions carry SQLSTATEs of the queue's own class QU (see docs/sql.md):
--   QU001 an argument breaks a rule, QU002 the namespace differs from the tenant set for the session,
--   QU003 the schedule does not exist, QU004 the payload cannot be stored.
-- Functions whose names start with an underscore are internal and may change without notice.
--
-- Time is statement_timestamp(), as in the Java engine's statements without a test clock.
-- The functions that call cron_next_run and backoff_delay (version 8) are PL/pgSQL, whose bodies are resolved
-- when first called, so this file does not depend on the order in which tools create functions.

-- ------------------------------------------------------------------ who did what

-- Who published, failed, redrove, purged or paused, as set by set_actor(). Null: no actor was set (the Java
-- engine's own statements list their columns and leave these null).
ALTER TABLE "${schema}".messages
    ADD COLUMN published_by text,
    ADD COLUMN redriven_by  text;

ALTER TABLE "${schema}".dead_letters
    ADD COLUMN published_by text,
    ADD COLUMN failed_by    text;

ALTER TABLE "${schema}".completed_messages
    ADD COLUMN published_by text;

ALTER TABLE "${schema}".schedules
    ADD COLUMN paused_by  text,
    ADD COLUMN updated_by text;

-- Operations whose rows are gone afterwards (a purge) or that move many rows at once are recorded here.
CREATE TABLE "${schema}".audit_log (
    id        bigint GENERATED ALWAYS AS IDENTITY,
    at        timestamptz      NOT NULL,
    namespace text COLLATE "C" NOT NULL,
    actor     text,
    action    text             NOT NULL,
    subject   text,
    ids       bigint[],
    count     integer          NOT NULL,
    CONSTRAINT audit_log_pkey PRIMARY KEY (id)
);

CREATE INDEX audit_log_namespace_idx ON "${schema}".audit_log (namespace, at);

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

-- ------------------------------------------------------------------ internal: errors and checks

-- A value as error messages show it: text quoted and cut at 200 characters, like the Java API's messages.
CREATE FUNCTION "${schema}"._shown(p_value text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_value IS NULL THEN 'null'
                ELSE '"' || replace(replace(left(p_value, 200), E'\n', '\n'), E'\r', '\r') || '"'
                     || CASE WHEN length(p_value) > 200 THEN '...(' || length(p_value) || ' chars)' ELSE '' END
           END
$$;

-- Raises QU001 (or the given code) naming the argument, what was expected and the value received.
CREATE FUNCTION "${schema}"._invalid(p_argument text, p_shown text, p_expected text, p_code text DEFAULT 'QU001')
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = p_code,
        MESSAGE = format('invalid %s: expected %s, got: %s', p_argument, p_expected, p_shown),
        COLUMN = p_argument;
END
$$;

CREATE FUNCTION "${schema}"._micros(p_interval interval) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT (extract(epoch FROM p_interval) * 1000000)::bigint
$$;

-- Names of namespaces, queues, schedules and header names: the rule of InputRules.isName.
CREATE FUNCTION "${schema}"._check_name(p_argument text, p_value text) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_value IS NULL OR p_value !~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$' THEN
        PERFORM "${schema}"._invalid(p_argument, "${schema}"._shown(p_value),
            '1 to 64 characters: letters, digits, ''.'', ''_'' or ''-'', starting with a letter or digit');
    END IF;
END
$$;

-- Text without control characters (Java's Character.isISOControl: U+0000-U+001F, U+007F-U+009F).
CREATE FUNCTION "${schema}"._check_text(p_argument text, p_value text, p_max_length integer) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_value IS NULL OR length(p_value) = 0 OR length(p_value) > p_max_length
            OR p_value ~ '[\x01-\x1f\x7f-\x9f]' THEN
        PERFORM "${schema}"._invalid(p_argument, "${schema}"._shown(p_value),
            '1 to ' || p_max_length || ' characters without control characters');
    END IF;
END
$$;

CREATE FUNCTION "${schema}"._check_range(p_argument text, p_value bigint, p_min bigint, p_max bigint, p_expected text)
RETURNS void LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_value IS NULL OR p_value < p_min OR p_value > p_max THEN
        PERFORM "${schema}"._invalid(p_argument, coalesce(p_value::text, 'null'), p_expected);
    END IF;
END
$$;

CREATE FUNCTION "${schema}"._check_interval(p_argument text, p_value interval, p_min interval, p_max interval,
                                            p_expected text)
RETURNS void LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_value IS NULL OR "${schema}"._micros(p_value) < "${schema}"._micros(p_min)
            OR "${schema}"._micros(p_value) > "${schema}"._micros(p_max) THEN
        PERFORM "${schema}"._invalid(p_argument, coalesce(p_value::text, 'null'), p_expected);
    END IF;
END
$$;

CREATE FUNCTION "${schema}"._check_instant(p_argument text, p_value timestamptz) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_value IS NULL OR p_value < timestamptz '1970-01-01 00:00:00+00'
            OR p_value > timestamptz '9999-12-31 23:59:59+00' THEN
        PERFORM "${schema}"._invalid(p_argument, coalesce(p_value::text, 'null'), 'an instant between 1970 and 9999');
    END IF;
END
$$;

-- One JSON value within the size limit and without a \u0000 escape (PostgreSQL's json input has already checked
-- the syntax by the time a function sees the argument).
CREATE FUNCTION "${schema}"._check_payload(p_argument text, p_payload json, p_max_bytes integer) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_text  text := p_payload::text;
    v_bytes integer;
BEGIN
    IF p_payload IS NULL THEN
        PERFORM "${schema}"._invalid(p_argument, 'null', 'JSON text (use ''null'' for a JSON null)', 'QU004');
    END IF;
    v_bytes := octet_length(v_text);
    IF v_bytes > p_max_bytes THEN
        PERFORM "${schema}"._invalid(p_argument, v_bytes || ' bytes', 'at most ' || p_max_bytes || ' bytes of UTF-8 JSON',
            'QU004');
    END IF;
    -- an escape is a backslash preceded by an even number of backslashes
    IF strpos(v_text, '\u0000') > 0 AND v_text ~ '(^|[^\\])(\\\\)*\\u0000' THEN
        PERFORM "${schema}"._invalid(p_argument, "${schema}"._shown(v_text),
            'valid JSON without a \u0000 escape, which cannot be stored', 'QU004');
    END IF;
END
$$;

-- Headers: a JSON object of at most p_max_count string values, names by the name rule and not the queue's own.
CREATE FUNCTION "${schema}"._check_headers(p_argument text, p_headers jsonb, p_max_count integer) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_header record;
BEGIN
    IF p_headers IS NULL OR jsonb_typeof(p_headers) <> 'object' THEN
        PERFORM "${schema}"._invalid(p_argument, coalesce(p_headers::text, 'null'),
            'a JSON object of header names to string values, possibly empty');
    END IF;
    IF (SELECT count(*) FROM jsonb_object_keys(p_headers)) > p_max_count THEN
        PERFORM "${schema}"._invalid(p_argument, (SELECT count(*) FROM jsonb_object_keys(p_headers)) || ' headers',
            'at most ' || p_max_count);
    END IF;
    FOR v_header IN SELECT key, value FROM jsonb_each(p_headers) LOOP
        PERFORM "${schema}"._check_name(p_argument || ' name', v_header.key);
        IF lower(v_header.key) LIKE 'queue-%' THEN
            PERFORM "${schema}"._invalid(p_argument || ' name', "${schema}"._shown(v_header.key),
                'a name not starting with ''queue-'', which the queue reserves for the headers it sets itself');
        END IF;
        IF jsonb_typeof(v_header.value) <> 'string' OR length(v_header.value #>> '{}') > 1024 THEN
            PERFORM "${schema}"._invalid(p_argument || ' ' || v_header.key, v_header.value::text,
                'a string of at most 1024 characters');
        END IF;
    END LOOP;
END
$$;

-- Error texts are kept, not rejected: a blank one says so, a long one is cut (InputRules.errorText).
CREATE FUNCTION "${schema}"._error_text(p_error text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_error IS NULL OR btrim(p_error, E' \t\n\r\f\v') = '' THEN 'no reason given'
                WHEN length(p_error) <= 8000 THEN p_error
                ELSE left(p_error, 8000 - length('...(cut)')) || '...(cut)'
           END
$$;

-- ------------------------------------------------------------------ tenant and actor context

-- The context lives in the custom settings queue.tenant_id and queue.actor: session-level by default, or
-- transaction-local with p_local (set_config(..., true)), which is what pooled callers should use, since a
-- transaction-local value ends with the transaction and cannot reach the next borrower of the connection.

CREATE FUNCTION "${schema}".current_tenant() RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT nullif(current_setting('queue.tenant_id', true), '')
$$;

CREATE FUNCTION "${schema}".current_actor() RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT nullif(current_setting('queue.actor', true), '')
$$;

CREATE FUNCTION "${schema}".set_tenant(p_namespace text, p_local boolean DEFAULT false) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_name('p_namespace', p_namespace);
    RETURN set_config('queue.tenant_id', p_namespace, coalesce(p_local, false));
END
$$;

CREATE FUNCTION "${schema}".clear_tenant(p_local boolean DEFAULT false) RETURNS void
LANGUAGE sql AS $$
    SELECT set_config('queue.tenant_id', '', coalesce(p_local, false))
$$;

CREATE FUNCTION "${schema}".set_actor(p_actor text, p_local boolean DEFAULT false) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_text('p_actor', p_actor, 128);
    RETURN set_config('queue.actor', p_actor, coalesce(p_local, false));
END
$$;

CREATE FUNCTION "${schema}".clear_actor(p_local boolean DEFAULT false) RETURNS void
LANGUAGE sql AS $$
    SELECT set_config('queue.actor', '', coalesce(p_local, false))
$$;

-- Every function checks its namespace here first: with a tenant set, any other namespace is refused (QU002).
CREATE FUNCTION "${schema}"._check_namespace(p_namespace text) RETURNS void
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_tenant text := "${schema}".current_tenant();
BEGIN
    IF v_tenant IS NOT NULL AND p_namespace IS DISTINCT FROM v_tenant THEN
        RAISE EXCEPTION USING ERRCODE = 'QU002',
            MESSAGE = format('namespace %s differs from the tenant %s set for this session',
                             "${schema}"._shown(p_namespace), "${schema}"._shown(v_tenant)),
            HINT = 'pass the tenant''s namespace, or call set_tenant()/clear_tenant() first',
            COLUMN = 'p_namespace';
    END IF;
    PERFORM "${schema}"._check_name('p_namespace', p_namespace);
END
$$;

-- Whether a change that makes messages claimable sends its wake-up: the parameter when given, else the
-- setting queue.notify (off, false or 0 suppress, for example set_config('queue.notify', 'off', true)).
CREATE FUNCTION "${schema}"._notify_wanted(p_notify boolean) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT coalesce(p_notify,
                    lower(coalesce(nullif(current_setting('queue.notify', true), ''), 'on')) NOT IN ('off', 'false', '0', 'no'))
$$;

-- The wake-up the Java subscribers LISTEN for: channel "<schema>_wakeup", payload "namespace/topic". Sent inside
-- the caller's transaction, so it is delivered only if that commits.
CREATE FUNCTION "${schema}"._wake(p_namespace text, p_queue text) RETURNS void
LANGUAGE sql AS $$
    SELECT pg_notify('${schema}_wakeup', p_namespace || '/' || p_queue)
$$;

-- ------------------------------------------------------------------ policies

-- The policy in force for a queue: its own row, else its namespace's '*' row, else the row of that queue in every
-- namespace ('*', queue: what a Java queue's per-topic options write), else the '*' '*' row, else the Java defaults.
CREATE FUNCTION "${schema}".get_queue_policy(p_namespace text, p_queue text)
RETURNS "${schema}".queue_policies
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_policy "${schema}".queue_policies;
BEGIN
    SELECT p.* INTO v_policy
    FROM "${schema}".queue_policies p
    WHERE p.namespace IN (p_namespace, '*') AND p.queue IN (p_queue, '*')
    ORDER BY (p.namespace = '*'), (p.queue = '*')
    LIMIT 1;
    IF NOT FOUND THEN
        v_policy := ROW(p_namespace, p_queue, 20, interval '1 second', interval '1 hour', 2.0, 0.2,
                        interval '30 seconds', 1048576, false, timestamptz 'epoch', NULL);
    END IF;
    RETURN v_policy;
END
$$;

-- Creates or changes the policy of a queue ('*' as queue: every queue of the namespace, '*' as namespace: that queue
-- in every namespace). Parameters left null keep their current value (the default for a new row). Returns the
-- stored row.
CREATE FUNCTION "${schema}".set_queue_policy(
    p_namespace text, p_queue text,
    p_max_attempts integer DEFAULT NULL, p_backoff_base interval DEFAULT NULL, p_backoff_cap interval DEFAULT NULL,
    p_backoff_multiplier double precision DEFAULT NULL, p_backoff_jitter double precision DEFAULT NULL,
    p_visibility_timeout interval DEFAULT NULL, p_max_payload_bytes integer DEFAULT NULL,
    p_archive_completed boolean DEFAULT NULL)
RETURNS "${schema}".queue_policies
LANGUAGE plpgsql AS $$
DECLARE
    v_old "${schema}".queue_policies;
    v_new "${schema}".queue_policies;
BEGIN
    IF p_namespace IS DISTINCT FROM '*' OR "${schema}".current_tenant() IS NOT NULL THEN
        PERFORM "${schema}"._check_namespace(p_namespace);
    END IF;
    IF p_queue IS DISTINCT FROM '*' THEN
        PERFORM "${schema}"._check_name('p_queue', p_queue);
    END IF;
    SELECT * INTO v_old FROM "${schema}".queue_policies WHERE namespace = p_namespace AND queue = p_queue FOR UPDATE;
    IF NOT FOUND THEN
        v_old := ROW(p_namespace, p_queue, 20, interval '1 second', interval '1 hour', 2.0, 0.2,
                     interval '30 seconds', 1048576, false, NULL, NULL);
    END IF;
    v_new := ROW(p_namespace, p_queue,
                 coalesce(p_max_attempts, v_old.max_attempts),
                 coalesce(p_backoff_base, v_old.backoff_base),
                 coalesce(p_backoff_cap, v_old.backoff_cap),
                 coalesce(p_backoff_multiplier, v_old.backoff_multiplier),
                 coalesce(p_backoff_jitter, v_old.backoff_jitter),
                 coalesce(p_visibility_timeout, v_old.visibility_timeout),
                 coalesce(p_max_payload_bytes, v_old.max_payload_bytes),
                 coalesce(p_archive_completed, v_old.archive_completed),
                 statement_timestamp(), "${schema}".current_actor());
    PERFORM "${schema}"._check_range('p_max_attempts', v_new.max_attempts, 1, 1000, '1 to 1000');
    PERFORM "${schema}"._check_interval('p_backoff_base', v_new.backoff_base, interval '0', interval '365 days',
        '0 to 365 days');
    PERFORM "${schema}"._check_interval('p_backoff_cap', v_new.backoff_cap, v_new.backoff_base, interval '365 days',
        'from the base (' || v_new.backoff_base || ') to 365 days');
    IF NOT (v_new.backoff_multiplier BETWEEN 1 AND 100) THEN
        PERFORM "${schema}"._invalid('p_backoff_multiplier', v_new.backoff_multiplier::text, 'a multiplier from 1 to 100');
    END IF;
    IF NOT (v_new.backoff_jitter BETWEEN 0 AND 1) THEN
        PERFORM "${schema}"._invalid('p_backoff_jitter', v_new.backoff_jitter::text, 'a jitter fraction from 0 to 1');
    END IF;
    PERFORM "${schema}"._check_interval('p_visibility_timeout', v_new.visibility_timeout, interval '1 second',
        interval '24 hours', '1 s to 24 h');
    PERFORM "${schema}"._check_range('p_max_payload_bytes', v_new.max_payload_bytes, 2, 67108864, '2 to 67108864 bytes');
    INSERT INTO "${schema}".queue_policies AS p
    SELECT v_new.*
    ON CONFLICT (namespace, queue) DO UPDATE
        SET max_attempts = excluded.max_attempts, backoff_base = excluded.backoff_base,
            backoff_cap = excluded.backoff_cap, backoff_multiplier = excluded.backoff_multiplier,
            backoff_jitter = excluded.backoff_jitter, visibility_timeout = excluded.visibility_timeout,
            max_payload_bytes = excluded.max_payload_bytes, archive_completed = excluded.archive_completed,
            updated_at = excluded.updated_at, updated_by = excluded.updated_by;
    RETURN v_new;
END
$$;

CREATE FUNCTION "${schema}".delete_queue_policy(p_namespace text, p_queue text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    IF p_namespace IS DISTINCT FROM '*' OR "${schema}".current_tenant() IS NOT NULL THEN
        PERFORM "${schema}"._check_namespace(p_namespace);
    END IF;
    DELETE FROM "${schema}".queue_policies WHERE namespace = p_namespace AND queue = p_queue;
    RETURN FOUND;
END
$$;

-- ------------------------------------------------------------------ publishing

-- The insert every publish ends in (checked input). NULL when a live message of the queue holds the unique key:
-- ON CONFLICT on the partial unique index waits for a concurrent holder and inserts if that one goes away.
CREATE FUNCTION "${schema}"._insert_message(
    p_namespace text, p_queue text, p_payload json, p_headers jsonb, p_priority integer, p_max_attempts integer,
    p_unique_key text, p_run_at timestamptz, p_notify boolean)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint;
BEGIN
    INSERT INTO "${schema}".messages (namespace, topic, payload, headers, priority, max_attempts, unique_key, run_at,
                                      published_at, published_by)
    VALUES (p_namespace, p_queue, p_payload, p_headers, p_priority, p_max_attempts, p_unique_key, p_run_at,
            statement_timestamp(), "${schema}".current_actor())
    ON CONFLICT (namespace, topic, unique_key) WHERE unique_key IS NOT NULL DO NOTHING
    RETURNING id INTO v_id;
    IF v_id IS NULL THEN
        RETURN NULL;
    END IF;
    -- a probe first: the insert would write nothing for a known queue, but still costs more than the probe
    IF NOT EXISTS (SELECT 1 FROM "${schema}".topics t WHERE t.namespace = p_namespace AND t.topic = p_queue) THEN
        INSERT INTO "${schema}".topics (namespace, topic, first_published_at)
        VALUES (p_namespace, p_queue, statement_timestamp())
        ON CONFLICT (namespace, topic) DO NOTHING;
    END IF;
    IF "${schema}"._notify_wanted(p_notify) THEN
        PERFORM "${schema}"._wake(p_namespace, p_queue);
    END IF;
    RETURN v_id;
END
$$;

-- The due time of a push: p_run_at when given (p_delay is then ignored, as in the Java API), else now + p_delay.
CREATE FUNCTION "${schema}"._run_at(p_delay interval, p_run_at timestamptz) RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF p_run_at IS NOT NULL THEN
        PERFORM "${schema}"._check_instant('p_run_at', p_run_at);
        RETURN p_run_at;
    END IF;
    IF p_delay IS NOT NULL THEN
        PERFORM "${schema}"._check_interval('p_delay', p_delay, interval '0', interval '365 days', '0 to 365 days');
    END IF;
    RETURN statement_timestamp() + coalesce("${schema}"._micros(p_delay), 0) * interval '1 microsecond';
END
$$;

CREATE FUNCTION "${schema}".push(
    p_namespace text, p_queue text, p_payload json,
    p_delay interval DEFAULT NULL, p_run_at timestamptz DEFAULT NULL, p_priority integer DEFAULT 0,
    p_max_attempts integer DEFAULT NULL, p_unique_key text DEFAULT NULL, p_headers jsonb DEFAULT '{}',
    p_notify boolean DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_policy "${schema}".queue_policies;
    v_run_at timestamptz;
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    PERFORM "${schema}"._check_name('p_queue', p_queue);
    v_policy := "${schema}".get_queue_policy(p_namespace, p_queue);
    PERFORM "${schema}"._check_payload('p_payload', p_payload, v_policy.max_payload_bytes);
    v_run_at := "${schema}"._run_at(p_delay, p_run_at);
    PERFORM "${schema}"._check_range('p_priority', coalesce(p_priority, 0), 0, 9, '0 (first) to 9 (last)');
    IF p_max_attempts IS NOT NULL THEN
        PERFORM "${schema}"._check_range('p_max_attempts', p_max_attempts, 1, 1000, '1 to 1000');
    END IF;
    IF p_unique_key IS NOT NULL THEN
        PERFORM "${schema}"._check_text('p_unique_key', p_unique_key, 255);
    END IF;
    PERFORM "${schema}"._check_headers('p_headers', coalesce(p_headers, '{}'), 32);
    RETURN "${schema}"._insert_message(p_namespace, p_queue, p_payload, coalesce(p_headers, '{}'),
        coalesce(p_priority, 0), coalesce(p_max_attempts, v_policy.max_attempts), p_unique_key, v_run_at, p_notify);
END
$$;

-- One row per payload, in the caller's order: its ordinal (from 1) and its id, or NULL when its unique key was
-- held (by a live message or by an earlier payload of the same batch). All or nothing: one bad payload stores none.
-- Ids are drawn in the caller's order, so equal priority and due time claim in that order. Rows are inserted in
-- key order, so two batches with overlapping keys lock them in the same order and cannot deadlock.
CREATE FUNCTION "${schema}".push_batch(
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
    v_ids      bigint[];
    v_i        integer;
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
    WITH input AS MATERIALIZED (
        SELECT w.ord, w.payload, w.unique_key, w.first_of_key, nextval('"${schema}".message_ids') AS new_id
        FROM (
            SELECT u.ord::integer AS ord, u.payload, k.unique_key,
                   (k.unique_key IS NULL OR u.ord = min(u.ord) OVER (PARTITION BY k.unique_key)) AS first_of_key
            FROM unnest(p_payloads) WITH ORDINALITY AS u(payload, ord)
            LEFT JOIN unnest(p_unique_keys) WITH ORDINALITY AS k(unique_key, ord) ON k.ord = u.ord
        ) w
        ORDER BY w.ord
    ),
    inserted AS (
        INSERT INTO "${schema}".messages (id, namespace, topic, payload, headers, priority, max_attempts, unique_key,
                                          run_at, published_at, published_by)
        SELECT x.new_id, p_namespace, p_queue, x.payload, coalesce(p_headers, '{}'), coalesce(p_priority, 0),
               coalesce(p_max_attempts, v_policy.max_attempts), x.unique_key, v_run_at, statement_timestamp(),
               "${schema}".current_actor()
        FROM input x
        WHERE x.first_of_key
        ORDER BY x.unique_key NULLS LAST, x.ord
        ON CONFLICT (namespace, topic, unique_key) WHERE unique_key IS NOT NULL DO NOTHING
        RETURNING messages.id
    )
    SELECT array_agg(CASE WHEN x.new_id IN (SELECT y.id FROM inserted y) THEN x.new_id END ORDER BY x.ord)
    INTO v_ids
    FROM input x;
    -- the topic registry and the wake-up, once for the whole batch
    IF cardinality(array_remove(v_ids, NULL)) > 0 THEN
        INSERT INTO "${schema}".topics (namespace, topic, first_published_at)
        VALUES (p_namespace, p_queue, statement_timestamp())
        ON CONFLICT (namespace, topic) DO NOTHING;
        IF "${schema}"._notify_wanted(p_notify) THEN
            PERFORM "${schema}"._wake(p_namespace, p_queue);
        END IF;
    END IF;
    RETURN QUERY SELECT o::integer, v_ids[o] FROM generate_subscripts(v_ids, 1) AS o ORDER BY o;
END
$$;

-- ------------------------------------------------------------------ dead-lettering and rescue

-- Moves one live message (already locked by the caller) to the dead letters with its error.
CREATE FUNCTION "${schema}"._bury(p_id bigint, p_error text, p_failed_by text) RETURNS void
LANGUAGE sql AS $$
    WITH buried AS (
        DELETE FROM "${schema}".messages m WHERE m.id = p_id RETURNING m.*
    )
    INSERT INTO "${schema}".dead_letters (id, namespace, topic, payload, headers, priority, attempts, max_attempts,
                                          unique_key, last_error, published_at, failed_at, published_by, failed_by)
    SELECT b.id, b.namespace, b.topic, b.payload, b.headers, b.priority, b.attempts, b.max_attempts, b.unique_key,
           p_error, b.published_at, statement_timestamp(), b.published_by, p_failed_by
    FROM buried b
$$;

-- Expired leases back to pending, or to the dead letters when the expired attempt was the last
-- (Lifecycle.attemptsLeft), oldest first, at most p_limit. SKIP LOCKED: a rescue never waits for a worker
-- acting on the same row. The same statement as the Java engine's rescue. pull calls it for its namespace.
CREATE FUNCTION "${schema}".rescue_expired(p_namespace text DEFAULT NULL, p_limit integer DEFAULT 1000)
RETURNS TABLE (requeued bigint, dead_lettered bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    IF p_namespace IS NOT NULL OR "${schema}".current_tenant() IS NOT NULL THEN
        PERFORM "${schema}"._check_namespace(p_namespace);
    END IF;
    PERFORM "${schema}"._check_range('p_limit', p_limit, 1, 10000, '1 to 10000');
    RETURN QUERY
    WITH expired AS MATERIALIZED (
        SELECT m.id, m.attempts >= m.max_attempts AS exhausted
        FROM "${schema}".messages m
        WHERE m.state = 'running'
          AND m.lease_until < statement_timestamp()
          AND (p_namespace IS NULL OR m.namespace = p_namespace)
        ORDER BY m.lease_until
        LIMIT p_limit
        FOR UPDATE SKIP LOCKED
    ),
    requeued AS (
        UPDATE "${schema}".messages m
        SET state = 'pending', run_at = statement_timestamp(),
            worker = NULL, lease_token = NULL, lease_until = NULL,
            last_error = 'lease expired'
        FROM expired e
        WHERE m.id = e.id AND NOT e.exhausted
        RETURNING m.namespace, m.topic
    ),
    buried AS (
        DELETE FROM "${schema}".messages m
        USING expired e
        WHERE m.id = e.id AND e.exhausted
        RETURNING m.*
    ),
    dead AS (
        INSERT INTO "${schema}".dead_letters (id, namespace, topic, payload, headers, priority, attempts, max_attempts,
                                              unique_key, last_error, published_at, failed_at, published_by)
        SELECT id, namespace, topic, payload, headers, priority, attempts, max_attempts, unique_key,
               'lease expired on its last attempt', published_at, statement_timestamp(), published_by
        FROM buried
    ),
    notified AS (
        SELECT "${schema}"._wake(t.namespace, t.topic)
        FROM (SELECT DISTINCT namespace, topic FROM requeued) t
        WHERE "${schema}"._notify_wanted(NULL)
    )
    SELECT (SELECT count(*) FROM requeued), (SELECT count(*) FROM buried) + 0 * (SELECT count(*) FROM notified);
END
$$;

-- ------------------------------------------------------------------ pulling

-- The Java engine's claim: per queue in the given order, the first due pending rows in claim order (priority,
-- due time, id) from the claim index, locked with FOR UPDATE SKIP LOCKED so two pulls never get the same row,
-- then leased under one new token. Expired leases of the namespace are rescued first.
CREATE FUNCTION "${schema}"._claim(p_namespace text, p_queues text[], p_worker_id text,
                                   p_visibility_timeout interval, p_limit integer)
RETURNS TABLE (id bigint, queue text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, lease_token bigint, lease_until timestamptz, published_at timestamptz,
               run_at timestamptz, worker_id text, unique_key text, published_by text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_worker     text := coalesce(p_worker_id, 'sql-' || pg_backend_pid());
    v_visibility interval;
    v_token      bigint;
    v_seen       text[] := '{}';
    v_queue      text;
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    IF p_queues IS NULL OR cardinality(p_queues) = 0 OR cardinality(p_queues) > 64 THEN
        PERFORM "${schema}"._invalid('p_queues', coalesce(p_queues::text, 'null'), '1 to 64 queues');
    END IF;
    FOREACH v_queue IN ARRAY p_queues LOOP
        PERFORM "${schema}"._check_name('p_queue', v_queue);
        IF v_queue = ANY (v_seen) THEN
            PERFORM "${schema}"._invalid('p_queues', p_queues::text, 'each queue once, but ' || v_queue || ' repeats');
        END IF;
        v_seen := v_seen || v_queue;
    END LOOP;
    PERFORM "${schema}"._check_text('p_worker_id', v_worker, 128);
    PERFORM "${schema}"._check_range('p_limit', p_limit, 1, 1000, '1 to 1000');
    v_visibility := coalesce(p_visibility_timeout, ("${schema}".get_queue_policy(p_namespace, p_queues[1])).visibility_timeout);
    PERFORM "${schema}"._check_interval('p_visibility_timeout', v_visibility, interval '1 second', interval '24 hours',
        '1 s to 24 h');
    PERFORM "${schema}".rescue_expired(p_namespace, 1000);
    -- random and never zero, like the Java engine's tokens (60 random bits of a version 4 UUID)
    LOOP
        v_token := ('x' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 16))::bit(64)::bigint;
        EXIT WHEN v_token <> 0;
    END LOOP;
    RETURN QUERY
    WITH picked AS MATERIALIZED (
        SELECT c.id, t.ord
        FROM unnest(p_queues) WITH ORDINALITY AS t(topic, ord)
        CROSS JOIN LATERAL (
            SELECT m.id, m.priority, m.run_at
            FROM "${schema}".messages m
            WHERE m.namespace = p_namespace
              AND m.topic = t.topic
              AND m.state = 'pending'
              AND m.run_at <= statement_timestamp()
            ORDER BY m.priority, m.run_at, m.id
            LIMIT p_limit
            FOR UPDATE SKIP LOCKED
        ) c
        ORDER BY t.ord, c.priority, c.run_at, c.id
        LIMIT p_limit
    ),
    claimed AS (
        UPDATE "${schema}".messages m
        SET state = 'running',
            attempts = m.attempts + 1,
            worker = v_worker,
            lease_token = v_token,
            lease_until = statement_timestamp() + "${schema}"._micros(v_visibility) * interval '1 microsecond'
        WHERE m.id = ANY (ARRAY(SELECT p.id FROM picked p))
        RETURNING m.id, m.topic, m.payload, m.headers, m.priority::integer AS priority, m.attempts, m.max_attempts,
                  m.lease_token, m.lease_until, m.published_at, m.run_at, m.worker, m.unique_key, m.published_by
    )
    SELECT c.id, c.topic::text, c.payload, c.headers, c.priority, c.attempts, c.max_attempts, c.lease_token,
           c.lease_until, c.published_at, c.run_at, c.worker, c.unique_key::text, c.published_by
    FROM claimed c JOIN picked p ON p.id = c.id
    ORDER BY p.ord, c.priority, c.run_at, c.id;
END
$$;

CREATE FUNCTION "${schema}".pull(p_namespace text, p_queue text, p_worker_id text DEFAULT NULL,
                                 p_visibility_timeout interval DEFAULT NULL)
RETURNS TABLE (id bigint, queue text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, lease_token bigint, lease_until timestamptz, published_at timestamptz,
               run_at timestamptz, worker_id text, unique_key text, published_by text)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_name('p_queue', p_queue);
    RETURN QUERY SELECT * FROM "${schema}"._claim(p_namespace, ARRAY[p_queue], p_worker_id, p_visibility_timeout, 1);
END
$$;

CREATE FUNCTION "${schema}".pull_batch(p_namespace text, p_queue text, p_limit integer DEFAULT 10,
                                       p_worker_id text DEFAULT NULL, p_visibility_timeout interval DEFAULT NULL)
RETURNS TABLE (id bigint, queue text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, lease_token bigint, lease_until timestamptz, published_at timestamptz,
               run_at timestamptz, worker_id text, unique_key text, published_by text)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_name('p_queue', p_queue);
    RETURN QUERY SELECT * FROM "${schema}"._claim(p_namespace, ARRAY[p_queue], p_worker_id, p_visibility_timeout, p_limit);
END
$$;

CREATE FUNCTION "${schema}".pull_any(p_namespace text, p_queues text[], p_limit integer DEFAULT 1,
                                     p_worker_id text DEFAULT NULL, p_visibility_timeout interval DEFAULT NULL)
RETURNS TABLE (id bigint, queue text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, lease_token bigint, lease_until timestamptz, published_at timestamptz,
               run_at timestamptz, worker_id text, unique_key text, published_by text)
LANGUAGE sql AS $$
    SELECT * FROM "${schema}"._claim(p_namespace, p_queues, p_worker_id, p_visibility_timeout, p_limit)
$$;

-- ------------------------------------------------------------------ settling

-- The running message p_id of the namespace, locked: under that lease token when one is given (the Java guard),
-- else whoever holds it. NULL when not running there (pending, dead, gone, another namespace, another lease).
CREATE FUNCTION "${schema}"._held(p_namespace text, p_id bigint, p_lease_token bigint)
RETURNS "${schema}".messages
LANGUAGE plpgsql AS $$
DECLARE
    v_row "${schema}".messages;
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    IF p_id IS NULL THEN
        PERFORM "${schema}"._invalid('p_id', 'null', 'a message id');
    END IF;
    SELECT m.* INTO v_row
    FROM "${schema}".messages m
    WHERE m.id = p_id AND m.namespace = p_namespace AND m.state = 'running'
      AND (p_lease_token IS NULL OR m.lease_token = p_lease_token)
    FOR UPDATE;
    RETURN v_row;
END
$$;

-- Completes the running messages among p_ids (each under its token when p_lease_tokens is given): they leave the
-- hot table (archived when the queue's policy says so) and count in a counter shard, like the Java ack.
CREATE FUNCTION "${schema}"._complete(p_namespace text, p_ids bigint[], p_lease_tokens bigint[])
RETURNS SETOF bigint
LANGUAGE sql AS $$
    WITH held AS MATERIALIZED (
        SELECT h.id, h.lease_token
        FROM (SELECT u.id, u.token FROM unnest(p_ids, p_lease_tokens) AS u(id, token) ORDER BY u.id) l
        CROSS JOIN LATERAL (
            SELECT m.id, m.lease_token
            FROM "${schema}".messages m
            WHERE m.id = l.id
              AND m.namespace = p_namespace
              AND m.state = 'running'
              AND (l.token IS NULL OR m.lease_token = l.token)
            LIMIT 1
        ) h
    ),
    done AS (
        DELETE FROM "${schema}".messages m
        USING held h
        WHERE m.id = h.id AND m.lease_token = h.lease_token
        RETURNING m.*
    ),
    archived AS (
        INSERT INTO "${schema}".completed_messages (id, namespace, topic, payload, headers, priority, attempts,
                                                    max_attempts, unique_key, worker, published_at, completed_at,
                                                    published_by)
        SELECT d.id, d.namespace, d.topic, d.payload, d.headers, d.priority, d.attempts, d.max_attempts,
               d.unique_key, d.worker, d.published_at, statement_timestamp(), d.published_by
        FROM done d
        WHERE ("${schema}".get_queue_policy(d.namespace, d.topic)).archive_completed
    ),
    counted AS (
        INSERT INTO "${schema}".completed_counters AS c (namespace, topic, shard, completed)
        SELECT d.namespace, d.topic, (pg_backend_pid() % 16)::smallint, count(*)
        FROM done d
        GROUP BY d.namespace, d.topic
        ORDER BY d.namespace, d.topic
        ON CONFLICT (namespace, topic, shard) DO UPDATE SET completed = c.completed + excluded.completed
    )
    SELECT d.id FROM done d
$$;

CREATE FUNCTION "${schema}".ack(p_namespace text, p_id bigint, p_lease_token bigint DEFAULT NULL) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    IF p_id IS NULL THEN
        PERFORM "${schema}"._invalid('p_id', 'null', 'a message id');
    END IF;
    RETURN EXISTS (SELECT 1 FROM "${schema}"._complete(p_namespace, ARRAY[p_id],
                                                       CASE WHEN p_lease_token IS NULL THEN NULL ELSE ARRAY[p_lease_token] END));
END
$$;

-- One row per id, in the caller's order: whether that message was acknowledged.
CREATE FUNCTION "${schema}".ack_batch(p_namespace text, p_ids bigint[], p_lease_tokens bigint[] DEFAULT NULL)
RETURNS TABLE (id bigint, acked boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    IF p_ids IS NULL OR cardinality(p_ids) > 10000 OR array_position(p_ids, NULL) IS NOT NULL THEN
        PERFORM "${schema}"._invalid('p_ids', coalesce(cardinality(p_ids) || ' ids', 'null'),
            'an array of at most 10000 message ids, none null');
    END IF;
    IF p_lease_tokens IS NOT NULL AND cardinality(p_lease_tokens) <> cardinality(p_ids) THEN
        PERFORM "${schema}"._invalid('p_lease_tokens', cardinality(p_lease_tokens) || ' tokens',
            'one lease token per id: ' || cardinality(p_ids));
    END IF;
    RETURN QUERY
    WITH done AS MATERIALIZED (SELECT c AS id FROM "${schema}"._complete(p_namespace, p_ids, p_lease_tokens) c)
    SELECT u.id, u.id IN (SELECT d.id FROM done d)
    FROM unnest(p_ids) WITH ORDINALITY AS u(id, ord)
    ORDER BY u.ord;
END
$$;

-- A failure asking for another attempt (Lifecycle.decide with RetryAsked): pending again after p_delay, or after
-- the queue policy's backoff when p_delay is null. A message on its last attempt becomes a dead letter instead.
-- True when the message was running (under p_lease_token when given) and is now pending or dead.
CREATE FUNCTION "${schema}".nack(p_namespace text, p_id bigint, p_error text DEFAULT NULL,
                                 p_delay interval DEFAULT NULL, p_lease_token bigint DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    v_row    "${schema}".messages;
    v_policy "${schema}".queue_policies;
    v_delay  interval;
BEGIN
    IF p_delay IS NOT NULL THEN
        PERFORM "${schema}"._check_interval('p_delay', p_delay, interval '0', interval '365 days', '0 to 365 days');
    END IF;
    v_row := "${schema}"._held(p_namespace, p_id, p_lease_token);
    IF v_row.id IS NULL THEN
        RETURN false;
    END IF;
    IF v_row.attempts >= v_row.max_attempts THEN
        PERFORM "${schema}"._bury(v_row.id, "${schema}"._error_text(p_error), "${schema}".current_actor());
        RETURN true;
    END IF;
    IF p_delay IS NOT NULL THEN
        v_delay := p_delay;
    ELSE
        v_policy := "${schema}".get_queue_policy(v_row.namespace, v_row.topic);
        v_delay := "${schema}".backoff_delay(v_row.attempts, v_policy.backoff_base, v_policy.backoff_cap,
                                             v_policy.backoff_multiplier, v_policy.backoff_jitter, random());
    END IF;
    UPDATE "${schema}".messages m
    SET state = 'pending',
        run_at = statement_timestamp() + "${schema}"._micros(v_delay) * interval '1 microsecond',
        worker = NULL, lease_token = NULL, lease_until = NULL,
        last_error = "${schema}"._error_text(p_error)
    WHERE m.id = v_row.id;
    IF "${schema}"._notify_wanted(NULL) THEN
        PERFORM "${schema}"._wake(v_row.namespace, v_row.topic);
    END IF;
    RETURN true;
END
$$;

-- Gives the message up at once: a dead letter with the error, whatever attempts are left.
CREATE FUNCTION "${schema}".fail(p_namespace text, p_id bigint, p_error text DEFAULT NULL,
                                 p_lease_token bigint DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    v_row "${schema}".messages;
BEGIN
    v_row := "${schema}"._held(p_namespace, p_id, p_lease_token);
    IF v_row.id IS NULL THEN
        RETURN false;
    END IF;
    PERFORM "${schema}"._bury(v_row.id, "${schema}"._error_text(p_error), "${schema}".current_actor());
    RETURN true;
END
$$;

-- The lease then ends p_extension from now (not from its old end), as the Java extend does.
CREATE FUNCTION "${schema}".extend_visibility(p_namespace text, p_id bigint, p_extension interval,
                                              p_lease_token bigint DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    v_row "${schema}".messages;
BEGIN
    PERFORM "${schema}"._check_interval('p_extension', p_extension, interval '1 second', interval '24 hours', '1 s to 24 h');
    v_row := "${schema}"._held(p_namespace, p_id, p_lease_token);
    IF v_row.id IS NULL THEN
        RETURN false;
    END IF;
    UPDATE "${schema}".messages m
    SET lease_until = statement_timestamp() + "${schema}"._micros(p_extension) * interval '1 microsecond'
    WHERE m.id = v_row.id;
    RETURN true;
END
$$;

-- ------------------------------------------------------------------ reading

-- Per queue of the namespace (every queue that ever held a message), as the Java stats.
CREATE FUNCTION "${schema}".get_queue_stats(p_namespace text)
RETURNS TABLE (queue text, pending bigint, running bigint, completed bigint, dead bigint, total bigint)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    RETURN QUERY
    SELECT t.topic::text,
           coalesce(m.pending, 0), coalesce(m.running, 0), coalesce(c.completed, 0), coalesce(d.dead, 0),
           coalesce(m.pending, 0) + coalesce(m.running, 0) + coalesce(c.completed, 0) + coalesce(d.dead, 0)
    FROM "${schema}".topics t
    LEFT JOIN (SELECT x.topic,
                      count(*) FILTER (WHERE x.state = 'pending') AS pending,
                      count(*) FILTER (WHERE x.state = 'running') AS running
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

-- The namespace's totals: total_jobs counts pending, running, completed and dead messages.
CREATE FUNCTION "${schema}".get_stats(p_namespace text)
RETURNS TABLE (total_jobs bigint, pending bigint, running bigint, completed bigint, dead bigint, total_queues bigint)
LANGUAGE sql STABLE AS $$
    SELECT coalesce(sum(s.total), 0)::bigint, coalesce(sum(s.pending), 0)::bigint, coalesce(sum(s.running), 0)::bigint,
           coalesce(sum(s.completed), 0)::bigint, coalesce(sum(s.dead), 0)::bigint, count(*)
    FROM "${schema}".get_queue_stats(p_namespace) s
$$;

-- A live or dead message of the namespace by id (completed ones are gone), as the Java inspect.
CREATE FUNCTION "${schema}".inspect(p_namespace text, p_id bigint)
RETURNS TABLE (id bigint, queue text, state text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, unique_key text, published_at timestamptz, run_at timestamptz,
               lease_until timestamptz, worker_id text, last_error text, failed_at timestamptz, published_by text,
               failed_by text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    IF p_id IS NULL THEN
        PERFORM "${schema}"._invalid('p_id', 'null', 'a message id');
    END IF;
    RETURN QUERY
    SELECT m.id, m.topic::text, m.state, m.payload, m.headers, m.priority::integer, m.attempts, m.max_attempts,
           m.unique_key::text, m.published_at, m.run_at, m.lease_until, m.worker, m.last_error, NULL::timestamptz,
           m.published_by, NULL::text
    FROM "${schema}".messages m
    WHERE m.namespace = p_namespace AND m.id = p_id
    UNION ALL
    SELECT d.id, d.topic::text, 'dead', d.payload, d.headers, d.priority::integer, d.attempts, d.max_attempts,
           d.unique_key::text, d.published_at, NULL, NULL, NULL, d.last_error, d.failed_at, d.published_by, d.failed_by
    FROM "${schema}".dead_letters d
    WHERE d.namespace = p_namespace AND d.id = p_id;
END
$$;

-- ------------------------------------------------------------------ dead letters

-- Oldest first by id, after p_after_id (pass the last id of the previous page), optionally of one queue.
CREATE FUNCTION "${schema}".list_dead_letters(p_namespace text, p_queue text DEFAULT NULL, p_after_id bigint DEFAULT 0,
                                              p_limit integer DEFAULT 50)
RETURNS TABLE (id bigint, queue text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, unique_key text, last_error text, published_at timestamptz,
               failed_at timestamptz, published_by text, failed_by text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    IF p_queue IS NOT NULL THEN
        PERFORM "${schema}"._check_name('p_queue', p_queue);
    END IF;
    PERFORM "${schema}"._check_range('p_limit', p_limit, 1, 1000, '1 to 1000');
    RETURN QUERY
    SELECT d.id, d.topic::text, d.payload, d.headers, d.priority::integer, d.attempts, d.max_attempts,
           d.unique_key::text, d.last_error, d.published_at, d.failed_at, d.published_by, d.failed_by
    FROM "${schema}".dead_letters d
    WHERE d.namespace = p_namespace
      AND (p_queue IS NULL OR d.topic = p_queue)
      AND d.id > coalesce(p_after_id, 0)
    ORDER BY d.id
    LIMIT p_limit;
END
$$;

-- Which dead letters a redrive or purge takes: by ids, or by queue, or (neither) the whole namespace.
CREATE FUNCTION "${schema}"._check_dead_letter_selection(p_namespace text, p_queue text, p_ids bigint[], p_limit integer)
RETURNS void
LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    IF p_queue IS NOT NULL AND p_ids IS NOT NULL THEN
        PERFORM "${schema}"._invalid('p_ids', p_ids::text, 'either p_ids or p_queue, not both');
    END IF;
    IF p_queue IS NOT NULL THEN
        PERFORM "${schema}"._check_name('p_queue', p_queue);
    END IF;
    IF p_ids IS NOT NULL AND (cardinality(p_ids) > 10000 OR array_position(p_ids, NULL) IS NOT NULL) THEN
        PERFORM "${schema}"._invalid('p_ids', cardinality(p_ids) || ' ids', 'at most 10000 message ids, none null');
    END IF;
    PERFORM "${schema}"._check_range('p_limit', p_limit, 1, 10000, '1 to 10000');
END
$$;

-- Dead letters back to pending with their id, due now, attempts from zero, last error kept, at most p_limit of
-- them (lowest ids first, after p_after_id). One whose unique key a live message holds stays dead. For a whole
-- queue, call again with p_after_id := last_id while examined = p_limit: each call is a bounded batch.
CREATE FUNCTION "${schema}".redrive_dead_letters(p_namespace text, p_queue text DEFAULT NULL, p_ids bigint[] DEFAULT NULL,
                                                 p_after_id bigint DEFAULT 0, p_limit integer DEFAULT 1000)
RETURNS TABLE (redriven integer, examined integer, last_id bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_moved    bigint[];
    v_examined integer;
    v_last     bigint;
BEGIN
    PERFORM "${schema}"._check_dead_letter_selection(p_namespace, p_queue, p_ids, p_limit);
    WITH candidates AS MATERIALIZED (
        SELECT d.ctid AS row_ctid, d.*
        FROM "${schema}".dead_letters d
        WHERE d.namespace = p_namespace
          AND (p_ids IS NULL OR d.id = ANY (p_ids))
          AND (p_queue IS NULL OR d.topic = p_queue)
          AND d.id > coalesce(p_after_id, 0)
        ORDER BY d.id
        LIMIT p_limit
        FOR UPDATE
    ),
    moved AS (
        INSERT INTO "${schema}".messages (id, namespace, topic, payload, headers, priority, attempts, max_attempts,
                                          unique_key, run_at, published_at, last_error, published_by, redriven_by)
        SELECT c.id, c.namespace, c.topic, c.payload, c.headers, c.priority, 0, c.max_attempts, c.unique_key,
               statement_timestamp(), c.published_at, c.last_error, c.published_by, "${schema}".current_actor()
        FROM candidates c
        ORDER BY c.id
        ON CONFLICT (namespace, topic, unique_key) WHERE unique_key IS NOT NULL DO NOTHING
        RETURNING id, namespace, topic
    ),
    removed AS (
        DELETE FROM "${schema}".dead_letters d
        WHERE d.ctid = ANY (ARRAY(SELECT c.row_ctid FROM candidates c WHERE c.id IN (SELECT x.id FROM moved x)))
        RETURNING d.id
    ),
    notified AS (
        SELECT "${schema}"._wake(t.namespace, t.topic)
        FROM (SELECT DISTINCT x.namespace, x.topic FROM moved x) t
        WHERE "${schema}"._notify_wanted(NULL)
    )
    SELECT ARRAY(SELECT r.id FROM removed r ORDER BY r.id), (SELECT count(*) FROM candidates)::integer,
           (SELECT max(c.id) FROM candidates c) + 0 * (SELECT count(*) FROM notified)
    INTO v_moved, v_examined, v_last;
    IF cardinality(v_moved) > 0 THEN
        INSERT INTO "${schema}".audit_log (at, namespace, actor, action, subject, ids, count)
        VALUES (statement_timestamp(), p_namespace, "${schema}".current_actor(), 'redrive_dead_letters', p_queue,
                v_moved, cardinality(v_moved));
    END IF;
    RETURN QUERY SELECT cardinality(v_moved), v_examined, coalesce(v_last, coalesce(p_after_id, 0));
END
$$;

-- Deletes at most p_limit dead letters (lowest ids first): by ids, by queue, or the namespace's. Returns how many,
-- so a caller purging a large queue calls again until it returns less than p_limit. Recorded in audit_log.
CREATE FUNCTION "${schema}".purge_dead_letters(p_namespace text, p_queue text DEFAULT NULL, p_ids bigint[] DEFAULT NULL,
                                               p_limit integer DEFAULT 1000)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    v_purged bigint[];
BEGIN
    PERFORM "${schema}"._check_dead_letter_selection(p_namespace, p_queue, p_ids, p_limit);
    WITH purged AS (
        DELETE FROM "${schema}".dead_letters
        WHERE namespace = p_namespace
          AND id = ANY (ARRAY(
              SELECT d.id FROM "${schema}".dead_letters d
              WHERE d.namespace = p_namespace
                AND (p_ids IS NULL OR d.id = ANY (p_ids))
                AND (p_queue IS NULL OR d.topic = p_queue)
              ORDER BY d.id
              LIMIT p_limit))
        RETURNING id
    )
    SELECT ARRAY(SELECT p.id FROM purged p ORDER BY p.id) INTO v_purged;
    IF cardinality(v_purged) > 0 THEN
        INSERT INTO "${schema}".audit_log (at, namespace, actor, action, subject, ids, count)
        VALUES (statement_timestamp(), p_namespace, "${schema}".current_actor(), 'purge_dead_letters', p_queue,
                v_purged, cardinality(v_purged));
    END IF;
    RETURN cardinality(v_purged);
END
$$;

-- ------------------------------------------------------------------ schedules

-- An instant as Java's Instant.toString() writes it (the queue-due-at header and the unique key of fired messages
-- must be the same text whichever ticker fired).
CREATE FUNCTION "${schema}"._instant_text(p_at timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')
           || CASE WHEN f.micros = 0 THEN ''
                   WHEN f.micros % 1000 = 0 THEN '.' || lpad((f.micros / 1000)::text, 3, '0')
                   ELSE '.' || lpad(f.micros::text, 6, '0') END
           || 'Z'
    FROM (SELECT (extract(microseconds FROM p_at)::bigint % 1000000) AS micros) f
$$;

-- The first due time strictly after p_after, within the optional start and end (DueTimes.firstAfter).
-- Intervals: start_at + k * interval for k >= 0, or, without a start, created_at + k * interval for k >= 1.
CREATE FUNCTION "${schema}"._schedule_next_after(p_schedule "${schema}".schedules, p_after timestamptz)
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
CREATE FUNCTION "${schema}"._schedule_latest(p_schedule "${schema}".schedules, p_at timestamptz, p_lower timestamptz)
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

CREATE FUNCTION "${schema}"._schedule_changed(p_old "${schema}".schedules, p_new "${schema}".schedules) RETURNS boolean
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
CREATE FUNCTION "${schema}"._prepare_schedule(p_schedule "${schema}".schedules) RETURNS "${schema}".schedules
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

-- Creates the schedule, or, when the name exists, keeps it ('unchanged': same definition, next run kept) or
-- replaces its definition ('updated': pause state kept, next run computed anew). Like the Java create.
CREATE FUNCTION "${schema}".create_schedule(
    p_namespace text, p_name text, p_queue text, p_payload json,
    p_cron_expression text DEFAULT NULL, p_every_interval interval DEFAULT NULL, p_timezone text DEFAULT 'UTC',
    p_headers jsonb DEFAULT '{}', p_priority integer DEFAULT 0, p_max_attempts integer DEFAULT NULL,
    p_start_at timestamptz DEFAULT NULL, p_end_at timestamptz DEFAULT NULL,
    p_missed_policy text DEFAULT 'FIRE_ONCE', p_missed_bound integer DEFAULT 1,
    p_missed_grace interval DEFAULT interval '1 minute')
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    s     "${schema}".schedules;
    v_old "${schema}".schedules;
    v_now timestamptz := statement_timestamp();
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    PERFORM "${schema}"._check_name('p_queue', p_queue);
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
    INSERT INTO "${schema}".schedules SELECT s.* ON CONFLICT (namespace, name) DO NOTHING;
    IF FOUND THEN
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

-- Stores a changed definition over an existing row: identity, creation time, pause state and last run kept.
CREATE FUNCTION "${schema}"._replace_schedule(p_old "${schema}".schedules, p_new "${schema}".schedules) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    s "${schema}".schedules := p_new;
BEGIN
    s.created_at := p_old.created_at;
    s.next_run_at := "${schema}"._schedule_next_after(s, statement_timestamp() - interval '1 microsecond');
    UPDATE "${schema}".schedules x
    SET cron = s.cron, interval_micros = s.interval_micros, time_zone = s.time_zone, topic = s.topic,
        payload = s.payload, headers = s.headers, priority = s.priority, max_attempts = s.max_attempts,
        start_at = s.start_at, end_at = s.end_at, missed_policy = s.missed_policy, missed_bound = s.missed_bound,
        missed_grace_micros = s.missed_grace_micros, next_run_at = s.next_run_at,
        updated_at = statement_timestamp(), updated_by = "${schema}".current_actor()
    WHERE x.namespace = p_old.namespace AND x.name = p_old.name;
END
$$;

CREATE FUNCTION "${schema}"._schedule_not_found(p_namespace text, p_name text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'QU003',
        MESSAGE = format('schedule %s not found in namespace %s', "${schema}"._shown(p_name), "${schema}"._shown(p_namespace)),
        COLUMN = 'p_name';
END
$$;

-- Changes the given parts of a schedule's definition (parameters left null keep theirs, a cron expression
-- replaces an interval and the other way round): 'updated' or 'unchanged', QU003 for an unknown name.
CREATE FUNCTION "${schema}".update_schedule(
    p_namespace text, p_name text, p_queue text DEFAULT NULL, p_payload json DEFAULT NULL,
    p_cron_expression text DEFAULT NULL, p_every_interval interval DEFAULT NULL, p_timezone text DEFAULT NULL,
    p_headers jsonb DEFAULT NULL, p_priority integer DEFAULT NULL, p_max_attempts integer DEFAULT NULL,
    p_start_at timestamptz DEFAULT NULL, p_end_at timestamptz DEFAULT NULL,
    p_missed_policy text DEFAULT NULL, p_missed_bound integer DEFAULT NULL, p_missed_grace interval DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql AS $$
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

CREATE FUNCTION "${schema}".delete_schedule(p_namespace text, p_name text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    PERFORM "${schema}"._check_name('p_name', p_name);
    DELETE FROM "${schema}".schedules x WHERE x.namespace = p_namespace AND x.name = p_name;
    RETURN FOUND;
END
$$;

-- By name in code point order, as the Java list.
CREATE FUNCTION "${schema}".list_schedules(p_namespace text)
RETURNS TABLE (name text, queue text, cron_expression text, every_interval interval, timezone text, payload json,
               headers jsonb, priority integer, max_attempts integer, start_at timestamptz, end_at timestamptz,
               missed_policy text, missed_bound integer, missed_grace interval, paused boolean,
               next_run_at timestamptz, last_run_at timestamptz, created_at timestamptz, updated_at timestamptz,
               paused_by text, updated_by text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    RETURN QUERY
    SELECT s.name::text, s.topic::text, s.cron, s.interval_micros * interval '1 microsecond', s.time_zone, s.payload,
           s.headers, s.priority::integer, s.max_attempts, s.start_at, s.end_at, s.missed_policy, s.missed_bound,
           s.missed_grace_micros * interval '1 microsecond', s.paused, s.next_run_at, s.last_run_at, s.created_at,
           s.updated_at, s.paused_by, s.updated_by
    FROM "${schema}".schedules s
    WHERE s.namespace = p_namespace
    ORDER BY s.name COLLATE "C";
END
$$;

-- Keeps the definition and fires nothing until resumed. True when it was running, false when already paused.
CREATE FUNCTION "${schema}".pause_schedule(p_namespace text, p_name text) RETURNS boolean
LANGUAGE plpgsql AS $$
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
    UPDATE "${schema}".schedules x
    SET paused = true, updated_at = statement_timestamp(), paused_by = "${schema}".current_actor()
    WHERE x.namespace = p_namespace AND x.name = p_name;
    RETURN true;
END
$$;

-- The next run becomes the first due time strictly after now: what would have fired while paused does not.
-- True when it was paused, false when already running.
CREATE FUNCTION "${schema}".resume_schedule(p_namespace text, p_name text) RETURNS boolean
LANGUAGE plpgsql AS $$
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
    UPDATE "${schema}".schedules x
    SET paused = false, next_run_at = "${schema}"._schedule_next_after(v_old, statement_timestamp()),
        updated_at = statement_timestamp(), paused_by = NULL, updated_by = "${schema}".current_actor()
    WHERE x.namespace = p_namespace AND x.name = p_name;
    RETURN true;
END
$$;

-- Fires the due schedules (of one namespace, or of all with NULL), at most p_limit of them, like the Java ticker:
-- each due row is locked (FOR UPDATE SKIP LOCKED, so concurrent tickers, Java or SQL, never fire a due time
-- twice), its messages published by the missed-runs policy, and its next run stored, in the caller's
-- transaction. One row per message: job_id is NULL only if a message of that due time could not be found.
CREATE FUNCTION "${schema}".tick_schedules(p_namespace text DEFAULT NULL, p_limit integer DEFAULT 100)
RETURNS TABLE (schedule_name text, job_id bigint, next_run_at timestamptz, due_at timestamptz, namespace text)
LANGUAGE plpgsql AS $$
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
    PERFORM "${schema}"._check_range('p_limit', p_limit, 1, 1000, '1 to 1000');
    FOR s IN
        SELECT * FROM "${schema}".schedules x
        WHERE NOT x.paused AND x.next_run_at IS NOT NULL AND x.next_run_at <= v_now
          AND (p_namespace IS NULL OR x.namespace = p_namespace)
        ORDER BY x.next_run_at, x.namespace, x.name
        LIMIT p_limit
        FOR UPDATE SKIP LOCKED
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
        UPDATE "${schema}".schedules x
        SET next_run_at = v_next, last_run_at = coalesce(v_due[cardinality(v_due)], x.last_run_at)
        WHERE x.namespace = s.namespace AND x.name = s.name;
    END LOOP;
END
$$;
