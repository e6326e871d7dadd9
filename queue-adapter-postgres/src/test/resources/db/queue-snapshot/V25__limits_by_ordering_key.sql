-- queue schema, version 25: limits partitioned by the ordering key, and the SQL pulls return the ordering key
-- (docs/flow-control.md, "Limits").
--
-- A topic's per-partition limits (version 23) may now take a message's partition from its ordering key
-- (partition_kind 'ordering_key', no partition_name) instead of a header: messages without a key share the
-- partition of the empty value, which no key can be (keys have 1 to 255 characters). A key runs one message at a time
-- anyway (version 22), so a running limit per key bounds only the messages without a key. What the kind is for is a
-- rate per key.
--
-- _limit_partition takes the ordering key as well, and what reads a message's partition passes it: the claim and the
-- setter, which rebuilds the holders of the running messages. The claim's statements are those of version 23 with
-- that one argument more, so topics without limits, or with a header partition, claim as before.
--
-- pull, pull_batch and pull_any return the ordering key as a last column. They return a row type of their own, so
-- they are dropped and created again with their parameters and defaults, and _secure_schema() grants them as before.

-- ------------------------------------------------------------------ the kind of partition

ALTER TABLE "${schema}".topic_limits DROP CONSTRAINT topic_limits_valid;
ALTER TABLE "${schema}".topic_limits ADD CONSTRAINT topic_limits_valid CHECK (
    (max_running IS NULL OR max_running BETWEEN 1 AND 100000)
    AND (max_running_per_partition IS NULL OR max_running_per_partition BETWEEN 1 AND 100000)
    AND (rate_starts IS NULL) = (rate_period_micros IS NULL)
    AND (rate_starts IS NULL OR (rate_starts BETWEEN 1 AND 1000000
                                 AND rate_period_micros BETWEEN 1000 AND 86400000000))
    AND (partition_rate_starts IS NULL) = (partition_rate_period_micros IS NULL)
    AND (partition_rate_starts IS NULL OR (partition_rate_starts BETWEEN 1 AND 1000000
                                           AND partition_rate_period_micros BETWEEN 1000 AND 86400000000))
    AND (partition_kind IS NULL OR partition_kind IN ('header', 'ordering_key'))
    -- a header partition names its header, an ordering-key partition nothing
    AND (partition_name IS NOT NULL) = (partition_kind IS NOT NULL AND partition_kind = 'header')
    AND ((partition_kind IS NOT NULL)
         = (max_running_per_partition IS NOT NULL OR partition_rate_starts IS NOT NULL))
    AND (max_running IS NOT NULL OR max_running_per_partition IS NOT NULL OR rate_starts IS NOT NULL
         OR partition_rate_starts IS NOT NULL));

-- A message's partition under a topic's limits: the header's value or the ordering key, '' without one.
CREATE FUNCTION "${schema}"._limit_partition(p_headers jsonb, p_ordering_key text, p_kind text, p_name text)
RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE p_kind WHEN 'header' THEN coalesce(p_headers ->> p_name, '')
                       WHEN 'ordering_key' THEN coalesce(p_ordering_key, '')
                       ELSE '' END
$$;

-- ------------------------------------------------------------------ the claim, reading the key

-- Version 23's claim: the partition of a candidate is computed with its ordering key too.
CREATE OR REPLACE FUNCTION "${schema}"._engine_claim(
    p_namespace text, p_topics text[], p_worker text, p_limit integer, p_lease_token bigint, p_lease_micros bigint,
    p_now timestamptz, p_async boolean, p_after_priorities integer[], p_after_run_at_micros bigint[],
    p_after_ids bigint[], p_behind boolean[])
RETURNS TABLE (id bigint, namespace text, topic text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, lease_token bigint, worker text, lease_until timestamptz,
               published_at timestamptz, run_at timestamptz, unique_key text, published_by text, ordering_key text,
               limited boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_limited  text[];
    v_paused   text[];
    v_now      timestamptz := coalesce(p_now, statement_timestamp());
    v_left     integer := p_limit;
    v_i        integer;
    v_topic    text;
    v_limits   "${schema}".topic_limits;
    v_room     integer;
    v_tokens   double precision;
    v_scan     integer;
    v_claimed  integer;
BEGIN
    v_limited := ARRAY(SELECT l.topic::text FROM "${schema}".topic_limits l
                       WHERE l.namespace = p_namespace AND l.topic = ANY (p_topics));
    -- before reading the pauses and limits, so that a pause or limit committing meanwhile is seen by the next
    -- statement. In name order, so that two claims taking exclusive locks on several topics cannot deadlock
    PERFORM CASE WHEN t.topic = ANY (v_limited)
                 THEN pg_advisory_xact_lock("${schema}"._flow_lock_key(p_namespace, t.topic))
                 ELSE pg_advisory_xact_lock_shared("${schema}"._flow_lock_key(p_namespace, t.topic)) END
    FROM (SELECT DISTINCT u.topic FROM unnest(p_topics) AS u(topic) ORDER BY u.topic) t;
    v_paused := ARRAY(SELECT p.topic::text FROM "${schema}".paused_topics p
                      WHERE p.namespace = p_namespace AND p.topic = ANY (p_topics))
             -- limited since the first read: locked shared only, so left out of this claim
             || ARRAY(SELECT l.topic::text FROM "${schema}".topic_limits l
                      WHERE l.namespace = p_namespace AND l.topic = ANY (p_topics)
                        AND NOT (l.topic = ANY (v_limited)));
    IF cardinality(v_limited) = 0 THEN
        RETURN QUERY
        WITH picked AS MATERIALIZED (
            SELECT c.id, t.ord, r.part
            FROM unnest((SELECT p_topics), (SELECT p_after_priorities), (SELECT p_after_run_at_micros),
                        (SELECT p_after_ids), (SELECT p_behind))
                 WITH ORDINALITY AS t(topic, after_priority, after_run_at_micros, after_id, behind, ord)
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
                  AND (m.priority, m.run_at, m.id) <= (
                      CASE WHEN r.part = 2 OR t.after_id IS NULL THEN 9
                           WHEN t.behind THEN t.after_priority
                           ELSE t.after_priority - 1 END::smallint,
                      CASE WHEN r.part = 1 AND t.after_id IS NOT NULL AND t.behind
                           THEN timestamptz 'epoch' + t.after_run_at_micros * interval '1 microsecond'
                           ELSE 'infinity'::timestamptz END,
                      CASE WHEN r.part = 1 AND t.after_id IS NOT NULL AND t.behind THEN t.after_id
                           ELSE 9223372036854775807 END)
                ORDER BY m.priority, m.run_at, m.id
                LIMIT (SELECT p_limit)
                FOR UPDATE SKIP LOCKED
            ) c
            WHERE (r.part = 1 OR (t.after_id IS NOT NULL AND NOT coalesce(t.behind, false)))
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
                      m.lease_token, m.worker, m.lease_until, m.published_at, m.run_at, m.unique_key, m.published_by,
                      m.ordering_key
        )
        SELECT c.id, c.namespace::text, c.topic::text, c.payload, c.headers, c.priority::integer, c.attempts,
               c.max_attempts, c.lease_token, c.worker, c.lease_until, c.published_at, c.run_at, c.unique_key::text,
               c.published_by, c.ordering_key::text, false
        FROM claimed c JOIN picked p ON p.id = c.id
        WHERE NOT p_async OR (SELECT set_config('synchronous_commit', 'off', true)) = 'off'
        ORDER BY p.ord, p.part, c.priority, c.run_at, c.id;
        RETURN;
    END IF;

    -- Some topics are limited: one statement per topic, in the order given, while the claim has room.
    FOR v_i IN 1 .. coalesce(cardinality(p_topics), 0) LOOP
        EXIT WHEN v_left <= 0;
        v_topic := p_topics[v_i];
        CONTINUE WHEN v_topic IS NULL OR v_topic = ANY (v_paused) OR v_topic = ANY (p_topics[1:v_i - 1]);
        v_limits := NULL;
        SELECT * INTO v_limits FROM "${schema}".topic_limits l WHERE l.namespace = p_namespace AND l.topic = v_topic;
        IF v_limits.topic IS NULL THEN
            -- not limited (or its limits were cleared after the first read): version 20's claim of one topic
            RETURN QUERY
            WITH picked AS MATERIALIZED (
                SELECT c.id, r.part
                FROM (SELECT p_after_priorities[v_i] AS after_priority,
                             p_after_run_at_micros[v_i] AS after_run_at_micros,
                             p_after_ids[v_i] AS after_id, p_behind[v_i] AS behind) t
                CROSS JOIN (VALUES (1), (2)) AS r(part)
                CROSS JOIN LATERAL (
                    SELECT m.id, m.priority, m.run_at
                    FROM "${schema}".messages m
                    WHERE m.namespace = p_namespace
                      AND m.topic = v_topic
                      AND m.state = 'pending'
                      AND m.run_at <= v_now
                      AND (m.priority, m.run_at, m.id) > (
                          CASE r.part WHEN 1 THEN -1 ELSE t.after_priority END::smallint,
                          CASE r.part WHEN 1 THEN '-infinity'::timestamptz
                               ELSE timestamptz 'epoch' + t.after_run_at_micros * interval '1 microsecond' END,
                          CASE r.part WHEN 1 THEN 0 ELSE t.after_id END)
                      AND (m.priority, m.run_at, m.id) <= (
                          CASE WHEN r.part = 2 OR t.after_id IS NULL THEN 9
                               WHEN t.behind THEN t.after_priority
                               ELSE t.after_priority - 1 END::smallint,
                          CASE WHEN r.part = 1 AND t.after_id IS NOT NULL AND t.behind
                               THEN timestamptz 'epoch' + t.after_run_at_micros * interval '1 microsecond'
                               ELSE 'infinity'::timestamptz END,
                          CASE WHEN r.part = 1 AND t.after_id IS NOT NULL AND t.behind THEN t.after_id
                               ELSE 9223372036854775807 END)
                    ORDER BY m.priority, m.run_at, m.id
                    LIMIT v_left
                    FOR UPDATE SKIP LOCKED
                ) c
                WHERE (r.part = 1 OR (t.after_id IS NOT NULL AND NOT coalesce(t.behind, false)))
                ORDER BY r.part, c.priority, c.run_at, c.id
                LIMIT v_left
            ),
            claimed AS (
                UPDATE "${schema}".messages m
                SET state = 'running',
                    attempts = m.attempts + 1,
                    worker = p_worker,
                    attempt_started_at = v_now,
                    lease_token = p_lease_token,
                    lease_until = v_now + p_lease_micros * interval '1 microsecond'
                WHERE m.id = ANY (ARRAY(SELECT p.id FROM picked p))
                RETURNING m.id, m.namespace, m.topic, m.payload, m.headers, m.priority, m.attempts, m.max_attempts,
                          m.lease_token, m.worker, m.lease_until, m.published_at, m.run_at, m.unique_key,
                          m.published_by, m.ordering_key
            )
            SELECT c.id, c.namespace::text, c.topic::text, c.payload, c.headers, c.priority::integer, c.attempts,
                   c.max_attempts, c.lease_token, c.worker, c.lease_until, c.published_at, c.run_at,
                   c.unique_key::text, c.published_by, c.ordering_key::text, false
            FROM claimed c JOIN picked p ON p.id = c.id
            ORDER BY p.part, c.priority, c.run_at, c.id;
            GET DIAGNOSTICS v_claimed = ROW_COUNT;
            v_left := v_left - v_claimed;
            CONTINUE;
        END IF;

        -- the room the topic's limits leave
        v_room := v_left;
        IF v_limits.max_running IS NOT NULL OR v_limits.max_running_per_partition IS NOT NULL THEN
            DELETE FROM "${schema}".limit_holders h
            WHERE h.namespace = p_namespace AND h.topic = v_topic
              AND NOT EXISTS (SELECT 1 FROM "${schema}".messages m
                              WHERE m.id = h.message_id AND m.state = 'running' AND m.lease_token = h.lease_token);
        END IF;
        IF v_limits.max_running IS NOT NULL THEN
            v_room := least(v_room, v_limits.max_running - (SELECT count(*) FROM "${schema}".limit_holders h
                                                            WHERE h.namespace = p_namespace AND h.topic = v_topic));
        END IF;
        v_tokens := NULL;
        IF v_limits.rate_starts IS NOT NULL THEN
            v_tokens := "${schema}"._bucket_tokens(
                (SELECT b.tokens FROM "${schema}".limit_buckets b
                 WHERE b.namespace = p_namespace AND b.topic = v_topic AND b.scope = 0 AND b.partition = ''),
                (SELECT b.refilled_at FROM "${schema}".limit_buckets b
                 WHERE b.namespace = p_namespace AND b.topic = v_topic AND b.scope = 0 AND b.partition = ''),
                v_limits.rate_starts, v_limits.rate_period_micros, v_now);
            v_room := least(v_room, floor(v_tokens)::integer);
        END IF;
        IF v_limits.partition_rate_starts IS NOT NULL THEN
            -- a partition's bucket is full again one period after its last start: its row can go
            DELETE FROM "${schema}".limit_buckets b
            WHERE b.namespace = p_namespace AND b.topic = v_topic AND b.scope = 1
              AND b.refilled_at <= v_now - v_limits.partition_rate_period_micros * interval '1 microsecond';
        END IF;
        CONTINUE WHEN v_room <= 0;
        -- Without partitions the first v_room candidates are all taken. With them, candidates of full partitions
        -- are stepped over, reading at most v_scan of them: the bound of the claim's work when the head of the
        -- claim order belongs to full partitions.
        v_scan := CASE WHEN v_limits.partition_kind IS NULL THEN v_room ELSE greatest(1000, 20 * v_room) END;

        RETURN QUERY
        WITH candidates AS MATERIALIZED (
            -- no row locks: no other claim of this topic runs (the exclusive lock), and the update below checks
            -- again that each is still pending
            SELECT m.id, m.priority, m.run_at,
                   "${schema}"._limit_partition(m.headers, m.ordering_key, v_limits.partition_kind,
                                              v_limits.partition_name) AS part
            FROM "${schema}".messages m
            WHERE m.namespace = p_namespace
              AND m.topic = v_topic
              AND m.state = 'pending'
              AND m.run_at <= v_now
            ORDER BY m.priority, m.run_at, m.id
            LIMIT v_scan
        ),
        running AS (
            SELECT h.partition AS part, count(*) AS n
            FROM "${schema}".limit_holders h
            WHERE h.namespace = p_namespace AND h.topic = v_topic AND v_limits.max_running_per_partition IS NOT NULL
              AND h.partition IN (SELECT DISTINCT c.part FROM candidates c)
            GROUP BY h.partition
        ),
        part_tokens AS (
            SELECT d.part,
                   "${schema}"._bucket_tokens(b.tokens, b.refilled_at, v_limits.partition_rate_starts,
                                              v_limits.partition_rate_period_micros, v_now) AS tokens
            FROM (SELECT DISTINCT c.part FROM candidates c) d
            LEFT JOIN "${schema}".limit_buckets b
                   ON b.namespace = p_namespace AND b.topic = v_topic AND b.scope = 1 AND b.partition = d.part
            WHERE v_limits.partition_rate_starts IS NOT NULL
        ),
        ranked AS (
            SELECT c.id, c.priority, c.run_at, c.part,
                   row_number() OVER (PARTITION BY c.part ORDER BY c.priority, c.run_at, c.id) AS rn
            FROM candidates c
        ),
        picked AS MATERIALIZED (
            SELECT k.id, k.priority, k.run_at, k.part
            FROM ranked k
            LEFT JOIN running r ON r.part = k.part
            LEFT JOIN part_tokens pt ON pt.part = k.part
            WHERE (v_limits.max_running_per_partition IS NULL
                   OR k.rn <= v_limits.max_running_per_partition - coalesce(r.n, 0))
              AND (v_limits.partition_rate_starts IS NULL OR k.rn <= floor(pt.tokens))
            ORDER BY k.priority, k.run_at, k.id
            LIMIT v_room
        ),
        claimed AS (
            UPDATE "${schema}".messages m
            SET state = 'running',
                attempts = m.attempts + 1,
                worker = p_worker,
                attempt_started_at = v_now,
                lease_token = p_lease_token,
                lease_until = v_now + p_lease_micros * interval '1 microsecond'
            WHERE m.id = ANY (ARRAY(SELECT p.id FROM picked p))
              AND m.state = 'pending'
            RETURNING m.id, m.namespace, m.topic, m.payload, m.headers, m.priority, m.attempts, m.max_attempts,
                      m.lease_token, m.worker, m.lease_until, m.published_at, m.run_at, m.unique_key, m.published_by,
                      m.ordering_key
        ),
        held AS (
            INSERT INTO "${schema}".limit_holders AS h (namespace, topic, message_id, lease_token, partition)
            SELECT p_namespace, v_topic, c.id, c.lease_token, p.part
            FROM claimed c JOIN picked p ON p.id = c.id
            WHERE v_limits.max_running IS NOT NULL OR v_limits.max_running_per_partition IS NOT NULL
            ON CONFLICT (namespace, topic, message_id) DO UPDATE SET lease_token = excluded.lease_token,
                                                                     partition = excluded.partition
        ),
        topic_bucket AS (
            INSERT INTO "${schema}".limit_buckets AS b (namespace, topic, scope, partition, tokens, refilled_at)
            SELECT p_namespace, v_topic, 0, '', v_tokens - (SELECT count(*) FROM claimed), v_now
            WHERE v_tokens IS NOT NULL
            ON CONFLICT (namespace, topic, scope, partition) DO UPDATE SET tokens = excluded.tokens,
                                                                           refilled_at = excluded.refilled_at
        ),
        partition_buckets AS (
            INSERT INTO "${schema}".limit_buckets AS b (namespace, topic, scope, partition, tokens, refilled_at)
            SELECT p_namespace, v_topic, 1, p.part, min(pt.tokens) - count(*), v_now
            FROM claimed c JOIN picked p ON p.id = c.id JOIN part_tokens pt ON pt.part = p.part
            GROUP BY p.part
            ON CONFLICT (namespace, topic, scope, partition) DO UPDATE SET tokens = excluded.tokens,
                                                                           refilled_at = excluded.refilled_at
        )
        SELECT c.id, c.namespace::text, c.topic::text, c.payload, c.headers, c.priority::integer, c.attempts,
               c.max_attempts, c.lease_token, c.worker, c.lease_until, c.published_at, c.run_at, c.unique_key::text,
               c.published_by, c.ordering_key::text, true
        FROM claimed c JOIN picked p ON p.id = c.id
        ORDER BY c.priority, c.run_at, c.id;
        GET DIAGNOSTICS v_claimed = ROW_COUNT;
        v_left := v_left - v_claimed;
    END LOOP;
    IF p_async THEN
        PERFORM set_config('synchronous_commit', 'off', true);
    END IF;
END
$$;

-- ------------------------------------------------------------------ setting limits

-- Version 23's setter: the holders rebuilt from the running messages take their partition from the key too, and a
-- change of the kind of partition starts the partitions' buckets afresh, as a change of the header does.
CREATE OR REPLACE FUNCTION "${schema}"._engine_set_topic_limits(
    p_namespace text, p_topic text, p_max_running integer, p_partition_kind text, p_partition_name text,
    p_max_running_per_partition integer, p_rate_starts integer, p_rate_period_micros bigint,
    p_partition_rate_starts integer, p_partition_rate_period_micros bigint, p_now timestamptz, p_notify boolean,
    p_actor text)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    v_old "${schema}".topic_limits;
    v_clear boolean := p_max_running IS NULL AND p_max_running_per_partition IS NULL AND p_rate_starts IS NULL
                       AND p_partition_rate_starts IS NULL;
BEGIN
    PERFORM pg_advisory_xact_lock("${schema}"._flow_lock_key(p_namespace, p_topic));
    SELECT * INTO v_old FROM "${schema}".topic_limits l WHERE l.namespace = p_namespace AND l.topic = p_topic;
    IF v_clear THEN
        IF v_old.topic IS NULL THEN
            RETURN false;
        END IF;
        DELETE FROM "${schema}".topic_limits l WHERE l.namespace = p_namespace AND l.topic = p_topic;
        DELETE FROM "${schema}".limit_holders h WHERE h.namespace = p_namespace AND h.topic = p_topic;
        DELETE FROM "${schema}".limit_buckets b WHERE b.namespace = p_namespace AND b.topic = p_topic;
    ELSE
        IF v_old.topic IS NOT NULL
                AND v_old.max_running IS NOT DISTINCT FROM p_max_running
                AND v_old.partition_kind IS NOT DISTINCT FROM p_partition_kind
                AND v_old.partition_name IS NOT DISTINCT FROM p_partition_name
                AND v_old.max_running_per_partition IS NOT DISTINCT FROM p_max_running_per_partition
                AND v_old.rate_starts IS NOT DISTINCT FROM p_rate_starts
                AND v_old.rate_period_micros IS NOT DISTINCT FROM p_rate_period_micros
                AND v_old.partition_rate_starts IS NOT DISTINCT FROM p_partition_rate_starts
                AND v_old.partition_rate_period_micros IS NOT DISTINCT FROM p_partition_rate_period_micros THEN
            RETURN false;
        END IF;
        INSERT INTO "${schema}".topic_limits AS l (namespace, topic, max_running, partition_kind, partition_name,
                                                   max_running_per_partition, rate_starts, rate_period_micros,
                                                   partition_rate_starts, partition_rate_period_micros, set_at,
                                                   set_by)
        VALUES (p_namespace, p_topic, p_max_running, p_partition_kind, p_partition_name, p_max_running_per_partition,
                p_rate_starts, p_rate_period_micros, p_partition_rate_starts, p_partition_rate_period_micros,
                coalesce(p_now, statement_timestamp()), p_actor)
        ON CONFLICT (namespace, topic) DO UPDATE
        SET max_running = excluded.max_running, partition_kind = excluded.partition_kind,
            partition_name = excluded.partition_name, max_running_per_partition = excluded.max_running_per_partition,
            rate_starts = excluded.rate_starts, rate_period_micros = excluded.rate_period_micros,
            partition_rate_starts = excluded.partition_rate_starts,
            partition_rate_period_micros = excluded.partition_rate_period_micros,
            set_at = excluded.set_at, set_by = excluded.set_by;
        -- the messages running now count against the new limits, whoever claimed them
        DELETE FROM "${schema}".limit_holders h WHERE h.namespace = p_namespace AND h.topic = p_topic;
        INSERT INTO "${schema}".limit_holders (namespace, topic, message_id, lease_token, partition)
        SELECT p_namespace, p_topic, m.id, m.lease_token,
               "${schema}"._limit_partition(m.headers, m.ordering_key, p_partition_kind, p_partition_name)
        FROM "${schema}".messages m
        WHERE m.namespace = p_namespace AND m.topic = p_topic AND m.state = 'running'
          AND (p_max_running IS NOT NULL OR p_max_running_per_partition IS NOT NULL);
        IF v_old.partition_kind IS DISTINCT FROM p_partition_kind OR v_old.partition_name IS DISTINCT FROM p_partition_name
                OR p_partition_rate_starts IS NULL THEN
            DELETE FROM "${schema}".limit_buckets b
            WHERE b.namespace = p_namespace AND b.topic = p_topic AND b.scope = 1;
        END IF;
        IF p_rate_starts IS NULL THEN
            DELETE FROM "${schema}".limit_buckets b
            WHERE b.namespace = p_namespace AND b.topic = p_topic AND b.scope = 0;
        END IF;
    END IF;
    INSERT INTO "${schema}".audit_log (at, namespace, actor, action, subject, ids, count)
    VALUES (statement_timestamp(), p_namespace, p_actor,
            CASE WHEN v_clear THEN 'clear_queue_limits' ELSE 'set_queue_limits' END, p_topic, NULL, 1);
    IF p_notify THEN
        PERFORM pg_notify('${schema}_wakeup', p_namespace || '/' || p_topic);
    END IF;
    RETURN true;
END
$$;

-- version 23's, replaced by the one above, which its callers now call
DROP FUNCTION "${schema}"._limit_partition(jsonb, text, text);

-- ------------------------------------------------------------------ the SQL functions of limits

-- Version 23's set_queue_limits with a last parameter p_partition_kind: 'header' (the default when
-- p_partition_header is given) or 'ordering_key' (without p_partition_header). Calls of version 23 work unchanged.
DROP FUNCTION "${schema}".set_queue_limits(text, text, integer, text, integer, integer, interval, integer, interval);

CREATE FUNCTION "${schema}".set_queue_limits(
    p_namespace text, p_queue text, p_max_running integer DEFAULT NULL, p_partition_header text DEFAULT NULL,
    p_max_running_per_partition integer DEFAULT NULL, p_rate_limit integer DEFAULT NULL,
    p_rate_period interval DEFAULT NULL, p_partition_rate_limit integer DEFAULT NULL,
    p_partition_rate_period interval DEFAULT NULL, p_partition_kind text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    v_per_partition boolean := p_max_running_per_partition IS NOT NULL OR p_partition_rate_limit IS NOT NULL;
    v_kind          text := coalesce(p_partition_kind, CASE WHEN p_partition_header IS NOT NULL THEN 'header' END);
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    PERFORM "${schema}"._check_name('p_queue', p_queue);
    IF p_max_running IS NULL AND p_max_running_per_partition IS NULL AND p_rate_limit IS NULL
            AND p_partition_rate_limit IS NULL THEN
        PERFORM "${schema}"._invalid('p_max_running', 'null',
            'at least one of p_max_running, p_max_running_per_partition, p_rate_limit, p_partition_rate_limit '
            '(clear_queue_limits clears them)');
    END IF;
    IF p_max_running IS NOT NULL THEN
        PERFORM "${schema}"._check_range('p_max_running', p_max_running, 1, 100000, '1 to 100000');
    END IF;
    IF p_max_running_per_partition IS NOT NULL THEN
        PERFORM "${schema}"._check_range('p_max_running_per_partition', p_max_running_per_partition, 1, 100000,
                                         '1 to 100000');
    END IF;
    IF p_rate_limit IS NOT NULL THEN
        PERFORM "${schema}"._check_range('p_rate_limit', p_rate_limit, 1, 1000000, '1 to 1000000');
        PERFORM "${schema}"._check_interval('p_rate_period', p_rate_period, interval '1 millisecond',
                                            interval '1 day', '1 ms to 1 day');
    ELSIF p_rate_period IS NOT NULL THEN
        PERFORM "${schema}"._invalid('p_rate_period', p_rate_period::text, 'null without p_rate_limit');
    END IF;
    IF p_partition_rate_limit IS NOT NULL THEN
        PERFORM "${schema}"._check_range('p_partition_rate_limit', p_partition_rate_limit, 1, 1000000,
                                         '1 to 1000000');
        PERFORM "${schema}"._check_interval('p_partition_rate_period', p_partition_rate_period,
                                            interval '1 millisecond', interval '1 day', '1 ms to 1 day');
    ELSIF p_partition_rate_period IS NOT NULL THEN
        PERFORM "${schema}"._invalid('p_partition_rate_period', p_partition_rate_period::text,
                                     'null without p_partition_rate_limit');
    END IF;
    IF p_partition_kind IS NOT NULL AND p_partition_kind NOT IN ('header', 'ordering_key') THEN
        PERFORM "${schema}"._invalid('p_partition_kind', "${schema}"._shown(p_partition_kind),
                                     'header or ordering_key');
    END IF;
    IF v_per_partition THEN
        IF v_kind = 'ordering_key' THEN
            IF p_partition_header IS NOT NULL THEN
                PERFORM "${schema}"._invalid('p_partition_header', "${schema}"._shown(p_partition_header),
                                             'null with p_partition_kind ordering_key');
            END IF;
        ELSE
            PERFORM "${schema}"._check_name('p_partition_header', p_partition_header);
        END IF;
    ELSIF p_partition_header IS NOT NULL THEN
        PERFORM "${schema}"._invalid('p_partition_header', "${schema}"._shown(p_partition_header),
            'null without p_max_running_per_partition or p_partition_rate_limit');
    ELSIF p_partition_kind IS NOT NULL THEN
        PERFORM "${schema}"._invalid('p_partition_kind', "${schema}"._shown(p_partition_kind),
            'null without p_max_running_per_partition or p_partition_rate_limit');
    END IF;
    RETURN "${schema}"._engine_set_topic_limits(p_namespace, p_queue, p_max_running,
        CASE WHEN v_per_partition THEN v_kind END, p_partition_header, p_max_running_per_partition, p_rate_limit,
        "${schema}"._micros(p_rate_period), p_partition_rate_limit, "${schema}"._micros(p_partition_rate_period), NULL,
        "${schema}"._notify_wanted(NULL), "${schema}".current_actor());
END
$$;

-- Version 23's list with a last column partition_kind: 'header' (partition_header names it), 'ordering_key', or NULL
-- without per-partition limits.
DROP FUNCTION "${schema}".list_queue_limits(text);

CREATE FUNCTION "${schema}".list_queue_limits(p_namespace text)
RETURNS TABLE (queue text, max_running integer, partition_header text, max_running_per_partition integer,
               rate_limit integer, rate_period interval, partition_rate_limit integer,
               partition_rate_period interval, set_at timestamptz, set_by text, partition_kind text)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    RETURN QUERY SELECT l.topic, l.max_running, l.partition_name, l.max_running_per_partition, l.rate_starts,
                        l.rate_period_micros * interval '1 microsecond', l.partition_rate_starts,
                        l.partition_rate_period_micros * interval '1 microsecond', l.set_at, l.set_by,
                        l.partition_kind
                 FROM "${schema}"._engine_topic_limits(p_namespace) l;
END
$$;

-- ------------------------------------------------------------------ pulling, with the ordering key

-- Version 10's claim of the SQL pulls, returning the ordering key last (the claim it calls returns it since
-- version 22). Checks, rescue and token as before.
DROP FUNCTION "${schema}".pull(text, text, text, interval);
DROP FUNCTION "${schema}".pull_batch(text, text, integer, text, interval);
DROP FUNCTION "${schema}".pull_any(text, text[], integer, text, interval);
DROP FUNCTION "${schema}"._claim(text, text[], text, interval, integer);

CREATE FUNCTION "${schema}"._claim(p_namespace text, p_queues text[], p_worker_id text,
                                   p_visibility_timeout interval, p_limit integer)
RETURNS TABLE (id bigint, queue text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, lease_token bigint, lease_until timestamptz, published_at timestamptz,
               run_at timestamptz, worker_id text, unique_key text, published_by text, ordering_key text)
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
           c.published_at, c.run_at, c.worker, c.unique_key, c.published_by, c.ordering_key
    FROM "${schema}"._engine_claim(p_namespace, p_queues, v_worker, p_limit, v_token,
                                   "${schema}"._micros(v_visibility), NULL, false, NULL, NULL, NULL) c;
END
$$;

CREATE FUNCTION "${schema}".pull(p_namespace text, p_queue text, p_worker_id text DEFAULT NULL,
                                 p_visibility_timeout interval DEFAULT NULL)
RETURNS TABLE (id bigint, queue text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, lease_token bigint, lease_until timestamptz, published_at timestamptz,
               run_at timestamptz, worker_id text, unique_key text, published_by text, ordering_key text)
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
               run_at timestamptz, worker_id text, unique_key text, published_by text, ordering_key text)
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
               run_at timestamptz, worker_id text, unique_key text, published_by text, ordering_key text)
LANGUAGE sql AS $$
    SELECT * FROM "${schema}"._claim(p_namespace, p_queues, p_worker_id, p_visibility_timeout, p_limit)
$$;

SELECT "${schema}"._secure_schema();

-- version 21's plans, once per session, for the function re-created here
DO $$
DECLARE
    v_function record;
BEGIN
    FOR v_function IN
        SELECT p.oid::regprocedure AS signature
        FROM pg_catalog.pg_proc p
        WHERE p.pronamespace = (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = '${schema}')
          AND p.proname IN ('_engine_claim')
        ORDER BY p.oid
    LOOP
        EXECUTE format('ALTER FUNCTION %s SET plan_cache_mode = force_generic_plan', v_function.signature);
    END LOOP;
END
$$;
