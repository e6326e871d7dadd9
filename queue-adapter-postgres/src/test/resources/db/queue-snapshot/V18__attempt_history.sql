-- queue schema, version 18: the attempt history of version 11 completed (docs/tenants.md#attempt-history). Each
-- attempt now has its start and its outcome besides its end, error and worker, and the history says how many
-- older attempts it no longer keeps.
--
-- Where each part comes from, so that no statement does more per message than before:
-- - the start of the running attempt is a column of messages, set by the claim in the UPDATE it already does.
--   Dead-lettering copies it into dead_letters and an archived completion into completed_messages, in the
--   statements that already copy the row.
-- - an attempt that ended in a retry, an expired lease or a dead letter is a row of attempt_errors, as before,
--   now with its start and its outcome. The retry and the rescue write it themselves instead of the trigger of
--   version 11, because only they know the clock they ran with (the Java engine passes its own) and which of the
--   two it was. The dead letter's row still comes from the trigger on dead_letters.
-- - a successful attempt writes nothing new: the running one is read from messages, a completed one from the
--   archive when the queue archives, else it is gone with its message.
-- - each row carries its ordinal, its place among all the ended attempts of the message (not reset by a redrive),
--   so the attempts no longer kept are counted exactly as the first kept ordinal minus one, without a counter to
--   update.
-- Outcomes: 'retry' (a nack or failure with attempts left), 'lease_expired' (the rescue gave it back), 'dead' (it
-- made the dead letter: fail, the last attempt's nack or failure, or its lease expiring), and, never stored,
-- 'running' and 'completed'. A cancel removes the message with its history, as before. Rows written before this
-- version have no start and no outcome.

-- ------------------------------------------------------------------ columns

ALTER TABLE "${schema}".messages ADD COLUMN attempt_started_at timestamptz;
ALTER TABLE "${schema}".dead_letters ADD COLUMN attempt_started_at timestamptz;
ALTER TABLE "${schema}".completed_messages ADD COLUMN attempt_started_at timestamptz;

ALTER TABLE "${schema}".attempt_errors
    ADD COLUMN started_at timestamptz,
    ADD COLUMN outcome    text,
    ADD COLUMN ordinal    integer,
    ADD CONSTRAINT attempt_errors_outcome CHECK (outcome IN ('retry', 'lease_expired', 'dead'));

-- the rows kept so far count from 1: what was dropped before this version is not known
UPDATE "${schema}".attempt_errors a
SET ordinal = n.ordinal
FROM (SELECT x.id, row_number() OVER (PARTITION BY x.message_id ORDER BY x.id)::integer AS ordinal
      FROM "${schema}".attempt_errors x) n
WHERE a.id = n.id;

ALTER TABLE "${schema}".attempt_errors ALTER COLUMN ordinal SET NOT NULL;

-- ------------------------------------------------------------------ recording an ended attempt

-- The latest row's ordinal is one probe of attempt_errors_message_idx, older rows are looked for only once a
-- message has ended more than 20 attempts.
CREATE FUNCTION "${schema}"._record_attempt(p_id bigint, p_namespace text, p_attempt integer, p_error text,
                                            p_worker text, p_started_at timestamptz, p_ended_at timestamptz,
                                            p_outcome text, p_actor text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_last integer;
BEGIN
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

CREATE OR REPLACE FUNCTION "${schema}"._trail_dead() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp AS $$
BEGIN
    PERFORM "${schema}"._record_attempt(NEW.id, NEW.namespace, NEW.attempts, NEW.last_error, NEW.worker,
                                        NEW.attempt_started_at, NEW.failed_at, 'dead', NEW.failed_by);
    RETURN NULL;
END
$$;

-- the retry and the rescue record their attempts themselves (below)
DROP TRIGGER messages_trail_retry ON "${schema}".messages;
DROP FUNCTION "${schema}"._trail_retry();
DROP FUNCTION "${schema}"._record_attempt(bigint, text, integer, text, text, timestamptz, text);

-- ------------------------------------------------------------------ the engine, re-created

-- Version 14's claim, also setting the attempt's start.
CREATE OR REPLACE FUNCTION "${schema}"._engine_claim(
    p_namespace text, p_topics text[], p_worker text, p_limit integer, p_lease_token bigint, p_lease_micros bigint,
    p_now timestamptz, p_async boolean, p_after_priorities integer[], p_after_run_at_micros bigint[],
    p_after_ids bigint[])
RETURNS TABLE (id bigint, namespace text, topic text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, lease_token bigint, worker text, lease_until timestamptz,
               published_at timestamptz, run_at timestamptz, unique_key text, published_by text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_paused text[];
BEGIN
    -- before reading the pauses, so that a pause committing meanwhile is seen by the next statement
    PERFORM pg_advisory_xact_lock_shared("${schema}"._flow_lock_key(p_namespace, t.topic))
    FROM unnest(p_topics) AS t(topic);
    v_paused := ARRAY(SELECT p.topic::text FROM "${schema}".paused_topics p
                      WHERE p.namespace = p_namespace AND p.topic = ANY (p_topics));
    RETURN QUERY
    WITH picked AS MATERIALIZED (
        SELECT c.id, t.ord, r.part
        FROM unnest((SELECT p_topics), (SELECT p_after_priorities), (SELECT p_after_run_at_micros),
                    (SELECT p_after_ids))
             WITH ORDINALITY AS t(topic, after_priority, after_run_at_micros, after_id, ord)
        CROSS JOIN (VALUES (1), (2)) AS r(part)
        CROSS JOIN LATERAL (
            SELECT m.id, m.priority, m.run_at
            FROM "${schema}".messages m
            WHERE m.namespace = p_namespace
              AND m.topic = t.topic
              AND m.state = 'pending'
              AND m.run_at <= (SELECT coalesce(p_now, statement_timestamp()))
              AND (m.priority, m.run_at, m.id) > (
                  CASE r.part WHEN 1 THEN -1 ELSE t.after_priority END::smallint,
                  CASE r.part WHEN 1 THEN '-infinity'::timestamptz
                       ELSE timestamptz 'epoch' + t.after_run_at_micros * interval '1 microsecond' END,
                  CASE r.part WHEN 1 THEN 0 ELSE t.after_id END)
              AND m.priority < (CASE WHEN r.part = 1 AND t.after_id IS NOT NULL THEN t.after_priority ELSE 10 END)::smallint
            ORDER BY m.priority, m.run_at, m.id
            LIMIT (SELECT p_limit)
            FOR UPDATE SKIP LOCKED
        ) c
        WHERE (r.part = 1 OR t.after_id IS NOT NULL)
          AND NOT (t.topic = ANY (v_paused))
        ORDER BY t.ord, r.part, c.priority, c.run_at, c.id
        LIMIT (SELECT p_limit)
    ),
    claimed AS (
        UPDATE "${schema}".messages m
        SET state = 'running',
            attempts = m.attempts + 1,
            worker = p_worker,
            attempt_started_at = coalesce(p_now, statement_timestamp()),
            lease_token = p_lease_token,
            lease_until = coalesce(p_now, statement_timestamp()) + p_lease_micros * interval '1 microsecond'
        WHERE m.id = ANY (ARRAY(SELECT p.id FROM picked p))
        RETURNING m.id, m.namespace, m.topic, m.payload, m.headers, m.priority, m.attempts, m.max_attempts,
                  m.lease_token, m.worker, m.lease_until, m.published_at, m.run_at, m.unique_key, m.published_by
    )
    SELECT c.id, c.namespace::text, c.topic::text, c.payload, c.headers, c.priority::integer, c.attempts,
           c.max_attempts, c.lease_token, c.worker, c.lease_until, c.published_at, c.run_at, c.unique_key::text,
           c.published_by
    FROM claimed c JOIN picked p ON p.id = c.id
    WHERE NOT p_async OR (SELECT set_config('synchronous_commit', 'off', true)) = 'off'
    ORDER BY p.ord, p.part, c.priority, c.run_at, c.id;
END
$$;

-- Version 10's completion, the archive also keeping the start of the attempt that completed.
CREATE OR REPLACE FUNCTION "${schema}"._engine_complete(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_archive boolean, p_now timestamptz, p_async boolean)
RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
BEGIN
    IF p_archive IS DISTINCT FROM false THEN
        RETURN QUERY
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
                                                        published_by, attempt_started_at)
            SELECT d.id, d.namespace, d.topic, d.payload, d.headers, d.priority, d.attempts, d.max_attempts,
                   d.unique_key, d.worker, d.published_at, coalesce(p_now, statement_timestamp()), d.published_by,
                   d.attempt_started_at
            FROM done d
            WHERE coalesce(p_archive, ("${schema}".get_queue_policy(d.namespace, d.topic)).archive_completed)
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
        WHERE NOT p_async OR (SELECT set_config('synchronous_commit', 'off', true)) = 'off';
    ELSE
        -- without the archive only the id and queue of each row are returned: the whole row copied every payload
        RETURN QUERY
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
            RETURNING m.id, m.namespace, m.topic
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
        WHERE NOT p_async OR (SELECT set_config('synchronous_commit', 'off', true)) = 'off';
    END IF;
END
$$;

-- Version 10's retry, recording the attempt (outcome 'retry') with the caller's clock.
CREATE OR REPLACE FUNCTION "${schema}"._engine_retry(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_delay_micros bigint, p_error text, p_now timestamptz,
    p_notify boolean)
RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
BEGIN
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

-- Version 10's dead-lettering, the dead letter keeping the start of its last attempt (for the trigger's row).
CREATE OR REPLACE FUNCTION "${schema}"._engine_bury(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_error text, p_now timestamptz, p_failed_by text)
RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
BEGIN
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
    buried AS (
        DELETE FROM "${schema}".messages m
        WHERE m.id = ANY (ARRAY(SELECT held.id FROM held))
        RETURNING m.*
    ),
    dead AS (
        INSERT INTO "${schema}".dead_letters AS d (id, namespace, topic, payload, headers, priority, attempts,
                                                   max_attempts, unique_key, last_error, published_at, failed_at,
                                                   published_by, failed_by, worker, attempt_started_at)
        SELECT b.id, b.namespace, b.topic, b.payload, b.headers, b.priority, b.attempts, b.max_attempts, b.unique_key,
               p_error, b.published_at, coalesce(p_now, statement_timestamp()), b.published_by, p_failed_by, b.worker,
               b.attempt_started_at
        FROM buried b
        RETURNING d.id
    )
    SELECT x.id FROM dead x;
END
$$;

-- Version 10's rescue, recording the attempts it gives back (outcome 'lease_expired'), those it buries are recorded
-- by the trigger on dead_letters (outcome 'dead').
CREATE OR REPLACE FUNCTION "${schema}"._engine_rescue(p_namespace text, p_limit integer, p_now timestamptz, p_notify boolean,
                                            p_expired_since timestamptz)
RETURNS TABLE (requeued bigint, dead_lettered bigint, looked_up_to timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH expired AS MATERIALIZED (
        SELECT m.id, m.attempts >= m.max_attempts AS exhausted, m.namespace, m.attempts, m.worker,
               m.attempt_started_at
        FROM "${schema}".messages m
        WHERE m.state = 'running'
          AND m.lease_until < coalesce(p_now, statement_timestamp())
          AND m.lease_until >= coalesce(p_expired_since, '-infinity')
          AND (p_namespace IS NULL OR m.namespace = p_namespace)
        ORDER BY m.lease_until
        LIMIT p_limit
        FOR UPDATE SKIP LOCKED
    ),
    back AS (
        UPDATE "${schema}".messages m
        SET state = 'pending', run_at = coalesce(p_now, statement_timestamp()),
            worker = NULL, lease_token = NULL, lease_until = NULL,
            last_error = 'lease expired'
        FROM expired e
        WHERE m.id = e.id AND NOT e.exhausted
        RETURNING m.id, m.namespace, m.topic
    ),
    recorded AS (
        SELECT "${schema}"._record_attempt(e.id, e.namespace, e.attempts, 'lease expired', e.worker,
                                           e.attempt_started_at, coalesce(p_now, statement_timestamp()),
                                           'lease_expired', nullif(current_setting('queue.actor', true), ''))
        FROM expired e
        WHERE e.id IN (SELECT r.id FROM back r)
    ),
    buried AS (
        DELETE FROM "${schema}".messages m
        USING expired e
        WHERE m.id = e.id AND e.exhausted
        RETURNING m.*
    ),
    dead AS (
        INSERT INTO "${schema}".dead_letters (id, namespace, topic, payload, headers, priority, attempts, max_attempts,
                                              unique_key, last_error, published_at, failed_at, published_by, worker,
                                              attempt_started_at)
        SELECT b.id, b.namespace, b.topic, b.payload, b.headers, b.priority, b.attempts, b.max_attempts, b.unique_key,
               'lease expired on its last attempt', b.published_at, coalesce(p_now, statement_timestamp()),
               b.published_by, b.worker, b.attempt_started_at
        FROM buried b
    ),
    notified AS (
        SELECT pg_notify('${schema}_wakeup', t.namespace || '/' || t.topic)
        FROM (SELECT DISTINCT r.namespace, r.topic FROM back r) t
        WHERE p_notify
    )
    SELECT (SELECT count(*) FROM back) + 0 * (SELECT count(*) FROM recorded),
           (SELECT count(*) FROM buried) + 0 * (SELECT count(*) FROM notified),
           coalesce(p_now, statement_timestamp());
END
$$;

-- ------------------------------------------------------------------ reading the history

-- The attempts of a live, dead or archived message of the namespace, oldest first: the ended ones kept (at most
-- 20), then the running one (from messages) or the completed one (from the archive). ordinal is NULL for those two.
DROP FUNCTION "${schema}".engine_attempts(text, bigint);
DROP FUNCTION "${schema}"._engine_attempts(text, bigint);

CREATE FUNCTION "${schema}"._engine_attempts(p_namespace text, p_id bigint)
RETURNS TABLE (attempt integer, outcome text, worker text, started_at timestamptz, ended_at timestamptz, error text,
               actor text, ordinal integer)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
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

CREATE FUNCTION "${schema}".engine_attempts(p_namespace text, p_id bigint)
RETURNS TABLE (attempt integer, outcome text, worker text, started_at timestamptz, ended_at timestamptz, error text,
               actor text, ordinal integer)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_attempts(p_namespace, p_id);
END
$$;

-- The same as one JSON array (NULL when there is no attempt), and how many older ended attempts are not kept.
CREATE FUNCTION "${schema}"._attempt_history(p_namespace text, p_id bigint)
RETURNS TABLE (history jsonb, not_kept integer)
LANGUAGE sql STABLE AS $$
    SELECT jsonb_agg(jsonb_build_object('attempt', a.attempt, 'outcome', a.outcome, 'worker', a.worker,
                                        'started_at', a.started_at, 'ended_at', a.ended_at, 'error', a.error,
                                        'actor', a.actor) ORDER BY a.n),
           coalesce(min(a.ordinal) - 1, 0)
    FROM "${schema}"._engine_attempts(p_namespace, p_id)
         WITH ORDINALITY AS a(attempt, outcome, worker, started_at, ended_at, error, actor, ordinal, n)
$$;

DROP FUNCTION "${schema}".inspect_attempts(text, bigint);

CREATE FUNCTION "${schema}".inspect_attempts(p_namespace text, p_id bigint)
RETURNS TABLE (attempt integer, outcome text, worker_id text, started_at timestamptz, ended_at timestamptz,
               error text, actor text, ordinal integer)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    IF p_id IS NULL THEN
        PERFORM "${schema}"._invalid('p_id', 'null', 'a message id');
    END IF;
    RETURN QUERY SELECT * FROM "${schema}"._engine_attempts(p_namespace, p_id);
END
$$;

-- Version 10's inspect with the attempt history and the count of attempts it no longer keeps.
DROP FUNCTION "${schema}".inspect(text, bigint);

CREATE FUNCTION "${schema}".inspect(p_namespace text, p_id bigint)
RETURNS TABLE (id bigint, queue text, state text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, unique_key text, published_at timestamptz, run_at timestamptz,
               lease_until timestamptz, worker_id text, last_error text, failed_at timestamptz, published_by text,
               failed_by text, attempt_history jsonb, attempts_not_kept integer)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    IF p_id IS NULL THEN
        PERFORM "${schema}"._invalid('p_id', 'null', 'a message id');
    END IF;
    RETURN QUERY
    SELECT f.id, f.topic, f.state, f.payload, f.headers, f.priority, f.attempts, f.max_attempts, f.unique_key,
           f.published_at, f.run_at, f.lease_until, f.worker, f.last_error, f.failed_at, f.published_by, f.failed_by,
           h.history, h.not_kept
    FROM "${schema}"._engine_find(p_namespace, p_id) f
    CROSS JOIN "${schema}"._attempt_history(p_namespace, p_id) h;
END
$$;

-- Version 12's explain, its attempt_history with the start and outcome of each attempt and the running or
-- completed one, and the count of attempts no longer kept.
DROP FUNCTION "${schema}".explain(text, bigint);

CREATE FUNCTION "${schema}".explain(p_namespace text, p_id bigint)
RETURNS TABLE (verdict text, id bigint, queue text, state text, now timestamptz, run_at timestamptz,
               attempts integer, max_attempts integer, last_error text, worker text, lease_until timestamptz,
               worker_alive boolean, live_subscribers integer, unique_key text, key_held_by bigint,
               failed_at timestamptz, completed_at timestamptz, attempt_history jsonb, attempts_not_kept integer)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
    v_now   timestamptz := statement_timestamp();
    m       "${schema}".messages;
    d       "${schema}".dead_letters;
    c       "${schema}".completed_messages;
    v_error text;
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
