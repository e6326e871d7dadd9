-- Publishing: messages inserted into the hot table (messages), their topics registered (topics) and the wake-up the
-- subscribers LISTEN for sent in the same transaction, so it is delivered only if that commits. Tables: messages,
-- topics, and topic_published for the counts of the SQL API (_count_published).
--
-- A unique key is held by a live message: a publish of the same key is a duplicate, answered with the holder's id.
-- An ordering key makes a message run only after every earlier message (lower id) of its namespace, topic and key
-- has left. A keyed publish takes a transaction-level advisory lock per key (_ordering_lock) before it draws ids, so
-- the ids of a key follow the order in which its publishers commit, and stores a message pending when it may be the
-- head of its key, else waiting, row-locking what holds it back (_ordering_free_keys in R__flow_control.sql). Both
-- keys live in partial indexes: messages without keys pay next to nothing for them.
--
-- For psql users: push and push_batch, which check their input, apply the queue policy and count the messages. For
-- the Java adapter: _engine_publish (unique or ordering keys, or a topic not yet registered), _engine_publish_fast (a
-- batch without keys to registered topics) and _engine_publish_one, called directly by trusted logins, else through
-- the gates engine_publish, engine_publish_fast and engine_publish_one, which check the caller's namespaces and every
-- argument first (at most 10,000 messages, and 1000 ordering keys, a call).


-- Whether a change that makes messages claimable sends its wake-up: the parameter when given, else the
-- setting queue.notify (off, false or 0 suppress, for example set_config('queue.notify', 'off', true)).
CREATE OR REPLACE FUNCTION "${schema}"._notify_wanted(p_notify boolean) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT coalesce(p_notify,
                    lower(coalesce(nullif(current_setting('queue.notify', true), ''), 'on')) NOT IN ('off', 'false', '0', 'no'))
$$;


-- The wake-up the Java subscribers LISTEN for: channel "<schema>_wakeup", payload "namespace/topic". Sent inside
-- the caller's transaction, so it is delivered only if that commits. PL/pgSQL for its caller check.
CREATE OR REPLACE FUNCTION "${schema}"._wake(p_namespace text, p_queue text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_wake');
    END IF;
    PERFORM pg_notify('${schema}_wakeup', p_namespace || '/' || p_queue);
    PERFORM "${schema}"._bump_wake_mark(p_namespace);
END
$$;


-- Bumps one of the 16 wake marks of p_namespace (table wake_marks), in the caller's transaction: subscribers that
-- cannot LISTEN poll the marks and claim when their sum changed. Called wherever a topic's wake-up is sent, so a
-- publisher's notify window (and its trailing wake-up, _engine_wake) bounds the bumps as it bounds the NOTIFYs. The slot is any the caller can lock at once,
-- starting at a random one, so that publishers neither queue on one row nor wait for a long transaction that
-- bumped before. When another transaction holds all 16, this one bumps none: those commit a bump each, and a
-- change this one missed is found by the subscribers' full poll. The first bump of a namespace inserts its rows.
CREATE OR REPLACE FUNCTION "${schema}"._bump_wake_mark(p_namespace text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_start integer := floor(random() * 16)::integer;
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_bump_wake_mark');
    END IF;
    UPDATE "${schema}".wake_marks w SET mark = w.mark + 1
    WHERE w.namespace = p_namespace
      AND w.slot = (SELECT x.slot FROM "${schema}".wake_marks x
                    WHERE x.namespace = p_namespace
                    ORDER BY (x.slot + 16 - v_start) % 16
                    LIMIT 1
                    FOR UPDATE SKIP LOCKED);
    IF NOT FOUND AND NOT EXISTS (SELECT 1 FROM "${schema}".wake_marks x WHERE x.namespace = p_namespace) THEN
        INSERT INTO "${schema}".wake_marks (namespace, slot, mark)
        SELECT p_namespace, s, CASE WHEN s = v_start THEN 1 ELSE 0 END FROM generate_series(0, 15) AS s
        ON CONFLICT (namespace, slot) DO UPDATE SET mark = "${schema}".wake_marks.mark + 1
            WHERE "${schema}".wake_marks.slot = v_start;
    END IF;
END
$$;


-- A wake-up sent on its own, after the commit of the messages it announces: the trailing wake-up of a Java
-- publisher's notify window. Notifies the topic and bumps its namespace's wake mark.
CREATE OR REPLACE FUNCTION "${schema}"._engine_wake(p_namespace text, p_topic text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_wake');
    END IF;
    PERFORM "${schema}"._wake(p_namespace, p_topic);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_wake(p_namespace text, p_topic text) RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    PERFORM "${schema}"._check_name('p_topic', p_topic);
    PERFORM "${schema}"._engine_wake(p_namespace, p_topic);
END
$$;


-- The wake mark of each of p_namespaces that has one (the sum of its slots): a subscriber claims again when it
-- changed. Only what committed is seen, so a changed mark is followed by a claim that sees the new messages.
CREATE OR REPLACE FUNCTION "${schema}"._engine_wake_marks(p_namespaces text[])
RETURNS TABLE (namespace text, mark bigint)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_wake_marks');
    END IF;
    RETURN QUERY
    SELECT w.namespace::text, sum(w.mark)::bigint
    FROM "${schema}".wake_marks w
    WHERE w.namespace = ANY (p_namespaces)
    GROUP BY w.namespace;
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_wake_marks(p_namespaces text[])
RETURNS TABLE (namespace text, mark bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
DECLARE
    v_namespace text;
BEGIN
    -- the namespaces first, so a tenant's login is refused for them (QU002, QU005) before any other check
    IF p_namespaces IS NOT NULL THEN
        FOREACH v_namespace IN ARRAY p_namespaces LOOP
            PERFORM "${schema}"._check_gate_namespace(v_namespace, false);
        END LOOP;
    END IF;
    PERFORM "${schema}"._check_array('p_namespaces', p_namespaces, 1, 1000);
    RETURN QUERY SELECT * FROM "${schema}"._engine_wake_marks(p_namespaces);
END
$$;


-- The due time of a push: p_run_at when given (p_delay is then ignored, as in the Java API), else now + p_delay.
CREATE OR REPLACE FUNCTION "${schema}"._run_at(p_delay interval, p_run_at timestamptz) RETURNS timestamptz
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


-- The insert of a schedule's message fired in SQL (tick_schedules, run_schedule_now): its id, counted in
-- topic_published, or NULL when a live message holds its unique key.
CREATE OR REPLACE FUNCTION "${schema}"._insert_message(
    p_namespace text, p_queue text, p_payload json, p_headers jsonb, p_priority integer, p_max_attempts integer,
    p_unique_key text, p_run_at timestamptz, p_notify boolean)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_id        bigint;
    v_duplicate boolean;
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_insert_message');
    END IF;
    SELECT e.id, e.duplicate INTO v_id, v_duplicate
    FROM "${schema}"._engine_publish(ARRAY[p_namespace], ARRAY[p_queue], ARRAY[p_payload::text],
                                     ARRAY[p_headers::text], ARRAY[p_priority], ARRAY[p_max_attempts],
                                     ARRAY[p_unique_key], ARRAY["${schema}"._micros(p_run_at - timestamptz 'epoch')],
                                     ARRAY[NULL::bigint], NULL, "${schema}"._notify_wanted(p_notify),
                                     "${schema}".current_actor(), NULL) e;
    IF v_duplicate THEN
        RETURN NULL;
    END IF;
    PERFORM "${schema}"._count_published(p_namespace, p_queue, 1);
    RETURN v_id;
END
$$;


-- A publish in the caller's order ("ord" from 1): the id of each message and whether it was a duplicate (the id is
-- then the holder's). Within the batch only the first message of a unique key is inserted, later ones are its
-- duplicates. Ids are drawn in the caller's order, rows inserted in key order (two batches with overlapping keys lock
-- them in the same order). ON CONFLICT DO NOTHING skips keys held by a live message and the holder is found by a probe
-- of the unique index. A holder committed after the statement's snapshot is not visible to that probe, nor is one
-- that was freed meanwhile: those messages go round again (a new statement, a new snapshot), at most ten rounds. Rows
-- of a later round come after the rows of the earlier ones: callers sort by ord. Every join is a hash lookup or an
-- index probe per message, never a nested loop over two unnested arrays (a batch holds up to 10,000).
--
-- Ordering keys (p_ordering_keys, NULL or shorter: none) are locked before any id is drawn. A keyed message is
-- inserted pending when it is the first of its key in the batch and its key has no live message (and, when the
-- topic waits behind dead letters, no dead letter: _ordering_free_keys), otherwise waiting. When the first of a key
-- was a duplicate (not inserted), or a keyed message went round again, the keys are advanced afterwards, so the
-- first waiting message of a key without a head becomes its head.
CREATE OR REPLACE FUNCTION "${schema}"._engine_publish(
    p_namespaces text[], p_topics text[], p_payloads text[], p_headers text[], p_priorities integer[],
    p_max_attempts integer[], p_unique_keys text[], p_run_at_us bigint[], p_delay_us bigint[],
    p_now timestamptz, p_notify boolean, p_actor text, p_ordering_keys text[])
RETURNS TABLE (ord integer, id bigint, duplicate boolean)
LANGUAGE plpgsql
SET plan_cache_mode = 'force_generic_plan'
AS $$
#variable_conflict use_column
DECLARE
    v_open      integer[];
    v_ords      integer[];
    v_ids       bigint[];
    v_dups      boolean[];
    v_round     integer := 0;
    v_keyed     boolean;
    v_keyed_dup boolean := false;
    v_free_ns   text[];
    v_free_tops text[];
    v_free_keys text[];
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_publish');
    END IF;
    IF coalesce(cardinality(p_namespaces), 0) = 0 THEN
        RETURN;
    END IF;
    v_keyed := EXISTS (SELECT 1 FROM unnest(p_ordering_keys) AS k(key) WHERE k.key IS NOT NULL);
    IF v_keyed THEN
        PERFORM "${schema}"._ordering_lock('publish', p_namespaces, p_topics, p_ordering_keys);
        SELECT array_agg(f.namespace), array_agg(f.topic), array_agg(f.ordering_key)
        INTO v_free_ns, v_free_tops, v_free_keys
        FROM "${schema}"._ordering_free_keys(p_namespaces, p_topics, p_ordering_keys) f;
    END IF;
    LOOP
        WITH input AS MATERIALIZED (
            SELECT v.*, nextval('"${schema}".message_ids') AS new_id
            FROM (
                SELECT w.*,
                       (w.ordering_key IS NOT NULL AND w.first_of_key
                        AND w.ord = min(w.ord) FILTER (WHERE w.first_of_key)
                                        OVER (PARTITION BY w.namespace, w.topic, w.ordering_key)) AS head_of_batch
                FROM (
                    SELECT i.*,
                           (i.unique_key IS NULL
                            OR i.ord = min(i.ord) OVER (PARTITION BY i.namespace, i.topic, i.unique_key)) AS first_of_key
                    FROM unnest(p_namespaces, p_topics, p_payloads, p_headers, p_priorities, p_max_attempts,
                                p_unique_keys, p_run_at_us, p_delay_us, p_ordering_keys)
                         WITH ORDINALITY AS i(namespace, topic, payload, headers, priority, max_attempts, unique_key,
                                              run_at_us, delay_us, ordering_key, ord)
                    WHERE i.ord <= cardinality(p_namespaces)
                      AND (v_open IS NULL OR i.ord = ANY (v_open))
                ) w
            ) v
            ORDER BY v.ord
        ),
        inserted AS (
            INSERT INTO "${schema}".messages AS m (id, namespace, topic, payload, headers, priority, max_attempts,
                                                   unique_key, run_at, published_at, published_by, ordering_key, state)
            SELECT x.new_id, x.namespace, x.topic, x.payload::json, x.headers::jsonb, x.priority, x.max_attempts,
                   x.unique_key,
                   coalesce(timestamptz 'epoch' + x.run_at_us * interval '1 microsecond',
                            coalesce(p_now, statement_timestamp()) + coalesce(x.delay_us, 0) * interval '1 microsecond'),
                   coalesce(p_now, statement_timestamp()), p_actor, x.ordering_key,
                   CASE
                       WHEN x.ordering_key IS NULL THEN 'pending'
                       -- a later round's keyed rows wait, and are promoted below if their key has no head
                       WHEN x.head_of_batch AND v_round = 0
                            AND (x.namespace, x.topic, x.ordering_key)
                                IN (SELECT * FROM unnest(v_free_ns, v_free_tops, v_free_keys)) THEN 'pending'
                       ELSE 'waiting'
                   END
            FROM input x
            WHERE x.first_of_key
            ORDER BY x.namespace, x.topic, x.unique_key NULLS LAST, x.ord
            ON CONFLICT (namespace, topic, unique_key) WHERE unique_key IS NOT NULL DO NOTHING
            RETURNING m.id, m.namespace, m.topic
        ),
        registered AS (
            INSERT INTO "${schema}".topics (namespace, topic, first_published_at)
            SELECT DISTINCT y.namespace, y.topic, coalesce(p_now, statement_timestamp()) FROM inserted y
            ORDER BY 1, 2
            ON CONFLICT (namespace, topic) DO NOTHING
        ),
        notified AS (
            SELECT pg_notify('${schema}_wakeup', t.namespace || '/' || t.topic)
            FROM (SELECT DISTINCT y.namespace, y.topic FROM inserted y) t
            WHERE p_notify
        ),
        flagged AS MATERIALIZED (
            /* "IN" in a select list is a hashed SubPlan: one hash of the inserted ids, not a join to plan */
            SELECT x.*, x.new_id IN (SELECT y.id FROM inserted y) AS was_inserted FROM input x
        ),
        resolved AS (
            SELECT r.ord, r.namespace, r.topic, r.unique_key, r.first_of_key, r.was_inserted,
                   CASE WHEN r.was_inserted THEN r.new_id ELSE h.id END AS own_id
            FROM flagged r
            LEFT JOIN LATERAL (
                SELECT m.id
                FROM "${schema}".messages m
                WHERE NOT r.was_inserted AND r.first_of_key AND r.unique_key IS NOT NULL
                  AND m.namespace = r.namespace AND m.topic = r.topic AND m.unique_key = r.unique_key
            ) h ON true
        )
        SELECT array_agg(s.ord::integer ORDER BY s.ord),
               array_agg(CASE WHEN s.first_of_key THEN s.own_id ELSE s.first_id END ORDER BY s.ord),
               array_agg(NOT s.was_inserted ORDER BY s.ord)
        INTO v_ords, v_ids, v_dups
        FROM (SELECT z.*,
                     first_value(z.own_id) OVER (PARTITION BY z.namespace, z.topic, z.unique_key ORDER BY z.ord) AS first_id
              FROM resolved z) s
        WHERE (SELECT count(*) FROM notified) >= 0;

        IF v_keyed AND NOT v_keyed_dup THEN
            v_keyed_dup := v_round > 0;
        END IF;
        IF v_keyed AND NOT v_keyed_dup THEN
            v_keyed_dup := EXISTS (SELECT 1 FROM unnest(v_ords, v_dups) AS u(o, d)
                                   WHERE u.d AND p_ordering_keys[u.o] IS NOT NULL);
        END IF;
        RETURN QUERY SELECT u.o, u.i, u.d FROM unnest(v_ords, v_ids, v_dups) AS u(o, i, d) WHERE u.i IS NOT NULL;
        v_open := ARRAY(SELECT u.o FROM unnest(v_ords, v_ids) AS u(o, i) WHERE u.i IS NULL);
        EXIT WHEN cardinality(v_open) = 0;
        v_round := v_round + 1;
        IF v_round >= 10 THEN
            RAISE EXCEPTION USING ERRCODE = '40001',
                MESSAGE = format('publish gave up after %s rounds: the unique keys of %s message(s) (ordinals %s) '
                                 'kept being held and freed concurrently', v_round, cardinality(v_open), v_open::text);
        END IF;
    END LOOP;
    IF v_keyed_dup THEN
        PERFORM "${schema}"._ordering_advance(p_namespaces, p_topics, p_ordering_keys, p_now, p_notify);
    END IF;
    IF p_notify THEN
        PERFORM "${schema}"._bump_wake_mark(n) FROM (SELECT DISTINCT n FROM unnest(p_namespaces) AS n) AS d;
    END IF;
END
$$;


-- The publish of a batch without unique keys to registered queues: one multi-row insert in the caller's order
-- (ids come from the sequence in that order, so sorting them restores it) and the wake-ups in p_notify_keys
-- ("namespace/topic", the ones the publisher's limiter allows), sent in this transaction (delivered on commit).
CREATE OR REPLACE FUNCTION "${schema}"._engine_publish_fast(
    p_namespaces text[], p_topics text[], p_payloads text[], p_headers text[], p_priorities integer[],
    p_max_attempts integer[], p_run_at_us bigint[], p_delay_us bigint[], p_notify_keys text[], p_now timestamptz,
    p_actor text)
RETURNS SETOF bigint
LANGUAGE plpgsql
SET plan_cache_mode = 'force_generic_plan'
AS $$
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_publish_fast');
    END IF;
    RETURN QUERY
    WITH inserted AS (
        INSERT INTO "${schema}".messages AS m (namespace, topic, payload, headers, priority, max_attempts, run_at,
                                               published_at, published_by)
        SELECT i.namespace, i.topic, i.payload::json, i.headers::jsonb, i.priority, i.max_attempts,
               coalesce(timestamptz 'epoch' + i.run_at_us * interval '1 microsecond',
                        coalesce(p_now, statement_timestamp()) + coalesce(i.delay_us, 0) * interval '1 microsecond'),
               coalesce(p_now, statement_timestamp()), p_actor
        FROM unnest(p_namespaces, p_topics, p_payloads, p_headers, p_priorities, p_max_attempts, p_run_at_us,
                    p_delay_us)
             WITH ORDINALITY AS i(namespace, topic, payload, headers, priority, max_attempts, run_at_us, delay_us, ord)
        ORDER BY i.ord
        RETURNING m.id
    )
    SELECT x.id FROM inserted x ORDER BY x.id;
    IF cardinality(p_notify_keys) > 0 THEN
        PERFORM pg_notify('${schema}_wakeup', k) FROM unnest(p_notify_keys) AS k;
        -- a key is "namespace/topic", and names hold no '/'
        PERFORM "${schema}"._bump_wake_mark(d.n)
        FROM (SELECT DISTINCT split_part(k, '/', 1) AS n FROM unnest(p_notify_keys) AS k) AS d;
    END IF;
END
$$;


-- The same for one message: a one-row insert with scalar parameters plans and runs cheaper than unnesting
-- one-element arrays. p_notify_key NULL: the limiter holds this wake-up back.
CREATE OR REPLACE FUNCTION "${schema}"._engine_publish_one(
    p_namespace text, p_topic text, p_payload text, p_headers text, p_priority integer, p_max_attempts integer,
    p_run_at_us bigint, p_delay_us bigint, p_notify_key text, p_now timestamptz, p_actor text)
RETURNS bigint
LANGUAGE plpgsql
SET plan_cache_mode = 'force_generic_plan'
AS $$
DECLARE
    v_id bigint;
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_publish_one');
    END IF;
    INSERT INTO "${schema}".messages (namespace, topic, payload, headers, priority, max_attempts, run_at, published_at,
                                      published_by)
    VALUES (p_namespace, p_topic, p_payload::json, p_headers::jsonb, p_priority, p_max_attempts,
            coalesce(timestamptz 'epoch' + p_run_at_us * interval '1 microsecond',
                     coalesce(p_now, statement_timestamp()) + coalesce(p_delay_us, 0) * interval '1 microsecond'),
            coalesce(p_now, statement_timestamp()), p_actor)
    RETURNING id INTO v_id;
    IF p_notify_key IS NOT NULL THEN
        PERFORM pg_notify('${schema}_wakeup', p_notify_key);
        PERFORM "${schema}"._bump_wake_mark(p_namespace);
    END IF;
    RETURN v_id;
END
$$;


-- Payloads as the engine_ gates take them, JSON text: each valid JSON of at most 64 MiB (the largest payload limit a
-- queue may set: a Java queue checks its own limit first) without a \u0000 escape, else QU004 as _check_payload says.
-- One pass for sizes and escapes, and one parse of the whole array: the elements are parsed one by one only to name
-- the first that is not JSON.
CREATE OR REPLACE FUNCTION "${schema}"._check_engine_payloads(p_argument text, p_payloads text[]) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_at      bigint;
    v_payload text;
BEGIN
    SELECT u.at, u.payload INTO v_at, v_payload
    FROM unnest(p_payloads) WITH ORDINALITY AS u(payload, at)
    WHERE u.payload IS NULL OR octet_length(u.payload) > 67108864
       -- an escape is a backslash preceded by an even number of backslashes
       OR (strpos(u.payload, '\u0000') > 0 AND u.payload ~ '(^|[^\\])(\\\\)*\\u0000')
    ORDER BY u.at
    LIMIT 1;
    IF v_at IS NOT NULL AND v_payload IS NULL THEN
        PERFORM "${schema}"._invalid(p_argument || '[' || v_at || ']', 'null',
            'JSON text (use ''null'' for a JSON null)', 'QU004');
    ELSIF v_at IS NOT NULL AND octet_length(v_payload) > 67108864 THEN
        PERFORM "${schema}"._invalid(p_argument || '[' || v_at || ']', octet_length(v_payload) || ' bytes',
            'at most 67108864 bytes of UTF-8 JSON', 'QU004');
    ELSIF v_at IS NOT NULL THEN
        PERFORM "${schema}"._invalid(p_argument || '[' || v_at || ']', "${schema}"._shown(v_payload),
            'valid JSON without a \u0000 escape, which cannot be stored', 'QU004');
    END IF;
    BEGIN
        PERFORM p_payloads::json[];
    EXCEPTION WHEN data_exception THEN
        FOR v_i IN array_lower(p_payloads, 1) .. array_upper(p_payloads, 1) LOOP
            BEGIN
                PERFORM p_payloads[v_i]::json;
            EXCEPTION WHEN data_exception THEN
                PERFORM "${schema}"._invalid(p_argument || '[' || v_i || ']', "${schema}"._shown(p_payloads[v_i]),
                    'valid JSON', 'QU004');
            END;
        END LOOP;
        RAISE;
    END;
END
$$;


-- Headers as the engine_ gates take them, JSON text: each a JSON object of at most 32 string values of at most 1024
-- characters, names by the name rule. Unlike a caller's headers (_check_headers), names starting with queue- pass:
-- the Java ticker publishes its schedules' messages with queue-schedule and queue-due-at through these gates.
CREATE OR REPLACE FUNCTION "${schema}"._check_engine_headers(p_argument text, p_headers text[]) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_parsed   jsonb[];
    v_at       bigint;
    v_headers  jsonb;
    v_header   record;
    v_argument text;
BEGIN
    BEGIN
        v_parsed := p_headers::jsonb[];
    EXCEPTION WHEN data_exception THEN
        FOR v_i IN array_lower(p_headers, 1) .. array_upper(p_headers, 1) LOOP
            BEGIN
                PERFORM p_headers[v_i]::jsonb;
            EXCEPTION WHEN data_exception THEN
                PERFORM "${schema}"._invalid(p_argument || '[' || v_i || ']', "${schema}"._shown(p_headers[v_i]),
                    'a JSON object of header names to string values');
            END;
        END LOOP;
        RAISE;
    END;
    SELECT u.at, u.headers INTO v_at, v_headers
    FROM unnest(v_parsed) WITH ORDINALITY AS u(headers, at)
    WHERE u.headers IS NULL OR jsonb_typeof(u.headers) <> 'object'
       OR (SELECT count(*) FROM jsonb_object_keys(CASE WHEN jsonb_typeof(u.headers) = 'object' THEN u.headers END)) > 32
       OR EXISTS (SELECT 1
                  FROM jsonb_each(CASE WHEN jsonb_typeof(u.headers) = 'object' THEN u.headers END) AS e(name, value)
                  WHERE NOT "${schema}"._is_name(e.name) OR jsonb_typeof(e.value) <> 'string'
                     OR length(e.value #>> '{}') > 1024)
    ORDER BY u.at
    LIMIT 1;
    IF v_at IS NULL THEN
        RETURN;
    END IF;
    v_argument := p_argument || '[' || v_at || ']';
    IF v_headers IS NULL OR jsonb_typeof(v_headers) <> 'object' THEN
        PERFORM "${schema}"._invalid(v_argument, "${schema}"._shown(v_headers::text),
            'a JSON object of header names to string values');
    END IF;
    IF (SELECT count(*) FROM jsonb_object_keys(v_headers)) > 32 THEN
        PERFORM "${schema}"._invalid(v_argument, (SELECT count(*) FROM jsonb_object_keys(v_headers)) || ' headers',
            'at most 32');
    END IF;
    FOR v_header IN SELECT e.key, e.value FROM jsonb_each(v_headers) AS e LOOP
        PERFORM "${schema}"._check_name(v_argument || ' name', v_header.key);
        IF jsonb_typeof(v_header.value) <> 'string' OR length(v_header.value #>> '{}') > 1024 THEN
            PERFORM "${schema}"._invalid(v_argument || ' ' || v_header.key, "${schema}"._shown(v_header.value::text),
                'a string of at most 1024 characters');
        END IF;
    END LOOP;
END
$$;


-- The messages of an engine_ publish gate, p_count of them: parallel arrays of one element each (the keys and due
-- times NULL as a whole for none), names, payloads and headers as above, priority 0-9, max attempts 1-1000, unique
-- and ordering keys of 1 to 255 characters without control characters, due times from 1970 to 9999 and delays of
-- 0 to 365 days in microseconds, and at most 1000 ordering keys, each of which the publish locks.
CREATE OR REPLACE FUNCTION "${schema}"._check_engine_messages(
    p_count integer, p_namespaces text[], p_topics text[], p_payloads text[], p_headers text[],
    p_priorities integer[], p_max_attempts integer[], p_unique_keys text[], p_run_at_us bigint[], p_delay_us bigint[],
    p_ordering_keys text[])
RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_keys bigint;
BEGIN
    PERFORM "${schema}"._check_array('p_topics', p_topics, p_count, p_count);
    PERFORM "${schema}"._check_names('p_topics', p_topics);
    -- a NULL payload is the payload check's to refuse (QU004)
    PERFORM "${schema}"._check_array('p_payloads', p_payloads, p_count, p_count, true);
    PERFORM "${schema}"._check_engine_payloads('p_payloads', p_payloads);
    PERFORM "${schema}"._check_array('p_headers', p_headers, p_count, p_count);
    PERFORM "${schema}"._check_engine_headers('p_headers', p_headers);
    PERFORM "${schema}"._check_array('p_priorities', p_priorities, p_count, p_count);
    PERFORM "${schema}"._check_ranges('p_priorities', p_priorities::bigint[], 0, 9, '0 (first) to 9 (last)');
    PERFORM "${schema}"._check_array('p_max_attempts', p_max_attempts, p_count, p_count);
    PERFORM "${schema}"._check_ranges('p_max_attempts', p_max_attempts::bigint[], 1, 1000, '1 to 1000');
    IF p_unique_keys IS NOT NULL THEN
        PERFORM "${schema}"._check_array('p_unique_keys', p_unique_keys, p_count, p_count, true);
        PERFORM "${schema}"._check_texts('p_unique_keys', p_unique_keys, 255);
    END IF;
    IF p_run_at_us IS NOT NULL THEN
        PERFORM "${schema}"._check_array('p_run_at_us', p_run_at_us, p_count, p_count, true);
        PERFORM "${schema}"._check_ranges('p_run_at_us', p_run_at_us, 0, 253402300799000000,
                                          '0 to 253402300799000000 microseconds since 1970 (up to 9999)');
    END IF;
    IF p_delay_us IS NOT NULL THEN
        PERFORM "${schema}"._check_array('p_delay_us', p_delay_us, p_count, p_count, true);
        PERFORM "${schema}"._check_ranges('p_delay_us', p_delay_us, 0, 31536000000000,
                                          '0 to 31536000000000 microseconds (365 days)');
    END IF;
    IF p_ordering_keys IS NOT NULL THEN
        PERFORM "${schema}"._check_array('p_ordering_keys', p_ordering_keys, p_count, p_count, true);
        PERFORM "${schema}"._check_texts('p_ordering_keys', p_ordering_keys, 255);
        SELECT count(*) INTO v_keys
        FROM (SELECT DISTINCT u.namespace, u.topic, u.key
              FROM unnest(p_namespaces, p_topics, p_ordering_keys) AS u(namespace, topic, key)
              WHERE u.key IS NOT NULL) k;
        IF v_keys > 1000 THEN
            PERFORM "${schema}"._invalid('p_ordering_keys', v_keys || ' ordering keys',
                'at most 1000 ordering keys a call (each takes a lock)');
        END IF;
    END IF;
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_publish(
    p_namespaces text[], p_topics text[], p_payloads text[], p_headers text[], p_priorities integer[],
    p_max_attempts integer[], p_unique_keys text[], p_run_at_us bigint[], p_delay_us bigint[],
    p_now timestamptz, p_notify boolean, p_actor text, p_ordering_keys text[])
RETURNS TABLE (ord integer, id bigint, duplicate boolean)
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_array('p_namespaces', p_namespaces, 1, 10000);
    PERFORM "${schema}"._check_engine_namespaces(p_namespaces);
    PERFORM "${schema}"._check_engine_messages(cardinality(p_namespaces), p_namespaces, p_topics, p_payloads,
        p_headers, p_priorities, p_max_attempts, p_unique_keys, p_run_at_us, p_delay_us, p_ordering_keys);
    PERFORM "${schema}"._check_engine_now(p_now);
    PERFORM "${schema}"._check_engine_actor('p_actor', p_actor);
    RETURN QUERY SELECT * FROM "${schema}"._engine_publish(p_namespaces, p_topics, p_payloads, p_headers, p_priorities,
        p_max_attempts, p_unique_keys, p_run_at_us, p_delay_us, p_now, coalesce(p_notify, false), p_actor,
        p_ordering_keys);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_publish_fast(
    p_namespaces text[], p_topics text[], p_payloads text[], p_headers text[], p_priorities integer[],
    p_max_attempts integer[], p_run_at_us bigint[], p_delay_us bigint[], p_notify_keys text[], p_now timestamptz,
    p_actor text)
RETURNS SETOF bigint
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
DECLARE
    v_at  bigint;
    v_key text;
BEGIN
    PERFORM "${schema}"._check_array('p_namespaces', p_namespaces, 1, 10000);
    PERFORM "${schema}"._check_engine_namespaces(p_namespaces);
    PERFORM "${schema}"._check_engine_messages(cardinality(p_namespaces), p_namespaces, p_topics, p_payloads,
        p_headers, p_priorities, p_max_attempts, NULL, p_run_at_us, p_delay_us, NULL);
    -- wake-ups only of the batch's own topics
    IF p_notify_keys IS NOT NULL THEN
        PERFORM "${schema}"._check_array('p_notify_keys', p_notify_keys, 0, 10000);
        SELECT u.at, u.key INTO v_at, v_key
        FROM unnest(p_notify_keys) WITH ORDINALITY AS u(key, at)
        WHERE NOT (u.key IN (SELECT m.namespace || '/' || m.topic
                             FROM unnest(p_namespaces, p_topics) AS m(namespace, topic)))
        ORDER BY u.at
        LIMIT 1;
        IF v_at IS NOT NULL THEN
            PERFORM "${schema}"._invalid('p_notify_keys[' || v_at || ']', "${schema}"._shown(v_key),
                'the namespace/topic of a message of the batch');
        END IF;
    END IF;
    PERFORM "${schema}"._check_engine_now(p_now);
    PERFORM "${schema}"._check_engine_actor('p_actor', p_actor);
    RETURN QUERY SELECT * FROM "${schema}"._engine_publish_fast(p_namespaces, p_topics, p_payloads, p_headers,
        p_priorities, p_max_attempts, p_run_at_us, p_delay_us, p_notify_keys, p_now, p_actor);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_publish_one(
    p_namespace text, p_topic text, p_payload text, p_headers text, p_priority integer, p_max_attempts integer,
    p_run_at_us bigint, p_delay_us bigint, p_notify_key text, p_now timestamptz, p_actor text)
RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    PERFORM "${schema}"._check_name('p_topic', p_topic);
    PERFORM "${schema}"._check_engine_payloads('p_payload', ARRAY[p_payload]);
    PERFORM "${schema}"._check_engine_headers('p_headers', ARRAY[p_headers]);
    PERFORM "${schema}"._check_range('p_priority', p_priority, 0, 9, '0 (first) to 9 (last)');
    PERFORM "${schema}"._check_range('p_max_attempts', p_max_attempts, 1, 1000, '1 to 1000');
    IF p_run_at_us IS NOT NULL THEN
        PERFORM "${schema}"._check_range('p_run_at_us', p_run_at_us, 0, 253402300799000000,
                                         '0 to 253402300799000000 microseconds since 1970 (up to 9999)');
    END IF;
    IF p_delay_us IS NOT NULL THEN
        PERFORM "${schema}"._check_range('p_delay_us', p_delay_us, 0, 31536000000000,
                                         '0 to 31536000000000 microseconds (365 days)');
    END IF;
    IF p_notify_key <> p_namespace || '/' || p_topic THEN
        PERFORM "${schema}"._invalid('p_notify_key', "${schema}"._shown(p_notify_key),
            'null or the message''s namespace/topic');
    END IF;
    PERFORM "${schema}"._check_engine_now(p_now);
    PERFORM "${schema}"._check_engine_actor('p_actor', p_actor);
    RETURN "${schema}"._engine_publish_one(p_namespace, p_topic, p_payload, p_headers, p_priority, p_max_attempts,
        p_run_at_us, p_delay_us, p_notify_key, p_now, p_actor);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".push(
    p_namespace text, p_queue text, p_payload json,
    p_delay interval DEFAULT NULL, p_run_at timestamptz DEFAULT NULL, p_priority integer DEFAULT 0,
    p_max_attempts integer DEFAULT NULL, p_unique_key text DEFAULT NULL, p_headers jsonb DEFAULT '{}',
    p_notify boolean DEFAULT NULL, p_ordering_key text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
DECLARE
    v_policy    "${schema}".queue_policies;
    v_run_at    timestamptz;
    v_id        bigint;
    v_duplicate boolean;
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
    IF p_ordering_key IS NOT NULL THEN
        PERFORM "${schema}"._check_text('p_ordering_key', p_ordering_key, 255);
    END IF;
    PERFORM "${schema}"._check_headers('p_headers', coalesce(p_headers, '{}'), 32);
    SELECT e.id, e.duplicate INTO v_id, v_duplicate
    FROM "${schema}"._engine_publish(ARRAY[p_namespace], ARRAY[p_queue], ARRAY[p_payload::text],
                                     ARRAY[coalesce(p_headers, '{}')::text], ARRAY[coalesce(p_priority, 0)],
                                     ARRAY[coalesce(p_max_attempts, v_policy.max_attempts)], ARRAY[p_unique_key],
                                     ARRAY["${schema}"._micros(v_run_at - timestamptz 'epoch')], ARRAY[NULL::bigint],
                                     NULL, "${schema}"._notify_wanted(p_notify), "${schema}".current_actor(),
                                     ARRAY[p_ordering_key]) e;
    IF v_duplicate THEN
        RETURN NULL;
    END IF;
    PERFORM "${schema}"._count_published(p_namespace, p_queue, 1);
    RETURN v_id;
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".push_batch(
    p_namespace text, p_queue text, p_payloads json[],
    p_delay interval DEFAULT NULL, p_run_at timestamptz DEFAULT NULL, p_priority integer DEFAULT 0,
    p_max_attempts integer DEFAULT NULL, p_unique_keys text[] DEFAULT NULL, p_headers jsonb DEFAULT '{}',
    p_notify boolean DEFAULT NULL, p_ordering_keys text[] DEFAULT NULL)
RETURNS TABLE (ordinal integer, id bigint)
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_policy   "${schema}".queue_policies;
    v_run_at   timestamptz;
    v_count    integer := coalesce(cardinality(p_payloads), 0);
    v_row      record;
    v_stored   bigint := 0;
    v_keys     bigint;
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    PERFORM "${schema}"._check_name('p_queue', p_queue);
    IF p_payloads IS NULL OR v_count > 10000 THEN
        PERFORM "${schema}"._invalid('p_payloads', coalesce(v_count || ' payloads', 'null'),
            'an array of at most 10000 payloads');
    END IF;
    -- NULL payloads are the payload rule's to refuse (QU004, naming the element)
    PERFORM "${schema}"._check_array('p_payloads', p_payloads, 0, 10000, true);
    IF p_unique_keys IS NOT NULL THEN
        PERFORM "${schema}"._check_array('p_unique_keys', p_unique_keys, 0, 10000, true);
        IF cardinality(p_unique_keys) <> v_count THEN
            PERFORM "${schema}"._invalid('p_unique_keys', cardinality(p_unique_keys) || ' keys',
                'one key (or NULL) per payload: ' || v_count);
        END IF;
    END IF;
    IF p_ordering_keys IS NOT NULL THEN
        PERFORM "${schema}"._check_array('p_ordering_keys', p_ordering_keys, 0, 10000, true);
        IF cardinality(p_ordering_keys) <> v_count THEN
            PERFORM "${schema}"._invalid('p_ordering_keys', cardinality(p_ordering_keys) || ' keys',
                'one key (or NULL) per payload: ' || v_count);
        END IF;
    END IF;
    v_policy := "${schema}".get_queue_policy(p_namespace, p_queue);
    PERFORM "${schema}"._check_payloads('p_payloads', p_payloads, v_policy.max_payload_bytes);
    PERFORM "${schema}"._check_texts('p_unique_keys', p_unique_keys, 255);
    PERFORM "${schema}"._check_texts('p_ordering_keys', p_ordering_keys, 255);
    -- the publish takes an advisory lock per ordering key, and the server's lock table is small: at most 1000 keys
    IF p_ordering_keys IS NOT NULL AND v_count > 1000 THEN
        v_keys := (SELECT count(DISTINCT k) FROM unnest(p_ordering_keys) AS k);
        IF v_keys > 1000 THEN
            PERFORM "${schema}"._invalid('p_ordering_keys', v_keys || ' distinct keys',
                'at most 1000 distinct ordering keys per batch');
        END IF;
    END IF;
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
            NULL, "${schema}"._notify_wanted(p_notify), "${schema}".current_actor(), p_ordering_keys) e
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
