-- queue schema, version 23: fleet-wide concurrency and rate limits per topic (docs/flow-control.md, "Limits").
--
-- A topic's limits are a row of topic_limits: at most max_running of its messages running at once, optionally at
-- most max_running_per_partition per partition (the value of a named header), at most rate_starts starts per
-- rate_period_micros, optionally partition_rate_starts per partition_rate_period_micros per partition.
--
-- The claim reads the limits of its topics before taking the per-topic advisory lock of version 14, and takes that
-- lock exclusively for a limited topic (shared for the others, as before): the claims of a limited topic run one at
-- a time, and each statement after the lock reads a snapshot that holds every earlier claim. A limit set between
-- that first read and the lock is seen by a second read after the lock: the topic is then left out of that claim,
-- whose lock is only shared. The next claim locks it exclusively.
--
-- Running messages are counted through limit_holders, a row per message a claim of a limited topic started (its
-- id, its lease token, its partition). A holder whose message no longer runs under that token (acknowledged,
-- retried, snoozed, cancelled, dead, rescued) is deleted by the next claim of the topic, before it counts. Until
-- then it counts, which can only hold a claim back, never let one through. Settling a message writes nothing here,
-- and topics without limits never read or write this table. Setting limits rebuilds the topic's holders from its
-- running messages, under the exclusive lock.
--
-- Starts are rationed by token buckets in limit_buckets (a row per topic, and one per partition), updated by the
-- claim that spends them: a bucket holds at most the limit's count and refills continuously at count per period.

-- ------------------------------------------------------------------ tables

CREATE TABLE "${schema}".topic_limits (
    namespace                    text COLLATE "C" NOT NULL,
    topic                        text COLLATE "C" NOT NULL,
    max_running                  integer,
    -- 'header' (the partition is the value of the header partition_name), room for the ordering key
    partition_kind               text,
    partition_name               text,
    max_running_per_partition    integer,
    rate_starts                  integer,
    rate_period_micros           bigint,
    partition_rate_starts        integer,
    partition_rate_period_micros bigint,
    set_at                       timestamptz      NOT NULL,
    set_by                       text,
    CONSTRAINT topic_limits_pkey PRIMARY KEY (namespace, topic),
    CONSTRAINT topic_limits_valid CHECK (
        (max_running IS NULL OR max_running BETWEEN 1 AND 100000)
        AND (max_running_per_partition IS NULL OR max_running_per_partition BETWEEN 1 AND 100000)
        AND (rate_starts IS NULL) = (rate_period_micros IS NULL)
        AND (rate_starts IS NULL OR (rate_starts BETWEEN 1 AND 1000000
                                     AND rate_period_micros BETWEEN 1000 AND 86400000000))
        AND (partition_rate_starts IS NULL) = (partition_rate_period_micros IS NULL)
        AND (partition_rate_starts IS NULL OR (partition_rate_starts BETWEEN 1 AND 1000000
                                               AND partition_rate_period_micros BETWEEN 1000 AND 86400000000))
        AND (partition_kind IS NULL) = (partition_name IS NULL)
        AND (partition_kind IS NULL OR partition_kind = 'header')
        AND ((partition_kind IS NOT NULL)
             = (max_running_per_partition IS NOT NULL OR partition_rate_starts IS NOT NULL))
        AND (max_running IS NOT NULL OR max_running_per_partition IS NOT NULL OR rate_starts IS NOT NULL
             OR partition_rate_starts IS NOT NULL))
);

CREATE TABLE "${schema}".limit_holders (
    namespace   text COLLATE "C" NOT NULL,
    topic       text COLLATE "C" NOT NULL,
    message_id  bigint           NOT NULL,
    lease_token bigint           NOT NULL,
    partition   text COLLATE "C" NOT NULL,
    CONSTRAINT limit_holders_pkey PRIMARY KEY (namespace, topic, message_id)
)
WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000,
      autovacuum_vacuum_cost_delay = 0);

-- scope 0: the topic's bucket (partition ''), scope 1: a partition's
CREATE TABLE "${schema}".limit_buckets (
    namespace   text COLLATE "C" NOT NULL,
    topic       text COLLATE "C" NOT NULL,
    scope       smallint         NOT NULL,
    partition   text COLLATE "C" NOT NULL,
    tokens      double precision NOT NULL,
    refilled_at timestamptz      NOT NULL,
    CONSTRAINT limit_buckets_pkey PRIMARY KEY (namespace, topic, scope, partition)
)
-- rewritten at every claim of a rate-limited topic, in place (no indexed column changes)
WITH (fillfactor = 50);

-- A message's partition under a topic's limits: the header's value, '' without the header.
CREATE FUNCTION "${schema}"._limit_partition(p_headers jsonb, p_kind text, p_name text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_kind = 'header' THEN coalesce(p_headers ->> p_name, '') ELSE '' END
$$;

-- Tokens a bucket holds at p_now: what it held at its last refill plus the refill since (none when the clock went
-- back), at most its capacity. A topic or partition without a row has a full bucket.
CREATE FUNCTION "${schema}"._bucket_tokens(p_tokens double precision, p_refilled_at timestamptz, p_starts integer,
                                           p_period_micros bigint, p_now timestamptz)
RETURNS double precision
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_tokens IS NULL THEN p_starts::double precision
                ELSE least(p_starts::double precision,
                           p_tokens + greatest(0, extract(epoch FROM p_now - p_refilled_at) * 1000000)
                                      * p_starts / p_period_micros)
           END
$$;

-- ------------------------------------------------------------------ the claim, under limits

-- Version 22's claim, with limits: returns, besides the claimed messages, whether each came from a limited topic
-- (the engine wakes its subscribers when such a message settles, since that frees room). Without limits on any of
-- p_topics it runs version 22's statement unchanged. Otherwise it claims topic by topic in the order given: an
-- unlimited topic as before, a limited one from the head of its claim order (its claims do not run concurrently,
-- so positions buy nothing), at most the room its limits leave.
DROP FUNCTION "${schema}".engine_claim(text, text[], text, integer, bigint, bigint, timestamptz, boolean, integer[],
                                       bigint[], bigint[], boolean[]);
DROP FUNCTION "${schema}"._engine_claim(text, text[], text, integer, bigint, bigint, timestamptz, boolean, integer[],
                                        bigint[], bigint[], boolean[]);

CREATE FUNCTION "${schema}"._engine_claim(
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
                   "${schema}"._limit_partition(m.headers, v_limits.partition_kind, v_limits.partition_name) AS part
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

-- The claim of versions 10, 14 and 18 (the SQL pull functions call it): looks behind no position, and returns the
-- columns of version 22 (the ordering key last).
CREATE OR REPLACE FUNCTION "${schema}"._engine_claim(
    p_namespace text, p_topics text[], p_worker text, p_limit integer, p_lease_token bigint, p_lease_micros bigint,
    p_now timestamptz, p_async boolean, p_after_priorities integer[], p_after_run_at_micros bigint[],
    p_after_ids bigint[])
RETURNS TABLE (id bigint, namespace text, topic text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, lease_token bigint, worker text, lease_until timestamptz,
               published_at timestamptz, run_at timestamptz, unique_key text, published_by text, ordering_key text)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY SELECT c.id, c.namespace, c.topic, c.payload, c.headers, c.priority, c.attempts, c.max_attempts,
                        c.lease_token, c.worker, c.lease_until, c.published_at, c.run_at, c.unique_key, c.published_by,
                        c.ordering_key
    FROM "${schema}"._engine_claim(p_namespace, p_topics, p_worker, p_limit, p_lease_token, p_lease_micros, p_now,
                                   p_async, p_after_priorities, p_after_run_at_micros, p_after_ids,
                                   NULL::boolean[]) c;
END
$$;

CREATE FUNCTION "${schema}".engine_claim(
    p_namespace text, p_topics text[], p_worker text, p_limit integer, p_lease_token bigint, p_lease_micros bigint,
    p_now timestamptz, p_async boolean, p_after_priorities integer[], p_after_run_at_micros bigint[],
    p_after_ids bigint[], p_behind boolean[])
RETURNS TABLE (id bigint, namespace text, topic text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, lease_token bigint, worker text, lease_until timestamptz,
               published_at timestamptz, run_at timestamptz, unique_key text, published_by text, ordering_key text,
               limited boolean)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_claim(p_namespace, p_topics, p_worker, p_limit, p_lease_token,
        p_lease_micros, p_now, p_async, p_after_priorities, p_after_run_at_micros, p_after_ids, p_behind);
END
$$;

-- ------------------------------------------------------------------ the next due time, with the next token

-- Version 10's next due time, and for rate-limited topics the time their next start is allowed when a bucket is
-- empty now: an idle subscriber held back by a rate claims again then.
CREATE OR REPLACE FUNCTION "${schema}"._engine_next_due(p_namespace text, p_topics text[], p_now timestamptz)
RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_next  timestamptz;
    v_token timestamptz;
    v_now   timestamptz := coalesce(p_now, statement_timestamp());
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
    SELECT min(b.refilled_at + ((1 - b.tokens) * (CASE b.scope WHEN 0 THEN l.rate_period_micros
                                                              ELSE l.partition_rate_period_micros END)
                                / (CASE b.scope WHEN 0 THEN l.rate_starts ELSE l.partition_rate_starts END))
                               * interval '1 microsecond')
    INTO v_token
    FROM "${schema}".topic_limits l
    JOIN "${schema}".limit_buckets b ON b.namespace = l.namespace AND b.topic = l.topic
    WHERE l.namespace = p_namespace AND l.topic = ANY (p_topics)
      AND b.tokens < 1
      AND CASE b.scope WHEN 0 THEN l.rate_starts IS NOT NULL ELSE l.partition_rate_starts IS NOT NULL END;
    IF v_token IS NOT NULL AND v_token > v_now AND (v_next IS NULL OR v_token < v_next) THEN
        RETURN v_token;
    END IF;
    RETURN v_next;
END
$$;

-- ------------------------------------------------------------------ setting limits

-- Sets (or, with every limit NULL, clears) a topic's limits, recorded in audit_log ('set_queue_limits' or
-- 'clear_queue_limits', the topic as subject) with the actor. Takes the topic's claim lock exclusively: claims under
-- way commit first, and the holders are then rebuilt from the topic's running messages. Wakes the topic's
-- subscribers (room may have grown). True when something changed.
CREATE FUNCTION "${schema}"._engine_set_topic_limits(
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
               "${schema}"._limit_partition(m.headers, p_partition_kind, p_partition_name)
        FROM "${schema}".messages m
        WHERE m.namespace = p_namespace AND m.topic = p_topic AND m.state = 'running'
          AND (p_max_running IS NOT NULL OR p_max_running_per_partition IS NOT NULL);
        IF v_old.partition_name IS DISTINCT FROM p_partition_name OR p_partition_rate_starts IS NULL THEN
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

-- The limited topics of a namespace, by name.
CREATE FUNCTION "${schema}"._engine_topic_limits(p_namespace text)
RETURNS TABLE (topic text, max_running integer, partition_kind text, partition_name text,
               max_running_per_partition integer, rate_starts integer, rate_period_micros bigint,
               partition_rate_starts integer, partition_rate_period_micros bigint, set_at timestamptz, set_by text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY SELECT l.topic::text, l.max_running, l.partition_kind, l.partition_name, l.max_running_per_partition,
                        l.rate_starts, l.rate_period_micros, l.partition_rate_starts, l.partition_rate_period_micros,
                        l.set_at, l.set_by
                 FROM "${schema}".topic_limits l
                 WHERE l.namespace = p_namespace
                 ORDER BY l.topic;
END
$$;

CREATE FUNCTION "${schema}".engine_set_topic_limits(
    p_namespace text, p_topic text, p_max_running integer, p_partition_kind text, p_partition_name text,
    p_max_running_per_partition integer, p_rate_starts integer, p_rate_period_micros bigint,
    p_partition_rate_starts integer, p_partition_rate_period_micros bigint, p_now timestamptz, p_notify boolean,
    p_actor text)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_engine_namespace(p_namespace);
    RETURN "${schema}"._engine_set_topic_limits(p_namespace, p_topic, p_max_running, p_partition_kind,
        p_partition_name, p_max_running_per_partition, p_rate_starts, p_rate_period_micros, p_partition_rate_starts,
        p_partition_rate_period_micros, p_now, p_notify, p_actor);
END
$$;

CREATE FUNCTION "${schema}".engine_topic_limits(p_namespace text)
RETURNS TABLE (topic text, max_running integer, partition_kind text, partition_name text,
               max_running_per_partition integer, rate_starts integer, rate_period_micros bigint,
               partition_rate_starts integer, partition_rate_period_micros bigint, set_at timestamptz, set_by text)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM "${schema}"._check_engine_namespace(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_topic_limits(p_namespace);
END
$$;

-- ------------------------------------------------------------------ the SQL functions

-- Sets a queue's limits (every one NULL is refused: clear_queue_limits clears them). True when they changed.
CREATE FUNCTION "${schema}".set_queue_limits(
    p_namespace text, p_queue text, p_max_running integer DEFAULT NULL, p_partition_header text DEFAULT NULL,
    p_max_running_per_partition integer DEFAULT NULL, p_rate_limit integer DEFAULT NULL,
    p_rate_period interval DEFAULT NULL, p_partition_rate_limit integer DEFAULT NULL,
    p_partition_rate_period interval DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql AS $$
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
    IF p_max_running_per_partition IS NOT NULL OR p_partition_rate_limit IS NOT NULL THEN
        PERFORM "${schema}"._check_name('p_partition_header', p_partition_header);
    ELSIF p_partition_header IS NOT NULL THEN
        PERFORM "${schema}"._invalid('p_partition_header', "${schema}"._shown(p_partition_header),
            'null without p_max_running_per_partition or p_partition_rate_limit');
    END IF;
    RETURN "${schema}"._engine_set_topic_limits(p_namespace, p_queue, p_max_running,
        CASE WHEN p_partition_header IS NULL THEN NULL ELSE 'header' END, p_partition_header,
        p_max_running_per_partition, p_rate_limit, "${schema}"._micros(p_rate_period), p_partition_rate_limit,
        "${schema}"._micros(p_partition_rate_period), NULL, "${schema}"._notify_wanted(NULL),
        "${schema}".current_actor());
END
$$;

-- True when the queue had limits and has none now.
CREATE FUNCTION "${schema}".clear_queue_limits(p_namespace text, p_queue text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    PERFORM "${schema}"._check_name('p_queue', p_queue);
    RETURN "${schema}"._engine_set_topic_limits(p_namespace, p_queue, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
        NULL, "${schema}"._notify_wanted(NULL), "${schema}".current_actor());
END
$$;

CREATE FUNCTION "${schema}".list_queue_limits(p_namespace text)
RETURNS TABLE (queue text, max_running integer, partition_header text, max_running_per_partition integer,
               rate_limit integer, rate_period interval, partition_rate_limit integer,
               partition_rate_period interval, set_at timestamptz, set_by text)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    RETURN QUERY SELECT l.topic, l.max_running, l.partition_name, l.max_running_per_partition, l.rate_starts,
                        l.rate_period_micros * interval '1 microsecond', l.partition_rate_starts,
                        l.partition_rate_period_micros * interval '1 microsecond', l.set_at, l.set_by
                 FROM "${schema}"._engine_topic_limits(p_namespace) l;
END
$$;

SELECT "${schema}"._secure_schema();

-- version 21's plans, once per session, for the functions re-created here
DO $$
DECLARE
    v_function record;
BEGIN
    FOR v_function IN
        SELECT p.oid::regprocedure AS signature
        FROM pg_catalog.pg_proc p
        WHERE p.pronamespace = (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = '${schema}')
          AND p.proname IN ('_engine_claim', '_engine_next_due')
        ORDER BY p.oid
    LOOP
        EXECUTE format('ALTER FUNCTION %s SET plan_cache_mode = force_generic_plan', v_function.signature);
    END LOOP;
END
$$;
