-- Settling a claimed message: complete (acknowledge), retry, dead-letter, extend its lease, release it unstarted or
-- snooze it: and cancelling a live message. Tables: messages, completed_messages (the archive, when the queue policy
-- archives), completed_counters (sharded by backend), dead_letters, attempt_errors, audit_log.
--
-- Lease tokens guard every settle: the claim gives each message a token, and a settle acts only on a message still
-- running under the token it passes, so a worker whose lease expired (the message rescued, perhaps claimed again)
-- cannot settle the next attempt. The SQL functions take the token as an optional p_lease_token and without it act
-- on whoever holds the message. A settled head of an ordering key lets its key advance in the same transaction.
--
-- The engine functions take the decisions as parameters (the time p_now, the retry delay, whether to archive, the
-- wake-ups) and plan their statements once per session (force_generic_plan), with the arrays read through a
-- sub-select, (SELECT p_ids), so that the generic and custom plans cost the same. Every statement is an index probe
-- whatever its arguments, so nothing is lost by planning once. For psql users: ack, ack_batch, nack, fail,
-- extend_visibility, snooze and cancel. For the Java adapter: the _engine_ functions here, called directly by trusted
-- logins, else through their engine_ gates, which check the caller's namespace and every argument first.


-- The running message p_id of the namespace, locked: under that lease token when one is given (the Java guard),
-- else whoever holds it. NULL when not running there (pending, dead, gone, another namespace, another lease).
CREATE OR REPLACE FUNCTION "${schema}"._held(p_namespace text, p_id bigint, p_lease_token bigint)
RETURNS "${schema}".messages
LANGUAGE plpgsql AS $$
DECLARE
    v_row "${schema}".messages;
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_held');
    END IF;
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


-- Completes the running messages among p_ids (each under its token when p_lease_tokens is given, else under the
-- token of whoever holds it). The archive follows the queue policy: when no policy archives, the engine is told
-- so and skips the per-row lookup.
CREATE OR REPLACE FUNCTION "${schema}"._complete(p_namespace text, p_ids bigint[], p_lease_tokens bigint[])
RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_tokens bigint[];
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_complete');
    END IF;
    v_tokens := ARRAY(
        SELECT coalesce(t.token, m.lease_token)
        FROM unnest(p_ids, p_lease_tokens) WITH ORDINALITY AS t(id, token, ord)
        LEFT JOIN "${schema}".messages m ON t.token IS NULL AND m.id = t.id AND m.namespace = p_namespace
                                         AND m.state = 'running'
        ORDER BY t.ord);
    RETURN QUERY
    SELECT c FROM "${schema}"._engine_complete(
        p_namespace, p_ids, v_tokens,
        CASE WHEN EXISTS (SELECT 1 FROM "${schema}".queue_policies p WHERE p.archive_completed) THEN NULL ELSE false END,
        NULL, false) c;
END
$$;


-- Moves one live message (already locked by the caller) to the dead letters with its error.
CREATE OR REPLACE FUNCTION "${schema}"._bury(p_id bigint, p_error text, p_failed_by text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_row "${schema}".messages;
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_bury');
    END IF;
    SELECT m.* INTO v_row FROM "${schema}".messages m WHERE m.id = p_id;
    IF v_row.lease_token IS NOT NULL THEN
        PERFORM "${schema}"._engine_bury(v_row.namespace, ARRAY[v_row.id], ARRAY[v_row.lease_token], p_error, NULL,
                                         p_failed_by);
    END IF;
END
$$;


-- The latest row's ordinal is one probe of attempt_errors_message_idx, older rows are looked for only once a
-- message has ended more than 20 attempts.
CREATE OR REPLACE FUNCTION "${schema}"._record_attempt(p_id bigint, p_namespace text, p_attempt integer, p_error text,
                                                       p_worker text, p_started_at timestamptz, p_ended_at timestamptz,
                                                       p_outcome text, p_actor text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_last integer;
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_record_attempt');
    END IF;
    SELECT a.ordinal INTO v_last FROM "${schema}".attempt_errors a
    WHERE a.message_id = p_id ORDER BY a.id DESC LIMIT 1;
    INSERT INTO "${schema}".attempt_errors (message_id, namespace, attempt, error, worker, failed_at, actor,
                                           started_at, outcome, ordinal)
    VALUES (p_id, p_namespace, p_attempt, p_error, p_worker, p_ended_at, p_actor, p_started_at, p_outcome,
            coalesce(v_last, 0) + 1);
    IF v_last >= 20 THEN
        DELETE FROM "${schema}".attempt_errors a
        WHERE a.message_id = p_id
          AND a.id < (SELECT min(k.id) FROM (SELECT x.id FROM "${schema}".attempt_errors x
                                             WHERE x.message_id = p_id ORDER BY x.id DESC LIMIT 20) k);
    END IF;
END
$$;


-- Completes the messages of p_ids held under their tokens (p_tokens): deletes them, archives them when p_archive says
-- so (NULL: by each queue's policy, false: without looking) and counts them. The archive keeps the ordering key, and
-- the keys of the completed heads advance. With p_async the transaction commits without waiting for its WAL flush
-- (synchronous_commit off). Returns the ids completed.
CREATE OR REPLACE FUNCTION "${schema}"._engine_complete(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_archive boolean, p_now timestamptz, p_async boolean)
RETURNS SETOF bigint
LANGUAGE plpgsql
SET plan_cache_mode = 'force_generic_plan'
AS $$
DECLARE
    v_ids    bigint[];
    v_topics text[];
    v_keys   text[];
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_complete');
    END IF;
    IF p_archive IS DISTINCT FROM false THEN
        WITH held AS MATERIALIZED (
            SELECT h.id, h.lease_token
            FROM (SELECT * FROM unnest((SELECT p_ids), (SELECT p_tokens)) AS u(id, token) ORDER BY u.id) l
            CROSS JOIN LATERAL (
                SELECT m.id, m.lease_token
                FROM "${schema}".messages m
                WHERE m.id = l.id
                  AND m.lease_token = l.token
                  AND m.namespace = p_namespace
                LIMIT 1
            ) h
        ),
        done AS (
            DELETE FROM "${schema}".messages m
            USING held h
            WHERE m.id = h.id AND m.id = ANY (ARRAY(SELECT held.id FROM held)) AND m.lease_token = h.lease_token
            RETURNING m.*
        ),
        archived AS (
            INSERT INTO "${schema}".completed_messages (id, namespace, topic, payload, headers, priority, attempts,
                                                        max_attempts, unique_key, worker, published_at, completed_at,
                                                        published_by, attempt_started_at, ordering_key)
            SELECT d.id, d.namespace, d.topic, d.payload, d.headers, d.priority, d.attempts, d.max_attempts,
                   d.unique_key, d.worker, d.published_at, coalesce(p_now, statement_timestamp()), d.published_by,
                   d.attempt_started_at, d.ordering_key
            FROM done d
            WHERE coalesce(p_archive, ("${schema}"._queue_policy(d.namespace, d.topic)).archive_completed)
        ),
        counted AS (
            INSERT INTO "${schema}".completed_counters AS c (namespace, topic, shard, completed)
            SELECT d.namespace, d.topic, (pg_backend_pid() % 16)::smallint, count(*)
            FROM done d
            GROUP BY d.namespace, d.topic
            ORDER BY d.namespace, d.topic
            ON CONFLICT (namespace, topic, shard) DO UPDATE SET completed = c.completed + excluded.completed
        )
        SELECT array_agg(d.id), array_agg(d.topic::text) FILTER (WHERE d.ordering_key IS NOT NULL),
               array_agg(d.ordering_key::text) FILTER (WHERE d.ordering_key IS NOT NULL)
        INTO v_ids, v_topics, v_keys
        FROM done d
        WHERE NOT p_async OR (SELECT set_config('synchronous_commit', 'off', true)) = 'off';
    ELSE
        -- without the archive only the id, queue and key of each row are returned: the whole row copied every payload
        WITH held AS MATERIALIZED (
            SELECT h.id, h.lease_token
            FROM (SELECT * FROM unnest((SELECT p_ids), (SELECT p_tokens)) AS u(id, token) ORDER BY u.id) l
            CROSS JOIN LATERAL (
                SELECT m.id, m.lease_token
                FROM "${schema}".messages m
                WHERE m.id = l.id
                  AND m.lease_token = l.token
                  AND m.namespace = p_namespace
                LIMIT 1
            ) h
        ),
        done AS (
            DELETE FROM "${schema}".messages m
            USING held h
            WHERE m.id = h.id AND m.id = ANY (ARRAY(SELECT held.id FROM held)) AND m.lease_token = h.lease_token
            RETURNING m.id, m.namespace, m.topic, m.ordering_key
        ),
        counted AS (
            INSERT INTO "${schema}".completed_counters AS c (namespace, topic, shard, completed)
            SELECT d.namespace, d.topic, (pg_backend_pid() % 16)::smallint, count(*)
            FROM done d
            GROUP BY d.namespace, d.topic
            ORDER BY d.namespace, d.topic
            ON CONFLICT (namespace, topic, shard) DO UPDATE SET completed = c.completed + excluded.completed
        )
        SELECT array_agg(d.id), array_agg(d.topic::text) FILTER (WHERE d.ordering_key IS NOT NULL),
               array_agg(d.ordering_key::text) FILTER (WHERE d.ordering_key IS NOT NULL)
        INTO v_ids, v_topics, v_keys
        FROM done d
        WHERE NOT p_async OR (SELECT set_config('synchronous_commit', 'off', true)) = 'off';
    END IF;
    IF v_keys IS NOT NULL THEN
        PERFORM "${schema}"._ordering_advance(array_fill(p_namespace, ARRAY[cardinality(v_keys)]), v_topics, v_keys,
                                              p_now, true);
    END IF;
    RETURN QUERY SELECT u.id FROM unnest(v_ids) AS u(id);
END
$$;


-- Puts the messages held under their tokens back to pending, due p_delay_micros from now, with the error as their
-- last error, and records each attempt (outcome 'retry') with the caller's clock. Returns the ids retried.
CREATE OR REPLACE FUNCTION "${schema}"._engine_retry(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_delay_micros bigint, p_error text, p_now timestamptz,
    p_notify boolean)
RETURNS SETOF bigint
LANGUAGE plpgsql
SET plan_cache_mode = 'force_generic_plan'
AS $$
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_retry');
    END IF;
    RETURN QUERY
    WITH held AS MATERIALIZED (
        SELECT h.id, h.namespace, h.attempts, h.worker, h.attempt_started_at
        FROM (SELECT * FROM unnest((SELECT p_ids), (SELECT p_tokens)) AS u(id, token) ORDER BY u.id) l
        CROSS JOIN LATERAL (
            SELECT m.id, m.namespace, m.attempts, m.worker, m.attempt_started_at
            FROM "${schema}".messages m
            WHERE m.id = l.id
              AND m.lease_token = l.token
              AND m.namespace = p_namespace
            LIMIT 1
            FOR UPDATE
        ) h
    ),
    retried AS (
        UPDATE "${schema}".messages m
        SET state = 'pending',
            run_at = coalesce(p_now, statement_timestamp()) + p_delay_micros * interval '1 microsecond',
            worker = NULL, lease_token = NULL, lease_until = NULL,
            last_error = p_error
        FROM held h
        WHERE m.id = h.id AND m.id = ANY (ARRAY(SELECT held.id FROM held))
        RETURNING m.id, m.namespace, m.topic
    ),
    recorded AS (
        SELECT "${schema}"._record_attempt(h.id, h.namespace, h.attempts, p_error, h.worker, h.attempt_started_at,
                                           coalesce(p_now, statement_timestamp()), 'retry',
                                           nullif(current_setting('queue.actor', true), ''))
        FROM held h
        WHERE h.id IN (SELECT r.id FROM retried r)
    ),
    notified AS (
        SELECT pg_notify('${schema}_wakeup', t.namespace || '/' || t.topic)
        FROM (SELECT DISTINCT r.namespace, r.topic FROM retried r) t
        WHERE p_notify
    )
    SELECT r.id FROM retried r WHERE (SELECT count(*) FROM notified) + (SELECT count(*) FROM recorded) >= 0;
END
$$;


-- Moves the messages held under their tokens to the dead letters, with the error and who failed them (the trigger on
-- dead_letters records the attempt). The dead letter keeps the key, and the key advances (unless the topic waits).
-- Returns the ids dead-lettered.
CREATE OR REPLACE FUNCTION "${schema}"._engine_bury(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_error text, p_now timestamptz, p_failed_by text)
RETURNS SETOF bigint
LANGUAGE plpgsql
SET plan_cache_mode = 'force_generic_plan'
AS $$
DECLARE
    v_ids    bigint[];
    v_topics text[];
    v_keys   text[];
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_bury');
    END IF;
    WITH held AS MATERIALIZED (
        SELECT h.id
        FROM (SELECT * FROM unnest((SELECT p_ids), (SELECT p_tokens)) AS u(id, token) ORDER BY u.id) l
        CROSS JOIN LATERAL (
            SELECT m.id
            FROM "${schema}".messages m
            WHERE m.id = l.id
              AND m.lease_token = l.token
              AND m.namespace = p_namespace
            LIMIT 1
            FOR UPDATE
        ) h
    ),
    buried AS (
        DELETE FROM "${schema}".messages m
        WHERE m.id = ANY (ARRAY(SELECT held.id FROM held))
        RETURNING m.*
    ),
    dead AS (
        INSERT INTO "${schema}".dead_letters AS d (id, namespace, topic, payload, headers, priority, attempts,
                                                   max_attempts, unique_key, last_error, published_at, failed_at,
                                                   published_by, failed_by, worker, attempt_started_at, ordering_key)
        SELECT b.id, b.namespace, b.topic, b.payload, b.headers, b.priority, b.attempts, b.max_attempts, b.unique_key,
               p_error, b.published_at, coalesce(p_now, statement_timestamp()), b.published_by, p_failed_by, b.worker,
               b.attempt_started_at, b.ordering_key
        FROM buried b
        RETURNING d.id, d.topic, d.ordering_key
    )
    SELECT array_agg(x.id), array_agg(x.topic::text) FILTER (WHERE x.ordering_key IS NOT NULL),
           array_agg(x.ordering_key::text) FILTER (WHERE x.ordering_key IS NOT NULL)
    INTO v_ids, v_topics, v_keys
    FROM dead x;
    IF v_keys IS NOT NULL THEN
        PERFORM "${schema}"._ordering_advance(array_fill(p_namespace, ARRAY[cardinality(v_keys)]), v_topics, v_keys,
                                              p_now, true);
    END IF;
    RETURN QUERY SELECT u.id FROM unnest(v_ids) AS u(id);
END
$$;


-- The lease then ends p_lease_micros from now (not from its old end). Returns the ids extended.
CREATE OR REPLACE FUNCTION "${schema}"._engine_extend(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_lease_micros bigint, p_now timestamptz)
RETURNS SETOF bigint
LANGUAGE plpgsql
SET plan_cache_mode = 'force_generic_plan'
AS $$
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_extend');
    END IF;
    RETURN QUERY
    WITH held AS MATERIALIZED (
        SELECT h.id
        FROM (SELECT * FROM unnest((SELECT p_ids), (SELECT p_tokens)) AS u(id, token) ORDER BY u.id) l
        CROSS JOIN LATERAL (
            SELECT m.id
            FROM "${schema}".messages m
            WHERE m.id = l.id
              AND m.lease_token = l.token
              AND m.namespace = p_namespace
            LIMIT 1
            FOR UPDATE
        ) h
    )
    UPDATE "${schema}".messages m
    SET lease_until = coalesce(p_now, statement_timestamp()) + p_lease_micros * interval '1 microsecond'
    WHERE m.id = ANY (ARRAY(SELECT held.id FROM held))
    RETURNING m.id;
END
$$;


-- A handler that never started: pending again, due time unchanged, the attempt the claim counted taken back.
CREATE OR REPLACE FUNCTION "${schema}"._engine_release(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_notify boolean)
RETURNS SETOF bigint
LANGUAGE plpgsql
SET plan_cache_mode = 'force_generic_plan'
AS $$
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_release');
    END IF;
    RETURN QUERY
    WITH held AS MATERIALIZED (
        SELECT h.id
        FROM (SELECT * FROM unnest((SELECT p_ids), (SELECT p_tokens)) AS u(id, token) ORDER BY u.id) l
        CROSS JOIN LATERAL (
            SELECT m.id
            FROM "${schema}".messages m
            WHERE m.id = l.id
              AND m.lease_token = l.token
              AND m.namespace = p_namespace
            LIMIT 1
            FOR UPDATE
        ) h
    ),
    released AS (
        UPDATE "${schema}".messages m
        SET state = 'pending', attempts = greatest(m.attempts - 1, 0),
            worker = NULL, lease_token = NULL, lease_until = NULL
        WHERE m.id = ANY (ARRAY(SELECT held.id FROM held))
        RETURNING m.id, m.namespace, m.topic
    ),
    notified AS (
        SELECT pg_notify('${schema}_wakeup', t.namespace || '/' || t.topic), "${schema}"._bump_wake_mark(t.namespace)
        FROM (SELECT DISTINCT r.namespace, r.topic FROM released r) t
        WHERE p_notify
    )
    SELECT r.id FROM released r WHERE (SELECT count(*) FROM notified) >= 0;
END
$$;


-- Held messages back to pending, due at p_run_at (else p_delay_micros from now), the attempt the claim counted
-- taken back and no error recorded: a snooze is neither a failure nor a retry, so the attempt history, which records
-- only attempts that count, has no row for it. Returns the ids snoozed.
CREATE OR REPLACE FUNCTION "${schema}"._engine_snooze(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_delay_micros bigint, p_run_at timestamptz,
    p_now timestamptz, p_notify boolean)
RETURNS SETOF bigint
LANGUAGE plpgsql
SET plan_cache_mode = 'force_generic_plan'
AS $$
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_snooze');
    END IF;
    RETURN QUERY
    WITH held AS MATERIALIZED (
        SELECT h.id
        FROM (SELECT * FROM unnest((SELECT p_ids), (SELECT p_tokens)) AS u(id, token) ORDER BY u.id) l
        CROSS JOIN LATERAL (
            SELECT m.id
            FROM "${schema}".messages m
            WHERE m.id = l.id
              AND m.lease_token = l.token
              AND m.namespace = p_namespace
            LIMIT 1
            FOR UPDATE
        ) h
    ),
    snoozed AS (
        UPDATE "${schema}".messages m
        SET state = 'pending', attempts = greatest(m.attempts - 1, 0),
            run_at = greatest(coalesce(p_run_at, coalesce(p_now, statement_timestamp())
                                                 + coalesce(p_delay_micros, 0) * interval '1 microsecond'),
                              coalesce(p_now, statement_timestamp())),
            worker = NULL, lease_token = NULL, lease_until = NULL
        WHERE m.id = ANY (ARRAY(SELECT held.id FROM held))
        RETURNING m.id, m.namespace, m.topic
    ),
    notified AS (
        SELECT pg_notify('${schema}_wakeup', t.namespace || '/' || t.topic)
        FROM (SELECT DISTINCT s.namespace, s.topic FROM snoozed s) t
        WHERE p_notify
    )
    SELECT s.id FROM snoozed s WHERE (SELECT count(*) FROM notified) >= 0;
END
$$;


-- Cancels a pending, running or waiting message: deletes it, records the cancel in audit_log and, when it was
-- running, notifies the process running it ('cancel:namespace/id'). Returns the state it had, a waiting message
-- reported as 'pending' (it had not run), or NULL when there was none. A cancelled head's key advances.
CREATE OR REPLACE FUNCTION "${schema}"._engine_cancel(p_namespace text, p_id bigint, p_now timestamptz, p_actor text)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    v_state text;
    v_topic text;
    v_key   text;
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_cancel');
    END IF;
    DELETE FROM "${schema}".messages m
    WHERE m.id = p_id AND m.namespace = p_namespace AND m.state IN ('pending', 'running', 'waiting')
    RETURNING m.state, m.topic, m.ordering_key INTO v_state, v_topic, v_key;
    IF v_state IS NULL THEN
        RETURN NULL;
    END IF;
    INSERT INTO "${schema}".audit_log (at, namespace, actor, action, subject, ids, count)
    VALUES (statement_timestamp(), p_namespace, p_actor, 'cancel', v_topic, ARRAY[p_id], 1);
    IF v_state = 'running' THEN
        PERFORM pg_notify('${schema}_wakeup', 'cancel:' || p_namespace || '/' || p_id);
    END IF;
    IF v_key IS NOT NULL AND v_state <> 'waiting' THEN
        PERFORM "${schema}"._ordering_advance(ARRAY[p_namespace], ARRAY[v_topic], ARRAY[v_key], p_now, true);
    END IF;
    RETURN CASE WHEN v_state = 'waiting' THEN 'pending' ELSE v_state END;
END
$$;


-- The leases of an engine_ settle gate: ids and their lease tokens, parallel arrays of 1 to 10,000 elements, none
-- NULL. A settle advances the ordering key of each keyed message it settles under an advisory lock per key: a call
-- of more than 1000 leases is refused when its messages hold more than 1000 keys (one probe of the primary key per
-- id, only then). The Java queue settles at most 500 a call.
CREATE OR REPLACE FUNCTION "${schema}"._check_engine_leases(p_namespace text, p_ids bigint[], p_tokens bigint[])
RETURNS void
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_keys bigint;
BEGIN
    PERFORM "${schema}"._check_array('p_ids', p_ids, 1, 10000);
    PERFORM "${schema}"._check_array('p_tokens', p_tokens, cardinality(p_ids), cardinality(p_ids));
    IF cardinality(p_ids) > 1000 THEN
        SELECT count(*) INTO v_keys
        FROM (SELECT DISTINCT m.topic, m.ordering_key
              FROM "${schema}".messages m
              WHERE m.id = ANY (p_ids) AND m.namespace = p_namespace AND m.ordering_key IS NOT NULL) k;
        IF v_keys > 1000 THEN
            PERFORM "${schema}"._invalid('p_ids', cardinality(p_ids) || ' ids of messages with ' || v_keys
                || ' ordering keys', 'at most 1000 ordering keys a call (each takes a lock): fewer ids');
        END IF;
    END IF;
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_complete(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_archive boolean, p_now timestamptz, p_async boolean)
RETURNS SETOF bigint
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    PERFORM "${schema}"._check_engine_leases(p_namespace, p_ids, p_tokens);
    PERFORM "${schema}"._check_engine_now(p_now);
    -- p_archive NULL: by each queue's policy
    RETURN QUERY SELECT * FROM "${schema}"._engine_complete(p_namespace, p_ids, p_tokens, p_archive, p_now,
                                                            coalesce(p_async, false));
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_retry(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_delay_micros bigint, p_error text, p_now timestamptz,
    p_notify boolean)
RETURNS SETOF bigint
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    PERFORM "${schema}"._check_engine_leases(p_namespace, p_ids, p_tokens);
    -- a backoff's cap of 365 days, spread by a jitter of up to 1: twice that
    PERFORM "${schema}"._check_range('p_delay_micros', p_delay_micros, 0, 63072000000000,
                                     '0 to 63072000000000 microseconds (730 days)');
    PERFORM "${schema}"._check_engine_now(p_now);
    -- an error text is kept, not refused: a blank one says so, a long one is cut
    RETURN QUERY SELECT * FROM "${schema}"._engine_retry(p_namespace, p_ids, p_tokens, p_delay_micros,
        "${schema}"._error_text(p_error), p_now, coalesce(p_notify, false));
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_bury(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_error text, p_now timestamptz, p_failed_by text)
RETURNS SETOF bigint
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    PERFORM "${schema}"._check_engine_leases(p_namespace, p_ids, p_tokens);
    PERFORM "${schema}"._check_engine_now(p_now);
    PERFORM "${schema}"._check_engine_actor('p_failed_by', p_failed_by);
    RETURN QUERY SELECT * FROM "${schema}"._engine_bury(p_namespace, p_ids, p_tokens, "${schema}"._error_text(p_error),
                                                        p_now, p_failed_by);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_extend(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_lease_micros bigint, p_now timestamptz)
RETURNS SETOF bigint
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    PERFORM "${schema}"._check_engine_leases(p_namespace, p_ids, p_tokens);
    PERFORM "${schema}"._check_range('p_lease_micros', p_lease_micros, 1000000, 86400000000,
                                     '1000000 to 86400000000 microseconds (1 s to 24 h)');
    PERFORM "${schema}"._check_engine_now(p_now);
    RETURN QUERY SELECT * FROM "${schema}"._engine_extend(p_namespace, p_ids, p_tokens, p_lease_micros, p_now);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_release(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_notify boolean)
RETURNS SETOF bigint
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    PERFORM "${schema}"._check_engine_leases(p_namespace, p_ids, p_tokens);
    RETURN QUERY SELECT * FROM "${schema}"._engine_release(p_namespace, p_ids, p_tokens, coalesce(p_notify, false));
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_snooze(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_delay_micros bigint, p_run_at timestamptz,
    p_now timestamptz, p_notify boolean)
RETURNS SETOF bigint
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    PERFORM "${schema}"._check_engine_leases(p_namespace, p_ids, p_tokens);
    -- p_run_at wins, and a time in the past means now
    IF p_run_at IS NOT NULL THEN
        PERFORM "${schema}"._check_instant('p_run_at', p_run_at);
    ELSIF p_delay_micros IS NOT NULL THEN
        PERFORM "${schema}"._check_range('p_delay_micros', p_delay_micros, 0, 31536000000000,
                                         '0 to 31536000000000 microseconds (365 days)');
    END IF;
    PERFORM "${schema}"._check_engine_now(p_now);
    RETURN QUERY SELECT * FROM "${schema}"._engine_snooze(p_namespace, p_ids, p_tokens, p_delay_micros, p_run_at,
        p_now, coalesce(p_notify, false));
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_cancel(p_namespace text, p_id bigint, p_now timestamptz, p_actor text)
RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    IF p_id IS NULL THEN
        PERFORM "${schema}"._invalid('p_id', 'null', 'a message id');
    END IF;
    PERFORM "${schema}"._check_engine_now(p_now);
    PERFORM "${schema}"._check_engine_actor('p_actor', p_actor);
    RETURN "${schema}"._engine_cancel(p_namespace, p_id, p_now, p_actor);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".ack(p_namespace text, p_id bigint, p_lease_token bigint DEFAULT NULL) RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
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
CREATE OR REPLACE FUNCTION "${schema}".ack_batch(p_namespace text, p_ids bigint[], p_lease_tokens bigint[] DEFAULT NULL)
RETURNS TABLE (id bigint, acked boolean)
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_keys bigint;
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    -- one dimension first: array_position cannot search more
    PERFORM "${schema}"._check_array('p_ids', p_ids, 0, 10000, true);
    IF p_ids IS NULL OR cardinality(p_ids) > 10000 OR array_position(p_ids, NULL) IS NOT NULL THEN
        PERFORM "${schema}"._invalid('p_ids', coalesce(cardinality(p_ids) || ' ids', 'null'),
            'an array of at most 10000 message ids, none null');
    END IF;
    IF p_lease_tokens IS NOT NULL THEN
        -- a NULL token acknowledges whoever holds that message, as ack without a token does
        PERFORM "${schema}"._check_array('p_lease_tokens', p_lease_tokens, 0, 10000, true);
        IF cardinality(p_lease_tokens) <> cardinality(p_ids) THEN
            PERFORM "${schema}"._invalid('p_lease_tokens', cardinality(p_lease_tokens) || ' tokens',
                'one lease token per id: ' || cardinality(p_ids));
        END IF;
    END IF;
    -- each message completed with an ordering key locks its key: at most 1000 locks per call
    IF cardinality(p_ids) > 1000 THEN
        v_keys := (SELECT count(DISTINCT (m.topic, m.ordering_key)) FROM "${schema}".messages m
                   WHERE m.id = ANY (p_ids) AND m.namespace = p_namespace AND m.state = 'running'
                     AND m.ordering_key IS NOT NULL);
        IF v_keys > 1000 THEN
            PERFORM "${schema}"._invalid('p_ids', cardinality(p_ids) || ' ids of messages with ' || v_keys
                || ' ordering keys', 'messages with at most 1000 distinct ordering keys per call');
        END IF;
    END IF;
    RETURN QUERY
    WITH done AS MATERIALIZED (SELECT c AS id FROM "${schema}"._complete(p_namespace, p_ids, p_lease_tokens) c)
    SELECT u.id, u.id IN (SELECT d.id FROM done d)
    FROM unnest(p_ids) WITH ORDINALITY AS u(id, ord)
    ORDER BY u.ord;
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".nack(p_namespace text, p_id bigint, p_error text DEFAULT NULL,
                                            p_delay interval DEFAULT NULL, p_lease_token bigint DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
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
        PERFORM "${schema}"._engine_bury(v_row.namespace, ARRAY[v_row.id], ARRAY[v_row.lease_token],
                                         "${schema}"._error_text(p_error), NULL, "${schema}".current_actor());
        RETURN true;
    END IF;
    IF p_delay IS NOT NULL THEN
        v_delay := p_delay;
    ELSE
        v_policy := "${schema}".get_queue_policy(v_row.namespace, v_row.topic);
        v_delay := "${schema}".backoff_delay(v_row.attempts, v_policy.backoff_base, v_policy.backoff_cap,
                                             v_policy.backoff_multiplier, v_policy.backoff_jitter, random());
    END IF;
    PERFORM "${schema}"._engine_retry(v_row.namespace, ARRAY[v_row.id], ARRAY[v_row.lease_token],
                                      "${schema}"._micros(v_delay), "${schema}"._error_text(p_error), NULL,
                                      "${schema}"._notify_wanted(NULL));
    RETURN true;
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".fail(p_namespace text, p_id bigint, p_error text DEFAULT NULL,
                                            p_lease_token bigint DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
DECLARE
    v_row "${schema}".messages;
BEGIN
    v_row := "${schema}"._held(p_namespace, p_id, p_lease_token);
    IF v_row.id IS NULL THEN
        RETURN false;
    END IF;
    PERFORM "${schema}"._engine_bury(v_row.namespace, ARRAY[v_row.id], ARRAY[v_row.lease_token],
                                     "${schema}"._error_text(p_error), NULL, "${schema}".current_actor());
    RETURN true;
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".extend_visibility(p_namespace text, p_id bigint, p_extension interval,
                                                         p_lease_token bigint DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
DECLARE
    v_row "${schema}".messages;
BEGIN
    PERFORM "${schema}"._check_interval('p_extension', p_extension, interval '1 second', interval '24 hours', '1 s to 24 h');
    v_row := "${schema}"._held(p_namespace, p_id, p_lease_token);
    IF v_row.id IS NULL THEN
        RETURN false;
    END IF;
    PERFORM "${schema}"._engine_extend(v_row.namespace, ARRAY[v_row.id], ARRAY[v_row.lease_token],
                                       "${schema}"._micros(p_extension), NULL);
    RETURN true;
END
$$;


-- Exactly one of p_delay (0 to 365 days) and p_run_at (a time in the past means now). Guarded like nack: true when
-- the running message (under p_lease_token when given) is pending again.
CREATE OR REPLACE FUNCTION "${schema}".snooze(p_namespace text, p_id bigint, p_delay interval DEFAULT NULL,
                                              p_run_at timestamptz DEFAULT NULL, p_lease_token bigint DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
DECLARE
    v_row "${schema}".messages;
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    IF p_delay IS NULL AND p_run_at IS NULL THEN
        PERFORM "${schema}"._invalid('p_delay', 'null', 'an interval of 0 to 365 days, or p_run_at');
    END IF;
    IF p_delay IS NOT NULL AND p_run_at IS NOT NULL THEN
        PERFORM "${schema}"._invalid('p_run_at', p_run_at::text, 'null when p_delay is given (one of the two)');
    END IF;
    IF p_delay IS NOT NULL THEN
        PERFORM "${schema}"._check_interval('p_delay', p_delay, interval '0', interval '365 days', '0 to 365 days');
    ELSE
        PERFORM "${schema}"._check_instant('p_run_at', p_run_at);
    END IF;
    v_row := "${schema}"._held(p_namespace, p_id, p_lease_token);
    IF v_row.id IS NULL THEN
        RETURN false;
    END IF;
    RETURN EXISTS (SELECT 1 FROM "${schema}"._engine_snooze(v_row.namespace, ARRAY[v_row.id], ARRAY[v_row.lease_token],
                                                            "${schema}"._micros(p_delay), p_run_at, NULL,
                                                            "${schema}"._notify_wanted(NULL)));
END
$$;


-- True when a pending or running message of the namespace was cancelled.
CREATE OR REPLACE FUNCTION "${schema}".cancel(p_namespace text, p_id bigint) RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    IF p_id IS NULL THEN
        PERFORM "${schema}"._invalid('p_id', 'null', 'a message id');
    END IF;
    RETURN "${schema}"._engine_cancel(p_namespace, p_id, NULL, "${schema}".current_actor()) IS NOT NULL;
END
$$;
