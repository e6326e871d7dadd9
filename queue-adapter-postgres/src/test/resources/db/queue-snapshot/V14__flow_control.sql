-- queue schema, version 14: flow control, first slice (docs/flow-control.md). A topic (a queue, in SQL) can be
-- paused and resumed for the whole fleet, a pending or running message cancelled, and a running one snoozed by its
-- holder: due again later without spending an attempt and without the retry path.
--
-- Pausing is a row in paused_topics, read by the claim. A claim takes a shared advisory lock per topic it claims
-- from before it reads that table, and a pause takes the same lock exclusively before it writes its row: the pause
-- waits for claims already under way to commit, and a claim arriving meanwhile waits for the pause, then sees the
-- row. So once pause_queue has committed, no claim of any process starts a message of that topic. The locks are
-- held to the end of the claiming transaction (the Java engine claims in a statement of its own).

-- ------------------------------------------------------------------ paused topics

CREATE TABLE "${schema}".paused_topics (
    namespace text COLLATE "C" NOT NULL,
    topic     text COLLATE "C" NOT NULL,
    paused_at timestamptz      NOT NULL,
    paused_by text,
    CONSTRAINT paused_topics_pkey PRIMARY KEY (namespace, topic)
);

-- The advisory lock key of a topic's claims. Seeded with the schema, so two queue schemas in one database do not
-- wait for each other (a collision would only make a claim wait for an unrelated pause, never change a result).
CREATE FUNCTION "${schema}"._flow_lock_key(p_namespace text, p_topic text) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT hashtextextended(p_namespace || '/' || p_topic, hashtext('${schema}')::bigint)
$$;

-- ------------------------------------------------------------------ the claim, with the pause

-- Version 10's claim with the same arguments and results, leaving out the topics paused in the namespace. The
-- paused topics are read once per call (a primary key probe of a table with a row per paused topic), and the
-- filter applies to the list of topics, before any message row is looked at.
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

-- ------------------------------------------------------------------ engine functions

-- Pauses (p_paused) or resumes a topic. True when that changed something, recorded in audit_log with the actor.
-- A resume wakes the topic's subscribers (p_notify). The exclusive lock makes a pause wait for claims under way.
CREATE FUNCTION "${schema}"._engine_pause_topic(p_namespace text, p_topic text, p_paused boolean, p_now timestamptz,
                                                p_notify boolean, p_actor text)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    IF p_paused THEN
        PERFORM pg_advisory_xact_lock("${schema}"._flow_lock_key(p_namespace, p_topic));
        INSERT INTO "${schema}".paused_topics (namespace, topic, paused_at, paused_by)
        VALUES (p_namespace, p_topic, coalesce(p_now, statement_timestamp()), p_actor)
        ON CONFLICT (namespace, topic) DO NOTHING;
    ELSE
        DELETE FROM "${schema}".paused_topics p WHERE p.namespace = p_namespace AND p.topic = p_topic;
    END IF;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    INSERT INTO "${schema}".audit_log (at, namespace, actor, action, subject, ids, count)
    VALUES (statement_timestamp(), p_namespace, p_actor, CASE WHEN p_paused THEN 'pause_queue' ELSE 'resume_queue' END,
            p_topic, NULL, 1);
    IF NOT p_paused AND p_notify THEN
        PERFORM pg_notify('${schema}_wakeup', p_namespace || '/' || p_topic);
    END IF;
    RETURN true;
END
$$;

-- The paused topics of a namespace, by name.
CREATE FUNCTION "${schema}"._engine_paused_topics(p_namespace text)
RETURNS TABLE (topic text, paused_at timestamptz, paused_by text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY SELECT p.topic::text, p.paused_at, p.paused_by
                 FROM "${schema}".paused_topics p
                 WHERE p.namespace = p_namespace
                 ORDER BY p.topic;
END
$$;

-- A pending or running message of the namespace leaves the hot table without running (again), recorded in
-- audit_log ('cancel', the topic, the id) with the actor. Returns the state it left, NULL when there was none
-- (dead, completed, unknown, another namespace's). A running one's holder finds its lease gone: its later ack,
-- nack, fail, extend or snooze change nothing. The row lock orders a cancel with a concurrent settle: whichever
-- commits first wins, the other finds nothing.
CREATE FUNCTION "${schema}"._engine_cancel(p_namespace text, p_id bigint, p_now timestamptz, p_actor text)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    v_state text;
    v_topic text;
BEGIN
    DELETE FROM "${schema}".messages m
    WHERE m.id = p_id AND m.namespace = p_namespace AND m.state IN ('pending', 'running')
    RETURNING m.state, m.topic INTO v_state, v_topic;
    IF v_state IS NULL THEN
        RETURN NULL;
    END IF;
    INSERT INTO "${schema}".audit_log (at, namespace, actor, action, subject, ids, count)
    VALUES (statement_timestamp(), p_namespace, p_actor, 'cancel', v_topic, ARRAY[p_id], 1);
    RETURN v_state;
END
$$;

-- Held messages back to pending, due at p_run_at (else p_delay_micros from now), the attempt the claim counted
-- taken back and no error recorded: a snooze is neither a failure nor a retry (the attempt trail of version 11
-- records only a return to pending that keeps its attempt). Returns the ids snoozed.
CREATE FUNCTION "${schema}"._engine_snooze(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_delay_micros bigint, p_run_at timestamptz,
    p_now timestamptz, p_notify boolean)
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

-- ------------------------------------------------------------------ gates (version 13's pattern)

CREATE FUNCTION "${schema}".engine_pause_topic(p_namespace text, p_topic text, p_paused boolean, p_now timestamptz,
                                               p_notify boolean, p_actor text)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_engine_namespace(p_namespace);
    RETURN "${schema}"._engine_pause_topic(p_namespace, p_topic, p_paused, p_now, p_notify, p_actor);
END
$$;

CREATE FUNCTION "${schema}".engine_paused_topics(p_namespace text)
RETURNS TABLE (topic text, paused_at timestamptz, paused_by text)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM "${schema}"._check_engine_namespace(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_paused_topics(p_namespace);
END
$$;

CREATE FUNCTION "${schema}".engine_cancel(p_namespace text, p_id bigint, p_now timestamptz, p_actor text)
RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_engine_namespace(p_namespace);
    RETURN "${schema}"._engine_cancel(p_namespace, p_id, p_now, p_actor);
END
$$;

CREATE FUNCTION "${schema}".engine_snooze(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_delay_micros bigint, p_run_at timestamptz,
    p_now timestamptz, p_notify boolean)
RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_engine_namespace(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_snooze(p_namespace, p_ids, p_tokens, p_delay_micros, p_run_at,
        p_now, p_notify);
END
$$;

-- ------------------------------------------------------------------ the SQL functions

-- True when the queue was running and is paused now. Messages already running finish, nothing new is claimed.
CREATE FUNCTION "${schema}".pause_queue(p_namespace text, p_queue text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    PERFORM "${schema}"._check_name('p_queue', p_queue);
    RETURN "${schema}"._engine_pause_topic(p_namespace, p_queue, true, NULL, false, "${schema}".current_actor());
END
$$;

-- True when the queue was paused and runs again: its subscribers are woken (unless queue.notify is off).
CREATE FUNCTION "${schema}".resume_queue(p_namespace text, p_queue text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    PERFORM "${schema}"._check_name('p_queue', p_queue);
    RETURN "${schema}"._engine_pause_topic(p_namespace, p_queue, false, NULL, "${schema}"._notify_wanted(NULL),
                                           "${schema}".current_actor());
END
$$;

CREATE FUNCTION "${schema}".list_paused_queues(p_namespace text)
RETURNS TABLE (queue text, paused_at timestamptz, paused_by text)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_paused_topics(p_namespace);
END
$$;

-- True when a pending or running message of the namespace was cancelled.
CREATE FUNCTION "${schema}".cancel(p_namespace text, p_id bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    IF p_id IS NULL THEN
        PERFORM "${schema}"._invalid('p_id', 'null', 'a message id');
    END IF;
    RETURN "${schema}"._engine_cancel(p_namespace, p_id, NULL, "${schema}".current_actor()) IS NOT NULL;
END
$$;

-- Exactly one of p_delay (0 to 365 days) and p_run_at (a time in the past means now). Guarded like nack: true when
-- the running message (under p_lease_token when given) is pending again.
CREATE FUNCTION "${schema}".snooze(p_namespace text, p_id bigint, p_delay interval DEFAULT NULL,
                                   p_run_at timestamptz DEFAULT NULL, p_lease_token bigint DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql AS $$
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
