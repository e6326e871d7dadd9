-- queue schema, version 26: a rate alone no longer makes a topic's claims run one at a time.
--
-- Version 23 claimed every limited topic under its exclusive claim lock, from the head of its claim order, without row
-- locks. A topic whose only limit is a topic-wide rate needs that for nothing but its bucket: its claims now take the
-- shared lock like a topic without limits, lock the bucket's row, claim at most the tokens it holds with the
-- statement of a topic without limits (from the claimer's position, skipping locked rows), and spend them before
-- committing. Concurrent claims of the topic queue on the bucket's row instead of the advisory lock, so the rate is
-- kept as before, and they no longer re-read the head of the claim order. Bucket rows are locked (and created when
-- missing) in topic name order before any is read, as the advisory locks are, so two claims of several such topics
-- cannot deadlock.
--
-- A claim's time is read when it starts, so one that waited for the bucket may be older than the bucket's last
-- refill. Versions 23 and 25 then wrote that older time back, and the bucket refilled a second time over the span
-- between the two: a claim that waited could let through up to that span's tokens more than the rate. A bucket's
-- time now only moves forward (the tokens such a claim finds are the bucket's, with no refill).
--
-- The claim's last column, limited, now says whether a message's settling frees room under a limit, which only a
-- running limit (per topic or per partition) does: the engine wakes the topic's held-back claimers on it and writes
-- its acknowledgement at once. A rate's tokens come back with time (the next due time says when), not with settles.

-- ------------------------------------------------------------------ the claim

-- Whether a topic's only limit is a topic-wide rate.
CREATE FUNCTION "${schema}"._rate_alone(p_limits "${schema}".topic_limits) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT p_limits.rate_starts IS NOT NULL AND p_limits.max_running IS NULL
           AND p_limits.max_running_per_partition IS NULL AND p_limits.partition_rate_starts IS NULL
$$;

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
    v_any_limits boolean;
    v_rated    text[] := '{}';
BEGIN
    -- v_limited: the topics whose claims must run one at a time, those with any limit but a topic-wide rate alone
    SELECT count(*) > 0, coalesce(array_agg(l.topic::text) FILTER (WHERE NOT "${schema}"._rate_alone(l)), '{}')
    INTO v_any_limits, v_limited
    FROM "${schema}".topic_limits l
    WHERE l.namespace = p_namespace AND l.topic = ANY (p_topics);
    -- before reading the pauses and limits, so that a pause or limit committing meanwhile is seen by the next
    -- statement. In name order, so that two claims taking exclusive locks on several topics cannot deadlock
    PERFORM CASE WHEN t.topic = ANY (v_limited)
                 THEN pg_advisory_xact_lock("${schema}"._flow_lock_key(p_namespace, t.topic))
                 ELSE pg_advisory_xact_lock_shared("${schema}"._flow_lock_key(p_namespace, t.topic)) END
    FROM (SELECT DISTINCT u.topic FROM unnest(p_topics) AS u(topic) ORDER BY u.topic) t;
    v_paused := ARRAY(SELECT p.topic::text FROM "${schema}".paused_topics p
                      WHERE p.namespace = p_namespace AND p.topic = ANY (p_topics))
             -- needing the exclusive lock since the first read: locked shared only, so left out of this claim
             || ARRAY(SELECT l.topic::text FROM "${schema}".topic_limits l
                      WHERE l.namespace = p_namespace AND l.topic = ANY (p_topics)
                        AND NOT (l.topic = ANY (v_limited))
                        -- a rate alone claims under the shared lock, but not in the statement for topics without
                        -- limits below, which this claim runs when it found none at the first read
                        AND (NOT v_any_limits OR NOT "${schema}"._rate_alone(l)));
    IF NOT v_any_limits THEN
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
    -- First the buckets of the topics with a rate alone, created when missing and locked in name order.
    v_rated := ARRAY(SELECT l.topic::text FROM "${schema}".topic_limits l
                     WHERE l.namespace = p_namespace AND l.topic = ANY (p_topics) AND "${schema}"._rate_alone(l)
                       AND NOT (l.topic = ANY (v_paused))
                     ORDER BY l.topic);
    IF cardinality(v_rated) > 0 THEN
        INSERT INTO "${schema}".limit_buckets AS b (namespace, topic, scope, partition, tokens, refilled_at)
        -- a full bucket, as a missing row means
        SELECT p_namespace, l.topic, 0, '', l.rate_starts, v_now
        FROM "${schema}".topic_limits l
        WHERE l.namespace = p_namespace AND l.topic = ANY (v_rated)
          AND NOT EXISTS (SELECT 1 FROM "${schema}".limit_buckets x
                          WHERE x.namespace = p_namespace AND x.topic = l.topic AND x.scope = 0 AND x.partition = '')
        ORDER BY l.topic
        ON CONFLICT (namespace, topic, scope, partition) DO NOTHING;
        PERFORM 1 FROM "${schema}".limit_buckets b
        WHERE b.namespace = p_namespace AND b.topic = ANY (v_rated) AND b.scope = 0 AND b.partition = ''
        ORDER BY b.topic
        FOR UPDATE;
    END IF;
    FOR v_i IN 1 .. coalesce(cardinality(p_topics), 0) LOOP
        EXIT WHEN v_left <= 0;
        v_topic := p_topics[v_i];
        CONTINUE WHEN v_topic IS NULL OR v_topic = ANY (v_paused) OR v_topic = ANY (p_topics[1:v_i - 1]);
        v_limits := NULL;
        SELECT * INTO v_limits FROM "${schema}".topic_limits l WHERE l.namespace = p_namespace AND l.topic = v_topic;
        IF v_limits.topic IS NULL OR (v_topic = ANY (v_rated) AND "${schema}"._rate_alone(v_limits)) THEN
            -- not limited (or its limits were cleared after the first read): version 20's claim of one topic,
            -- with a rate alone, the same claim of at most the tokens its bucket (locked above) holds
            v_room := v_left;
            v_tokens := NULL;
            IF v_limits.topic IS NOT NULL THEN
                SELECT "${schema}"._bucket_tokens(b.tokens, b.refilled_at, v_limits.rate_starts,
                                                  v_limits.rate_period_micros, v_now)
                INTO v_tokens
                FROM "${schema}".limit_buckets b
                WHERE b.namespace = p_namespace AND b.topic = v_topic AND b.scope = 0 AND b.partition = '';
                v_room := least(v_room, floor(v_tokens)::integer);
                CONTINUE WHEN v_room <= 0;
            END IF;
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
                    LIMIT v_room
                    FOR UPDATE SKIP LOCKED
                ) c
                WHERE (r.part = 1 OR (t.after_id IS NOT NULL AND NOT coalesce(t.behind, false)))
                ORDER BY r.part, c.priority, c.run_at, c.id
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
            IF v_tokens IS NOT NULL THEN
                UPDATE "${schema}".limit_buckets b SET tokens = v_tokens - v_claimed,
                                                       refilled_at = greatest(b.refilled_at, v_now)
                WHERE b.namespace = p_namespace AND b.topic = v_topic AND b.scope = 0 AND b.partition = '';
            END IF;
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
            ON CONFLICT (namespace, topic, scope, partition)
            DO UPDATE SET tokens = excluded.tokens, refilled_at = greatest(b.refilled_at, excluded.refilled_at)
        ),
        partition_buckets AS (
            INSERT INTO "${schema}".limit_buckets AS b (namespace, topic, scope, partition, tokens, refilled_at)
            SELECT p_namespace, v_topic, 1, p.part, min(pt.tokens) - count(*), v_now
            FROM claimed c JOIN picked p ON p.id = c.id JOIN part_tokens pt ON pt.part = p.part
            GROUP BY p.part
            ON CONFLICT (namespace, topic, scope, partition)
            DO UPDATE SET tokens = excluded.tokens, refilled_at = greatest(b.refilled_at, excluded.refilled_at)
        )
        SELECT c.id, c.namespace::text, c.topic::text, c.payload, c.headers, c.priority::integer, c.attempts,
               c.max_attempts, c.lease_token, c.worker, c.lease_until, c.published_at, c.run_at, c.unique_key::text,
               c.published_by, c.ordering_key::text,
               v_limits.max_running IS NOT NULL OR v_limits.max_running_per_partition IS NOT NULL
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
