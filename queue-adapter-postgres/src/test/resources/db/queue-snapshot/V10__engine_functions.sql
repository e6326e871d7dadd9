-- queue schema, version 10: the engine. Every transition of a message (publish, claim, complete, retry, dead
-- letter, extend, release, rescue, redrive, purge) and the reads the Java adapter makes are defined once here, as
-- functions whose names start with _engine_. The Java adapter calls them directly, and the public functions of
-- version 9 are re-created (same signatures) to check their input, resolve the queue policy and then call them.
--
-- Engine functions trust their input and decide nothing themselves: the caller passes the time (p_now, NULL for
-- statement_timestamp()), the retry delay, whether to archive, the actor and which wake-ups to send. They never
-- read the tenant or actor settings, so what the Java adapter does cannot depend on a pooled session's state.
--
-- They are PL/pgSQL with static SQL: PostgreSQL keeps the plans of their statements for the session (a
-- LANGUAGE sql function that is not inlined is planned again at every call before version 18). Parameters that
-- decide the plan (arrays, limits, the time) are read through a sub-select, (SELECT p_x): the generic and the
-- custom plans then see the same unknown value, cost the same, and the generic plan is kept instead of planning
-- every call (the estimate of an array parameter's unnest is otherwise ten rows in one and the actual count in
-- the other).

-- ------------------------------------------------------------------ publishing

-- A publish with unique keys (or to a queue not yet registered), in the caller's order ("ord" from 1): the id of
-- each message and whether it was a duplicate (the id is then the holder's). Within the batch only the first
-- message of a key is inserted, later ones are its duplicates. Ids are drawn in the caller's order, rows inserted
-- in key order (two batches with overlapping keys lock them in the same order). ON CONFLICT DO NOTHING skips keys
-- held by a live message and the holder is found by a probe of the unique index. A holder committed after the
-- statement's snapshot is not visible to that probe, nor is one that was freed meanwhile: those messages go
-- round again (a new statement, a new snapshot), at most ten rounds. Rows of a later round come after the rows of
-- the earlier ones: callers sort by ord. Every join is a hash lookup or an index probe per message, never a nested
-- loop over two unnested arrays (a batch holds up to 10,000).
-- The worker whose attempt made a dead letter (NULL when nothing held it, as for a redrive's purge).
ALTER TABLE "${schema}".dead_letters ADD COLUMN worker text;

CREATE FUNCTION "${schema}"._engine_publish(
    p_namespaces text[], p_topics text[], p_payloads text[], p_headers text[], p_priorities integer[],
    p_max_attempts integer[], p_unique_keys text[], p_run_at_us bigint[], p_delay_us bigint[],
    p_now timestamptz, p_notify boolean, p_actor text)
RETURNS TABLE (ord integer, id bigint, duplicate boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_open  integer[];
    v_ords  integer[];
    v_ids   bigint[];
    v_dups  boolean[];
    v_round integer := 0;
BEGIN
    IF coalesce(cardinality(p_namespaces), 0) = 0 THEN
        RETURN;
    END IF;
    LOOP
        WITH input AS MATERIALIZED (
            SELECT w.*, nextval('"${schema}".message_ids') AS new_id
            FROM (
                SELECT i.*,
                       (i.unique_key IS NULL
                        OR i.ord = min(i.ord) OVER (PARTITION BY i.namespace, i.topic, i.unique_key)) AS first_of_key
                FROM unnest(p_namespaces, p_topics, p_payloads, p_headers, p_priorities, p_max_attempts,
                            p_unique_keys, p_run_at_us, p_delay_us)
                     WITH ORDINALITY AS i(namespace, topic, payload, headers, priority, max_attempts, unique_key,
                                          run_at_us, delay_us, ord)
                WHERE v_open IS NULL OR i.ord = ANY (v_open)
            ) w
            ORDER BY w.ord
        ),
        inserted AS (
            INSERT INTO "${schema}".messages AS m (id, namespace, topic, payload, headers, priority, max_attempts,
                                                   unique_key, run_at, published_at, published_by)
            SELECT x.new_id, x.namespace, x.topic, x.payload::json, x.headers::jsonb, x.priority, x.max_attempts,
                   x.unique_key,
                   coalesce(timestamptz 'epoch' + x.run_at_us * interval '1 microsecond',
                            coalesce(p_now, statement_timestamp()) + coalesce(x.delay_us, 0) * interval '1 microsecond'),
                   coalesce(p_now, statement_timestamp()), p_actor
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
END
$$;

-- The publish of a batch without unique keys to registered queues: one multi-row insert in the caller's order
-- (ids come from the sequence in that order, so sorting them restores it) and the wake-ups in p_notify_keys
-- ("namespace/topic", the ones the publisher's limiter allows), sent in this transaction (delivered on commit).
CREATE FUNCTION "${schema}"._engine_publish_fast(
    p_namespaces text[], p_topics text[], p_payloads text[], p_headers text[], p_priorities integer[],
    p_max_attempts integer[], p_run_at_us bigint[], p_delay_us bigint[], p_notify_keys text[], p_now timestamptz,
    p_actor text)
RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
BEGIN
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
    END IF;
END
$$;

-- The same for one message: a one-row insert with scalar parameters plans and runs cheaper than unnesting
-- one-element arrays. p_notify_key NULL: the limiter holds this wake-up back.
CREATE FUNCTION "${schema}"._engine_publish_one(
    p_namespace text, p_topic text, p_payload text, p_headers text, p_priority integer, p_max_attempts integer,
    p_run_at_us bigint, p_delay_us bigint, p_notify_key text, p_now timestamptz, p_actor text)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint;
BEGIN
    INSERT INTO "${schema}".messages (namespace, topic, payload, headers, priority, max_attempts, run_at, published_at,
                                      published_by)
    VALUES (p_namespace, p_topic, p_payload::json, p_headers::jsonb, p_priority, p_max_attempts,
            coalesce(timestamptz 'epoch' + p_run_at_us * interval '1 microsecond',
                     coalesce(p_now, statement_timestamp()) + coalesce(p_delay_us, 0) * interval '1 microsecond'),
            coalesce(p_now, statement_timestamp()), p_actor)
    RETURNING id INTO v_id;
    IF p_notify_key IS NOT NULL THEN
        PERFORM pg_notify('${schema}_wakeup', p_notify_key);
    END IF;
    RETURN v_id;
END
$$;

-- ------------------------------------------------------------------ claiming

-- Per topic in the order given, the first due pending rows in claim order (priority, due time, id) from the
-- partial index messages_claim_idx, locked with FOR UPDATE SKIP LOCKED (rows another claim holds are skipped,
-- never waited for), then leased under p_lease_token for p_lease_micros. MATERIALIZED runs the pick exactly once,
-- before the UPDATE. The UPDATE reaches the picked rows by primary key probes (id = ANY), never by a join: under
-- a generic plan, which does not know the limit, a merge join read the primary key from its start.
-- p_async: commit without waiting for the WAL flush, for this transaction only (set_config(..., true)), set in
-- the statement itself: a sub-select without reference to the rows is a one-time filter, evaluated once before
-- the first row even when no row comes, and it spares the function a statement of its own.
-- No rescue of expired leases here: the Java engine rescues on its own schedule, pull() calls rescue first.
CREATE FUNCTION "${schema}"._engine_claim(
    p_namespace text, p_topics text[], p_worker text, p_limit integer, p_lease_token bigint, p_lease_micros bigint,
    p_now timestamptz, p_async boolean, p_after_priorities integer[], p_after_run_at_micros bigint[],
    p_after_ids bigint[])
RETURNS TABLE (id bigint, namespace text, topic text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, lease_token bigint, worker text, lease_until timestamptz,
               published_at timestamptz, run_at timestamptz, unique_key text, published_by text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
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
        WHERE r.part = 1 OR t.after_id IS NOT NULL
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

-- ------------------------------------------------------------------ changes under a lease

-- Every change of a leased message takes the rows still held under the caller's lease (p_ids with p_tokens, same
-- namespace). SQL callers without a token pass the token of whoever holds the message. Rows no longer held are
-- not touched and their ids are missing from the result (LEASE_LOST). The leases drive the statement, sorted by
-- id, and each is looked up by primary key with LIMIT 1, so locks are taken in id order (overlapping batches
-- cannot deadlock) and the plan stays one index probe per lease whatever the statistics say: a queue table's
-- statistics are always stale, and a vacuum that found the table empty for a moment makes the planner take it
-- for one row. Matching the token is matching a running lease (CHECK messages_state_machine), so no filter on
-- state is needed when a token is given. Every change also reaches the rows by the ids found (id = ANY), an
-- index condition under any estimate.

-- Completed rows leave the hot table (deleted, or moved to the archive: p_archive, NULL for the queue policy of
-- each row) and count in a counter shard. The leases are probed without FOR UPDATE: the DELETE locks each row and
-- matches the token again, so a row whose lease changed between the probe and the delete is left alone. A row
-- lock taken first would cost a WAL record of its own per message acknowledged. p_async as in _engine_claim.
CREATE FUNCTION "${schema}"._engine_complete(
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
                                                        published_by)
            SELECT d.id, d.namespace, d.topic, d.payload, d.headers, d.priority, d.attempts, d.max_attempts,
                   d.unique_key, d.worker, d.published_at, coalesce(p_now, statement_timestamp()), d.published_by
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

-- Back to pending after p_delay_micros, with the error. Whether a failure retries or dead-letters, and after which
-- delay, is the caller's decision (the Java Lifecycle and backoff, or nack's queue policy). Returns the ids retried.
CREATE FUNCTION "${schema}"._engine_retry(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_delay_micros bigint, p_error text, p_now timestamptz,
    p_notify boolean)
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
    notified AS (
        SELECT pg_notify('${schema}_wakeup', t.namespace || '/' || t.topic)
        FROM (SELECT DISTINCT r.namespace, r.topic FROM retried r) t
        WHERE p_notify
    )
    SELECT r.id FROM retried r WHERE (SELECT count(*) FROM notified) >= 0;
END
$$;

-- To the dead letters with the error, whatever attempts are left (the caller decided). Returns the ids buried.
CREATE FUNCTION "${schema}"._engine_bury(
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
                                                   published_by, failed_by, worker)
        SELECT b.id, b.namespace, b.topic, b.payload, b.headers, b.priority, b.attempts, b.max_attempts, b.unique_key,
               p_error, b.published_at, coalesce(p_now, statement_timestamp()), b.published_by, p_failed_by, b.worker
        FROM buried b
        RETURNING d.id
    )
    SELECT x.id FROM dead x;
END
$$;

-- The lease then ends p_lease_micros from now (not from its old end). Returns the ids extended.
CREATE FUNCTION "${schema}"._engine_extend(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_lease_micros bigint, p_now timestamptz)
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
    )
    UPDATE "${schema}".messages m
    SET lease_until = coalesce(p_now, statement_timestamp()) + p_lease_micros * interval '1 microsecond'
    WHERE m.id = ANY (ARRAY(SELECT held.id FROM held))
    RETURNING m.id;
END
$$;

-- A handler that never started: pending again, due time unchanged, the attempt the claim counted taken back.
CREATE FUNCTION "${schema}"._engine_release(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_notify boolean)
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
    released AS (
        UPDATE "${schema}".messages m
        SET state = 'pending', attempts = greatest(m.attempts - 1, 0),
            worker = NULL, lease_token = NULL, lease_until = NULL
        WHERE m.id = ANY (ARRAY(SELECT held.id FROM held))
        RETURNING m.id, m.namespace, m.topic
    ),
    notified AS (
        SELECT pg_notify('${schema}_wakeup', t.namespace || '/' || t.topic)
        FROM (SELECT DISTINCT r.namespace, r.topic FROM released r) t
        WHERE p_notify
    )
    SELECT r.id FROM released r WHERE (SELECT count(*) FROM notified) >= 0;
END
$$;

-- ------------------------------------------------------------------ rescue

-- Expired leases back to pending, or to the dead letters when the expired attempt was the last (the domain's
-- Lifecycle.attemptsLeft written for rows), oldest first from messages_lease_idx, at most p_limit, of one namespace
-- or (NULL) all. SKIP LOCKED: a rescue never waits for, nor deadlocks with, a worker acting on the same row.
CREATE FUNCTION "${schema}"._engine_rescue(p_namespace text, p_limit integer, p_now timestamptz, p_notify boolean,
                                            p_expired_since timestamptz)
RETURNS TABLE (requeued bigint, dead_lettered bigint, looked_up_to timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH expired AS MATERIALIZED (
        SELECT m.id, m.attempts >= m.max_attempts AS exhausted
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
                                              unique_key, last_error, published_at, failed_at, published_by, worker)
        SELECT b.id, b.namespace, b.topic, b.payload, b.headers, b.priority, b.attempts, b.max_attempts, b.unique_key,
               'lease expired on its last attempt', b.published_at, coalesce(p_now, statement_timestamp()),
               b.published_by, b.worker
        FROM buried b
    ),
    notified AS (
        SELECT pg_notify('${schema}_wakeup', t.namespace || '/' || t.topic)
        FROM (SELECT DISTINCT r.namespace, r.topic FROM back r) t
        WHERE p_notify
    )
    SELECT (SELECT count(*) FROM back), (SELECT count(*) FROM buried) + 0 * (SELECT count(*) FROM notified),
           coalesce(p_now, statement_timestamp());
END
$$;

-- ------------------------------------------------------------------ reading

-- The earliest future due time of pending messages of these topics: one probe of the claim index per topic and
-- priority (it orders run_at within a priority), so it stays cheap with many scheduled messages.
CREATE FUNCTION "${schema}"._engine_next_due(p_namespace text, p_topics text[], p_now timestamptz)
RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_next timestamptz;
BEGIN
    SELECT min(n.run_at) INTO v_next
    FROM unnest((SELECT p_topics)) AS t(topic)
    CROSS JOIN generate_series(0, 9) AS p(priority)
    CROSS JOIN LATERAL (
        SELECT m.run_at
        FROM "${schema}".messages m
        WHERE m.namespace = p_namespace
          AND m.topic = t.topic
          AND m.state = 'pending'
          AND m.priority = p.priority
          AND m.run_at > (SELECT coalesce(p_now, statement_timestamp()))
        ORDER BY m.run_at
        LIMIT 1
    ) n;
    RETURN v_next;
END
$$;

-- Per topic of the namespace (every topic that ever held a message): its counts and its oldest due pending time.
CREATE FUNCTION "${schema}"._engine_stats(p_namespace text, p_now timestamptz)
RETURNS TABLE (topic text, pending bigint, running bigint, completed bigint, dead bigint, oldest_due_at timestamptz)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT t.topic::text,
           coalesce(m.pending, 0)::bigint, coalesce(m.running, 0)::bigint, coalesce(c.completed, 0)::bigint,
           coalesce(d.dead, 0)::bigint, m.oldest_due_at
    FROM "${schema}".topics t
    LEFT JOIN (SELECT x.topic,
                      count(*) FILTER (WHERE x.state = 'pending') AS pending,
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

-- A live or dead message of the namespace by id (completed ones are gone).
CREATE FUNCTION "${schema}"._engine_find(p_namespace text, p_id bigint)
RETURNS TABLE (id bigint, namespace text, topic text, state text, payload json, headers jsonb, priority integer,
               attempts integer, max_attempts integer, unique_key text, published_at timestamptz, run_at timestamptz,
               lease_until timestamptz, worker text, last_error text, failed_at timestamptz, published_by text,
               failed_by text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT m.id, m.namespace::text, m.topic::text, m.state, m.payload, m.headers, m.priority::integer, m.attempts,
           m.max_attempts, m.unique_key::text, m.published_at, m.run_at, m.lease_until, m.worker, m.last_error,
           NULL::timestamptz, m.published_by, NULL::text
    FROM "${schema}".messages m
    WHERE m.namespace = p_namespace AND m.id = p_id
    UNION ALL
    SELECT d.id, d.namespace::text, d.topic::text, 'dead', d.payload, d.headers, d.priority::integer, d.attempts,
           d.max_attempts, d.unique_key::text, d.published_at, NULL, NULL, NULL, d.last_error, d.failed_at,
           d.published_by, d.failed_by
    FROM "${schema}".dead_letters d
    WHERE d.namespace = p_namespace AND d.id = p_id;
END
$$;

-- ------------------------------------------------------------------ dead letters

-- Oldest first by id: one (p_id), or a page after p_after_id of a topic (p_topic) or of the namespace.
CREATE FUNCTION "${schema}"._engine_dead_letters(p_namespace text, p_topic text, p_id bigint, p_after_id bigint,
                                                 p_limit integer)
RETURNS TABLE (id bigint, namespace text, topic text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, unique_key text, last_error text, published_at timestamptz,
               failed_at timestamptz, published_by text, failed_by text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT d.id, d.namespace::text, d.topic::text, d.payload, d.headers, d.priority::integer, d.attempts,
           d.max_attempts, d.unique_key::text, d.last_error, d.published_at, d.failed_at, d.published_by, d.failed_by
    FROM "${schema}".dead_letters d
    WHERE d.namespace = p_namespace
      AND (p_id IS NULL OR d.id = p_id)
      AND (p_topic IS NULL OR d.topic = p_topic)
      AND d.id > coalesce(p_after_id, 0)
    ORDER BY d.id
    LIMIT p_limit;
END
$$;

-- Dead letters back to pending with their id, due now, attempts from zero, last error kept: by ids, or by topic
-- after p_after_id, or (neither) the namespace's, at most p_limit, lowest ids first. One whose unique key a live
-- message holds stays dead (ON CONFLICT DO NOTHING, only the moved rows are deleted). Returns the ids moved, how
-- many were examined and the last id examined (p_after_id when none).
CREATE FUNCTION "${schema}"._engine_redrive(p_namespace text, p_topic text, p_ids bigint[], p_after_id bigint,
                                            p_limit integer, p_now timestamptz, p_notify boolean, p_actor text)
RETURNS TABLE (redriven bigint[], examined integer, last_id bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH candidates AS MATERIALIZED (
        SELECT d.ctid AS row_ctid, d.*
        FROM "${schema}".dead_letters d
        WHERE d.namespace = p_namespace
          AND (p_ids IS NULL OR d.id = ANY (p_ids))
          AND (p_topic IS NULL OR d.topic = p_topic)
          AND d.id > coalesce(p_after_id, 0)
        ORDER BY d.id
        LIMIT p_limit
        FOR UPDATE
    ),
    moved AS (
        INSERT INTO "${schema}".messages AS m (id, namespace, topic, payload, headers, priority, attempts, max_attempts,
                                               unique_key, run_at, published_at, last_error, published_by, redriven_by)
        SELECT c.id, c.namespace, c.topic, c.payload, c.headers, c.priority, 0, c.max_attempts, c.unique_key,
               coalesce(p_now, statement_timestamp()), c.published_at, c.last_error, c.published_by, p_actor
        FROM candidates c
        ORDER BY c.id
        ON CONFLICT (namespace, topic, unique_key) WHERE unique_key IS NOT NULL DO NOTHING
        RETURNING m.id, m.namespace, m.topic
    ),
    flagged AS MATERIALIZED (
        /* "IN" in a select list is a hashed SubPlan: one hash of the moved ids, not a join to plan */
        SELECT c.row_ctid, c.id IN (SELECT x.id FROM moved x) AS was_moved FROM candidates c
    ),
    removed AS (
        /* by the addresses of the rows locked above (a TID scan), so no join plan can go wrong */
        DELETE FROM "${schema}".dead_letters d
        WHERE d.ctid = ANY (ARRAY(SELECT f.row_ctid FROM flagged f WHERE f.was_moved))
        RETURNING d.id
    ),
    notified AS (
        SELECT pg_notify('${schema}_wakeup', t.namespace || '/' || t.topic)
        FROM (SELECT DISTINCT x.namespace, x.topic FROM moved x) t
        WHERE p_notify
    )
    SELECT ARRAY(SELECT r.id FROM removed r ORDER BY r.id), (SELECT count(*) FROM candidates)::integer,
           coalesce((SELECT max(c.id) FROM candidates c), coalesce(p_after_id, 0))
           + 0 * (SELECT count(*) FROM notified);
END
$$;

-- Deletes at most p_limit dead letters, lowest ids first: by ids, by topic, or the namespace's. Returns their ids.
CREATE FUNCTION "${schema}"._engine_purge(p_namespace text, p_topic text, p_ids bigint[], p_limit integer)
RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY
    DELETE FROM "${schema}".dead_letters x
    WHERE x.namespace = p_namespace
      AND x.id = ANY (ARRAY(
          SELECT d.id FROM "${schema}".dead_letters d
          WHERE d.namespace = p_namespace
            AND (p_ids IS NULL OR d.id = ANY (p_ids))
            AND (p_topic IS NULL OR d.topic = p_topic)
          ORDER BY d.id
          LIMIT p_limit))
    RETURNING x.id;
END
$$;

-- ------------------------------------------------------------------ schedules

-- A schedule row as the caller prepared it (the Java domain, or _prepare_schedule): stored when the name is
-- free. True when stored.
CREATE FUNCTION "${schema}"._engine_schedule_insert(
    p_namespace text, p_name text, p_cron text, p_interval_micros bigint, p_time_zone text, p_topic text,
    p_payload text, p_headers text, p_priority integer, p_max_attempts integer, p_start_at timestamptz,
    p_end_at timestamptz, p_missed_policy text, p_missed_bound integer, p_missed_grace_micros bigint,
    p_paused boolean, p_next_run_at timestamptz, p_last_run_at timestamptz, p_created_at timestamptz,
    p_updated_at timestamptz, p_actor text)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
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
CREATE FUNCTION "${schema}"._engine_schedule_replace(
    p_namespace text, p_name text, p_cron text, p_interval_micros bigint, p_time_zone text, p_topic text,
    p_payload text, p_headers text, p_priority integer, p_max_attempts integer, p_start_at timestamptz,
    p_end_at timestamptz, p_missed_policy text, p_missed_bound integer, p_missed_grace_micros bigint,
    p_paused boolean, p_next_run_at timestamptz, p_updated_at timestamptz, p_actor text)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
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
CREATE FUNCTION "${schema}"._engine_schedule_pause(p_namespace text, p_name text, p_paused boolean,
                                                   p_next_run_at timestamptz, p_updated_at timestamptz, p_actor text)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE "${schema}".schedules x
    SET paused = p_paused, next_run_at = coalesce(p_next_run_at, x.next_run_at), updated_at = p_updated_at,
        paused_by = CASE WHEN p_paused THEN p_actor END,
        updated_by = CASE WHEN p_paused THEN x.updated_by ELSE p_actor END
    WHERE x.namespace = p_namespace AND x.name = p_name;
    RETURN FOUND;
END
$$;

CREATE FUNCTION "${schema}"._engine_schedule_delete(p_namespace text, p_name text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM "${schema}".schedules x WHERE x.namespace = p_namespace AND x.name = p_name;
    RETURN FOUND;
END
$$;

-- One schedule (p_name), or every schedule of the namespace by name in code point order (COLLATE "C"), as Java
-- sorts strings whatever the database's collation.
CREATE FUNCTION "${schema}"._engine_schedules(p_namespace text, p_name text)
RETURNS SETOF "${schema}".schedules
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN QUERY
    SELECT s.* FROM "${schema}".schedules s
    WHERE s.namespace = p_namespace AND (p_name IS NULL OR s.name = p_name)
    ORDER BY s.name COLLATE "C";
END
$$;

-- The due schedules (of one namespace, or of all with NULL), at most p_limit, locked until the caller's
-- transaction ends and skipped by every other ticker meanwhile (FOR UPDATE SKIP LOCKED): a due time fires once.
CREATE FUNCTION "${schema}"._engine_lock_due_schedules(p_namespace text, p_limit integer, p_now timestamptz)
RETURNS SETOF "${schema}".schedules
LANGUAGE plpgsql AS $$
BEGIN
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
CREATE FUNCTION "${schema}"._engine_schedule_ran(p_namespace text, p_name text, p_next_run_at timestamptz,
                                                 p_last_run_at timestamptz)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE "${schema}".schedules x
    SET next_run_at = p_next_run_at, last_run_at = p_last_run_at
    WHERE x.namespace = p_namespace AND x.name = p_name;
    RETURN FOUND;
END
$$;

-- The earliest next run of the schedules not paused (of one namespace, or of all with NULL).
CREATE FUNCTION "${schema}"._engine_next_schedule_run(p_namespace text) RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_next timestamptz;
BEGIN
    SELECT min(s.next_run_at) INTO v_next
    FROM "${schema}".schedules s
    WHERE NOT s.paused AND s.next_run_at IS NOT NULL AND (p_namespace IS NULL OR s.namespace = p_namespace);
    RETURN v_next;
END
$$;

-- ------------------------------------------------------------------ the public functions over the engine
-- Same signatures and behaviour as in version 9: they check their input and the tenant, resolve the queue
-- policy, and pass the result to the engine with the session's actor.

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
    RETURN CASE WHEN v_duplicate THEN NULL ELSE v_id END;
END
$$;

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
    RETURN QUERY
    SELECT e.ord, CASE WHEN e.duplicate THEN NULL ELSE e.id END
    FROM "${schema}"._engine_publish(
        array_fill(p_namespace, ARRAY[v_count]), array_fill(p_queue, ARRAY[v_count]), p_payloads::text[],
        array_fill(coalesce(p_headers, '{}')::text, ARRAY[v_count]),
        array_fill(coalesce(p_priority, 0), ARRAY[v_count]),
        array_fill(coalesce(p_max_attempts, v_policy.max_attempts), ARRAY[v_count]),
        coalesce(p_unique_keys, array_fill(NULL::text, ARRAY[v_count])),
        array_fill("${schema}"._micros(v_run_at - timestamptz 'epoch'), ARRAY[v_count]),
        array_fill(NULL::bigint, ARRAY[v_count]),
        NULL, "${schema}"._notify_wanted(p_notify), "${schema}".current_actor()) e
    ORDER BY e.ord;
END
$$;

-- Moves one live message (already locked by the caller) to the dead letters with its error.
CREATE OR REPLACE FUNCTION "${schema}"._bury(p_id bigint, p_error text, p_failed_by text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_row "${schema}".messages;
BEGIN
    SELECT m.* INTO v_row FROM "${schema}".messages m WHERE m.id = p_id;
    IF v_row.lease_token IS NOT NULL THEN
        PERFORM "${schema}"._engine_bury(v_row.namespace, ARRAY[v_row.id], ARRAY[v_row.lease_token], p_error, NULL,
                                         p_failed_by);
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION "${schema}".rescue_expired(p_namespace text DEFAULT NULL, p_limit integer DEFAULT 1000)
RETURNS TABLE (requeued bigint, dead_lettered bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    IF p_namespace IS NOT NULL OR "${schema}".current_tenant() IS NOT NULL THEN
        PERFORM "${schema}"._check_namespace(p_namespace);
    END IF;
    PERFORM "${schema}"._check_range('p_limit', p_limit, 1, 10000, '1 to 10000');
    RETURN QUERY SELECT r.requeued, r.dead_lettered
                 FROM "${schema}"._engine_rescue(p_namespace, p_limit, NULL, "${schema}"._notify_wanted(NULL), NULL) r;
END
$$;

CREATE OR REPLACE FUNCTION "${schema}"._claim(p_namespace text, p_queues text[], p_worker_id text,
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
    PERFORM "${schema}"._engine_rescue(p_namespace, 1000, NULL, "${schema}"._notify_wanted(NULL), NULL);
    -- random and never zero, like the Java engine's tokens (60 random bits of a version 4 UUID)
    LOOP
        v_token := ('x' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 16))::bit(64)::bigint;
        EXIT WHEN v_token <> 0;
    END LOOP;
    RETURN QUERY
    SELECT c.id, c.topic, c.payload, c.headers, c.priority, c.attempts, c.max_attempts, c.lease_token, c.lease_until,
           c.published_at, c.run_at, c.worker, c.unique_key, c.published_by
    FROM "${schema}"._engine_claim(p_namespace, p_queues, v_worker, p_limit, v_token,
                                   "${schema}"._micros(v_visibility), NULL, false, NULL, NULL, NULL) c;
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

CREATE OR REPLACE FUNCTION "${schema}".nack(p_namespace text, p_id bigint, p_error text DEFAULT NULL,
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
LANGUAGE plpgsql AS $$
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
LANGUAGE plpgsql AS $$
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

CREATE OR REPLACE FUNCTION "${schema}".get_queue_stats(p_namespace text)
RETURNS TABLE (queue text, pending bigint, running bigint, completed bigint, dead bigint, total bigint)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    RETURN QUERY
    SELECT s.topic, s.pending, s.running, s.completed, s.dead, s.pending + s.running + s.completed + s.dead
    FROM "${schema}"._engine_stats(p_namespace, NULL) s
    ORDER BY s.topic;
END
$$;

CREATE OR REPLACE FUNCTION "${schema}".inspect(p_namespace text, p_id bigint)
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
    SELECT f.id, f.topic, f.state, f.payload, f.headers, f.priority, f.attempts, f.max_attempts, f.unique_key,
           f.published_at, f.run_at, f.lease_until, f.worker, f.last_error, f.failed_at, f.published_by, f.failed_by
    FROM "${schema}"._engine_find(p_namespace, p_id) f;
END
$$;

CREATE OR REPLACE FUNCTION "${schema}".list_dead_letters(p_namespace text, p_queue text DEFAULT NULL,
                                                         p_after_id bigint DEFAULT 0, p_limit integer DEFAULT 50)
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
    SELECT d.id, d.topic, d.payload, d.headers, d.priority, d.attempts, d.max_attempts, d.unique_key, d.last_error,
           d.published_at, d.failed_at, d.published_by, d.failed_by
    FROM "${schema}"._engine_dead_letters(p_namespace, p_queue, NULL, p_after_id, p_limit) d;
END
$$;

CREATE OR REPLACE FUNCTION "${schema}".redrive_dead_letters(p_namespace text, p_queue text DEFAULT NULL,
                                                            p_ids bigint[] DEFAULT NULL, p_after_id bigint DEFAULT 0,
                                                            p_limit integer DEFAULT 1000)
RETURNS TABLE (redriven integer, examined integer, last_id bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_moved    bigint[];
    v_examined integer;
    v_last     bigint;
BEGIN
    PERFORM "${schema}"._check_dead_letter_selection(p_namespace, p_queue, p_ids, p_limit);
    SELECT r.redriven, r.examined, r.last_id INTO v_moved, v_examined, v_last
    FROM "${schema}"._engine_redrive(p_namespace, p_queue, p_ids, p_after_id, p_limit, NULL,
                                     "${schema}"._notify_wanted(NULL), "${schema}".current_actor()) r;
    IF cardinality(v_moved) > 0 THEN
        INSERT INTO "${schema}".audit_log (at, namespace, actor, action, subject, ids, count)
        VALUES (statement_timestamp(), p_namespace, "${schema}".current_actor(), 'redrive_dead_letters', p_queue,
                v_moved, cardinality(v_moved));
    END IF;
    RETURN QUERY SELECT cardinality(v_moved), v_examined, v_last;
END
$$;

CREATE OR REPLACE FUNCTION "${schema}".purge_dead_letters(p_namespace text, p_queue text DEFAULT NULL,
                                                          p_ids bigint[] DEFAULT NULL, p_limit integer DEFAULT 1000)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    v_purged bigint[];
BEGIN
    PERFORM "${schema}"._check_dead_letter_selection(p_namespace, p_queue, p_ids, p_limit);
    v_purged := ARRAY(SELECT p FROM "${schema}"._engine_purge(p_namespace, p_queue, p_ids, p_limit) p ORDER BY p);
    IF cardinality(v_purged) > 0 THEN
        INSERT INTO "${schema}".audit_log (at, namespace, actor, action, subject, ids, count)
        VALUES (statement_timestamp(), p_namespace, "${schema}".current_actor(), 'purge_dead_letters', p_queue,
                v_purged, cardinality(v_purged));
    END IF;
    RETURN cardinality(v_purged);
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
    s.created_at := p_old.created_at;
    s.next_run_at := "${schema}"._schedule_next_after(s, statement_timestamp() - interval '1 microsecond');
    PERFORM "${schema}"._engine_schedule_replace(p_old.namespace, p_old.name, s.cron, s.interval_micros, s.time_zone,
        s.topic, s.payload::text, s.headers::text, s.priority, s.max_attempts, s.start_at, s.end_at, s.missed_policy,
        s.missed_bound, s.missed_grace_micros, NULL, s.next_run_at, statement_timestamp(), "${schema}".current_actor());
END
$$;

CREATE OR REPLACE FUNCTION "${schema}".delete_schedule(p_namespace text, p_name text) RETURNS boolean
LANGUAGE plpgsql AS $$
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
LANGUAGE plpgsql STABLE AS $$
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
    PERFORM "${schema}"._engine_schedule_pause(p_namespace, p_name, true, NULL, statement_timestamp(),
                                               "${schema}".current_actor());
    RETURN true;
END
$$;

CREATE OR REPLACE FUNCTION "${schema}".resume_schedule(p_namespace text, p_name text) RETURNS boolean
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
    PERFORM "${schema}"._engine_schedule_pause(p_namespace, p_name, false,
        "${schema}"._schedule_next_after(v_old, statement_timestamp()), statement_timestamp(),
        "${schema}".current_actor());
    RETURN true;
END
$$;

CREATE OR REPLACE FUNCTION "${schema}".tick_schedules(p_namespace text DEFAULT NULL, p_limit integer DEFAULT 100)
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
