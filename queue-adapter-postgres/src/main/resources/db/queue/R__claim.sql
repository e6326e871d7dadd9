-- Claiming: a claim starts due pending messages of some topics of a namespace under a lease (worker, lease token,
-- lease end) and counts the attempt, in claim order (priority, due time, id). Tables: messages, paused_topics,
-- topic_limits, limit_holders and limit_buckets (limits), head_sweeps (looks behind the claim positions).
--
-- For psql users: pull, pull_batch and pull_any. For the Java adapter: _engine_claim, _engine_take_head_sweeps and
-- _engine_next_due, called directly by trusted logins, else through the gates engine_claim, engine_take_head_sweeps
-- and engine_next_due, which check the caller's namespace and every argument first (at most 64 topics a call).
--
-- Pauses and limits meet the claims at a transaction-level advisory lock per topic (_flow_lock_key), which a claim
-- takes before it reads paused_topics and topic_limits, in topic name order so that two claims cannot deadlock. A
-- topic without limits, or with a topic-wide rate alone, is locked shared. A topic with any other limit is locked
-- exclusively: its claims run one at a time, and each reads a snapshot that holds every earlier claim. A pause and a
-- change of limits take the lock exclusively too, so once they have committed no claim starts a message against
-- them. The locks are held to the end of the claiming transaction (the Java engine claims in a statement of its own).


-- Claims up to p_limit messages of p_topics, in the order given. Without limits on any of them, one statement claims
-- from every topic: after the claimer's position in the topic (p_after_*, where messages of a more urgent priority
-- are read from the head), or, with p_behind, from the head up to the position only: rows another claim holds are
-- skipped (FOR NO KEY UPDATE SKIP LOCKED, which a publisher's FOR KEY SHARE lock from _ordering_free lets through).
-- A topic whose only limit is a topic-wide rate claims the same way under the shared lock, at most the tokens of its
-- bucket, whose row it locks (created when missing, in topic name order, as the advisory locks are): concurrent
-- claims of the topic queue on that row. Other limited topics claim under the
-- exclusive lock from the head of the claim order, without row locks: the room their running limits leave is counted
-- through limit_holders, and their rates spend the tokens of limit_buckets. A limit set between the first read of
-- topic_limits and the lock is seen by a second read after it: the topic is left out of this claim, whose lock is
-- only shared, and the next claim locks it exclusively.
--
-- Under a limit per partition the candidates (a bounded number from the head), the running messages and the bucket
-- of each candidate's partition are materialised: each is computed once per claim and joined by hash. Inlined, the
-- generic plan would count the running messages of the partitions again for every candidate, under the exclusive
-- lock, while every other claimer of the topic waits. A claim's time is read when it starts, so one that waited may
-- be older than its bucket's last refill: a bucket's time only moves forward, so that span is not refilled twice.
-- limited says whether settling the message frees room under a running limit (a rate's tokens come back with time).
--
-- Bitmap scans are off: a vacuum that catches up after a long-held horizon can leave statistics of no live rows over
-- tens of thousands of pages, and a plan made from them reads every due row of the topic through a bitmap on the
-- claim index and sorts them, where the index in claim order stops after p_limit rows. Its reads are in index order.
CREATE OR REPLACE FUNCTION "${schema}"._engine_claim(
    p_namespace text, p_topics text[], p_worker text, p_limit integer, p_lease_token bigint, p_lease_micros bigint,
    p_now timestamptz, p_async boolean, p_after_priorities integer[], p_after_run_at_micros bigint[],
    p_after_ids bigint[], p_behind boolean[])
RETURNS TABLE (id bigint, namespace text, topic text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, lease_token bigint, worker text, lease_until timestamptz,
               published_at timestamptz, run_at timestamptz, unique_key text, published_by text, ordering_key text,
               limited boolean)
LANGUAGE plpgsql
SET plan_cache_mode = 'force_generic_plan'
SET enable_bitmapscan = off
AS $$
#variable_conflict use_column
DECLARE
    v_limited  text[];
    v_paused   text[];
    v_now      timestamptz := coalesce(p_now, statement_timestamp());
    v_left     integer := p_limit;
    v_topic    text;
    v_limits   "${schema}".topic_limits;
    v_room     integer;
    v_tokens   double precision;
    v_scan     integer;
    v_claimed  integer;
    v_any_limits boolean;
    v_rated    text[] := '{}'::text[];
    v_slots    integer[];
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_claim');
    END IF;
    -- v_limited: the topics whose claims must run one at a time, those with any limit but a topic-wide rate alone or
    -- a topic-wide running limit alone
    SELECT count(*) > 0,
           coalesce(array_agg(l.topic::text)
                    FILTER (WHERE NOT "${schema}"._rate_alone(l) AND NOT "${schema}"._slots_alone(l)), '{}')
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
                        -- a rate alone or a running limit alone claims under the shared lock, but not in the
                        -- statement for topics without limits below, which this claim runs when it found none at
                        -- the first read
                        AND (NOT v_any_limits
                             OR NOT ("${schema}"._rate_alone(l) OR "${schema}"._slots_alone(l))));
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
                FOR NO KEY UPDATE SKIP LOCKED
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
        IF v_limits.topic IS NOT NULL AND "${schema}"._slots_alone(v_limits) THEN
            -- a running limit alone (V3__limit_slots.sql): the messages still running in slots above the limit
            -- (lowered while they ran) count first, then the free slots within it are locked, so that no concurrent
            -- claim takes them, and all but that many are used
            v_room := (SELECT count(*)
                       FROM "${schema}".limit_slots o
                       JOIN "${schema}".messages m ON m.id = o.message_id AND m.state = 'running'
                                                  AND m.lease_token = o.lease_token
                       WHERE o.namespace = p_namespace AND o.topic = v_topic AND o.slot > v_limits.max_running);
            v_slots := ARRAY(
                SELECT s.slot
                FROM "${schema}".limit_slots s
                WHERE s.namespace = p_namespace AND s.topic = v_topic AND s.slot <= v_limits.max_running
                  AND (s.message_id IS NULL
                       OR NOT EXISTS (SELECT 1 FROM "${schema}".messages m
                                      WHERE m.id = s.message_id AND m.state = 'running'
                                        AND m.lease_token = s.lease_token))
                ORDER BY s.slot
                LIMIT v_left + v_room
                FOR UPDATE SKIP LOCKED);
            -- again with a new snapshot: a slot seated by a claim that committed after this statement began is
            -- locked in its new version, but the check above read its message as that snapshot saw it (not yet
            -- running). Locked now, the slots can only get freer.
            v_slots := ARRAY(
                SELECT s.slot
                FROM "${schema}".limit_slots s
                WHERE s.namespace = p_namespace AND s.topic = v_topic AND s.slot = ANY (v_slots)
                  AND (s.message_id IS NULL
                       OR NOT EXISTS (SELECT 1 FROM "${schema}".messages m
                                      WHERE m.id = s.message_id AND m.state = 'running'
                                        AND m.lease_token = s.lease_token))
                ORDER BY s.slot);
            v_room := least(v_left, cardinality(v_slots) - v_room);
            CONTINUE WHEN v_room <= 0;
            RETURN QUERY
            WITH picked AS MATERIALIZED (
                SELECT c.id, c.priority, c.run_at,
                       row_number() OVER (ORDER BY c.priority, c.run_at, c.id)::integer AS seat
                FROM (SELECT m.id, m.priority, m.run_at
                      FROM "${schema}".messages m
                      WHERE m.namespace = p_namespace
                        AND m.topic = v_topic
                        AND m.state = 'pending'
                        AND m.run_at <= v_now
                      ORDER BY m.priority, m.run_at, m.id
                      LIMIT v_room
                      FOR NO KEY UPDATE SKIP LOCKED) c
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
            ),
            seated AS (
                UPDATE "${schema}".limit_slots s
                SET message_id = c.id, lease_token = c.lease_token
                FROM claimed c JOIN picked p ON p.id = c.id
                WHERE s.namespace = p_namespace AND s.topic = v_topic AND s.slot = v_slots[p.seat]
            )
            SELECT c.id, c.namespace::text, c.topic::text, c.payload, c.headers, c.priority::integer, c.attempts,
                   c.max_attempts, c.lease_token, c.worker, c.lease_until, c.published_at, c.run_at,
                   c.unique_key::text, c.published_by, c.ordering_key::text, true
            FROM claimed c JOIN picked p ON p.id = c.id
            ORDER BY c.priority, c.run_at, c.id;
            GET DIAGNOSTICS v_claimed = ROW_COUNT;
            v_left := v_left - v_claimed;
            CONTINUE;
        END IF;
        IF v_limits.topic IS NULL OR (v_topic = ANY (v_rated) AND "${schema}"._rate_alone(v_limits)) THEN
            -- not limited (or its limits were cleared after the first read): the positional claim of one topic,
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
                    FOR NO KEY UPDATE SKIP LOCKED
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
        running AS MATERIALIZED (
            SELECT h.partition AS part, count(*) AS n
            FROM "${schema}".limit_holders h
            WHERE h.namespace = p_namespace AND h.topic = v_topic AND v_limits.max_running_per_partition IS NOT NULL
              AND h.partition IN (SELECT DISTINCT c.part FROM candidates c)
            GROUP BY h.partition
        ),
        part_tokens AS MATERIALIZED (
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


CREATE OR REPLACE FUNCTION "${schema}".engine_claim(
    p_namespace text, p_topics text[], p_worker text, p_limit integer, p_lease_token bigint, p_lease_micros bigint,
    p_now timestamptz, p_async boolean, p_after_priorities integer[], p_after_run_at_micros bigint[],
    p_after_ids bigint[], p_behind boolean[])
RETURNS TABLE (id bigint, namespace text, topic text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, lease_token bigint, worker text, lease_until timestamptz,
               published_at timestamptz, run_at timestamptz, unique_key text, published_by text, ordering_key text,
               limited boolean)
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    -- at most 64 topics: the claim takes an advisory lock per topic
    PERFORM "${schema}"._check_array('p_topics', p_topics, 1, 64);
    PERFORM "${schema}"._check_names('p_topics', p_topics);
    PERFORM "${schema}"._check_text('p_worker', p_worker, 128);
    PERFORM "${schema}"._check_range('p_limit', p_limit, 1, 1000, '1 to 1000');
    IF p_lease_token IS NULL THEN
        PERFORM "${schema}"._invalid('p_lease_token', 'null', 'a lease token');
    END IF;
    PERFORM "${schema}"._check_range('p_lease_micros', p_lease_micros, 1000000, 86400000000,
                                     '1000000 to 86400000000 microseconds (1 s to 24 h)');
    PERFORM "${schema}"._check_engine_now(p_now);
    PERFORM "${schema}"._check_claim_positions(p_topics, p_after_priorities, p_after_run_at_micros, p_after_ids,
                                               p_behind);
    RETURN QUERY SELECT * FROM "${schema}"._engine_claim(p_namespace, p_topics, p_worker, p_limit, p_lease_token,
        p_lease_micros, p_now, coalesce(p_async, false), p_after_priorities, p_after_run_at_micros, p_after_ids,
        p_behind);
END
$$;


-- The claim positions of engine_claim: each array NULL (no position) or one element per topic, and per topic a whole
-- position (priority 0-9, due time in microseconds since 1970 up to 9999, id) or none.
CREATE OR REPLACE FUNCTION "${schema}"._check_claim_positions(p_topics text[], p_after_priorities integer[],
                                                              p_after_run_at_micros bigint[], p_after_ids bigint[],
                                                              p_behind boolean[])
RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_count integer := cardinality(p_topics);
    v_at    bigint;
BEGIN
    IF p_after_priorities IS NOT NULL THEN
        PERFORM "${schema}"._check_array('p_after_priorities', p_after_priorities, v_count, v_count, true);
        PERFORM "${schema}"._check_ranges('p_after_priorities', p_after_priorities::bigint[], 0, 9, '0 to 9');
    END IF;
    IF p_after_run_at_micros IS NOT NULL THEN
        PERFORM "${schema}"._check_array('p_after_run_at_micros', p_after_run_at_micros, v_count, v_count, true);
        PERFORM "${schema}"._check_ranges('p_after_run_at_micros', p_after_run_at_micros, 0, 253402300799000000,
                                          '0 to 253402300799000000 microseconds since 1970 (up to 9999)');
    END IF;
    IF p_after_ids IS NOT NULL THEN
        PERFORM "${schema}"._check_array('p_after_ids', p_after_ids, v_count, v_count, true);
    END IF;
    IF p_behind IS NOT NULL THEN
        PERFORM "${schema}"._check_array('p_behind', p_behind, v_count, v_count, true);
    END IF;
    SELECT u.at INTO v_at
    FROM unnest(p_after_priorities, p_after_run_at_micros, p_after_ids) WITH ORDINALITY AS u(priority, run_at, id, at)
    WHERE (u.priority IS NULL) <> (u.id IS NULL) OR (u.run_at IS NULL) <> (u.id IS NULL)
    ORDER BY u.at
    LIMIT 1;
    IF v_at IS NOT NULL THEN
        PERFORM "${schema}"._invalid('p_after_ids[' || v_at || ']',
            coalesce(p_after_priorities[v_at]::text, 'null') || '/'
            || coalesce(p_after_run_at_micros[v_at]::text, 'null') || '/' || coalesce(p_after_ids[v_at]::text, 'null'),
            'a whole claim position (priority, due time, id) or none');
    END IF;
END
$$;


-- The claim of the SQL pulls: checks the input, rescues up to 1000 expired leases of the namespace first, and claims
-- under a random lease token for the visibility timeout given, else the queue policy's (of the first queue).
CREATE OR REPLACE FUNCTION "${schema}"._claim(p_namespace text, p_queues text[], p_worker_id text,
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
    v_seen       text[] := '{}'::text[];
    v_queue      text;
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_claim');
    END IF;
    PERFORM "${schema}"._check_namespace(p_namespace);
    IF p_queues IS NULL OR cardinality(p_queues) = 0 OR cardinality(p_queues) > 64 THEN
        PERFORM "${schema}"._invalid('p_queues', "${schema}"._shown(p_queues::text), '1 to 64 queues');
    END IF;
    -- the size and the names are checked here and below, for each pull: only the rare array of more dimensions
    -- costs the call that names its problem
    IF array_ndims(p_queues) > 1 THEN
        PERFORM "${schema}"._check_array('p_queues', p_queues, 1, 64);
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
                                   "${schema}"._micros(v_visibility), NULL, false, NULL, NULL, NULL, NULL) c;
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".pull(p_namespace text, p_queue text, p_worker_id text DEFAULT NULL,
                                            p_visibility_timeout interval DEFAULT NULL)
RETURNS TABLE (id bigint, queue text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, lease_token bigint, lease_until timestamptz, published_at timestamptz,
               run_at timestamptz, worker_id text, unique_key text, published_by text, ordering_key text)
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_name('p_queue', p_queue);
    RETURN QUERY SELECT * FROM "${schema}"._claim(p_namespace, ARRAY[p_queue], p_worker_id, p_visibility_timeout, 1);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".pull_batch(p_namespace text, p_queue text, p_limit integer DEFAULT 10,
                                                  p_worker_id text DEFAULT NULL, p_visibility_timeout interval DEFAULT NULL)
RETURNS TABLE (id bigint, queue text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, lease_token bigint, lease_until timestamptz, published_at timestamptz,
               run_at timestamptz, worker_id text, unique_key text, published_by text, ordering_key text)
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_name('p_queue', p_queue);
    RETURN QUERY SELECT * FROM "${schema}"._claim(p_namespace, ARRAY[p_queue], p_worker_id, p_visibility_timeout,
                                                  coalesce(p_limit, 10));
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".pull_any(p_namespace text, p_queues text[], p_limit integer DEFAULT 1,
                                                p_worker_id text DEFAULT NULL, p_visibility_timeout interval DEFAULT NULL)
RETURNS TABLE (id bigint, queue text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, lease_token bigint, lease_until timestamptz, published_at timestamptz,
               run_at timestamptz, worker_id text, unique_key text, published_by text, ordering_key text)
LANGUAGE sql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
    SELECT * FROM "${schema}"._claim(p_namespace, p_queues, p_worker_id, p_visibility_timeout, coalesce(p_limit, 1))
$$;


-- The topics of p_topics whose look behind the claim positions the caller takes: those no claimer took within
-- p_gap_micros of now (or taken at a time after now: a manual clock moved back). Waits for a concurrent taker of the
-- same topic, which then has it. One claimer of the fleet looks behind a topic per interval, because while a long
-- transaction holds vacuum back, each look steps over the index entries of every message claimed since.
CREATE OR REPLACE FUNCTION "${schema}"._engine_take_head_sweeps(p_namespace text, p_topics text[], p_gap_micros bigint,
                                                                p_now timestamptz)
RETURNS SETOF text
LANGUAGE plpgsql
SET plan_cache_mode = 'force_generic_plan'
AS $$
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_take_head_sweeps');
    END IF;
    RETURN QUERY
    INSERT INTO "${schema}".head_sweeps AS h (namespace, topic, swept_at)
    SELECT p_namespace, t.topic, coalesce(p_now, statement_timestamp())
    FROM (SELECT DISTINCT u.topic FROM unnest(p_topics) AS u(topic) ORDER BY u.topic) t
    ON CONFLICT (namespace, topic) DO UPDATE SET swept_at = excluded.swept_at
    WHERE h.swept_at <= excluded.swept_at - p_gap_micros * interval '1 microsecond'
       OR h.swept_at > excluded.swept_at
    RETURNING h.topic::text;
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_take_head_sweeps(p_namespace text, p_topics text[], p_gap_micros bigint,
                                                               p_now timestamptz)
RETURNS SETOF text
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    PERFORM "${schema}"._check_array('p_topics', p_topics, 1, 64);
    PERFORM "${schema}"._check_names('p_topics', p_topics);
    PERFORM "${schema}"._check_range('p_gap_micros', p_gap_micros, 0, 86400000000,
                                     '0 to 86400000000 microseconds (24 h)');
    PERFORM "${schema}"._check_engine_now(p_now);
    RETURN QUERY SELECT * FROM "${schema}"._engine_take_head_sweeps(p_namespace, p_topics, p_gap_micros, p_now);
END
$$;


-- The earliest due time after now of a pending message of p_topics (an index probe per topic and priority), or,
-- when a rate-limited topic's bucket is empty now and its next start is allowed sooner, that time: an idle
-- subscriber held back by a rate claims again then.
CREATE OR REPLACE FUNCTION "${schema}"._engine_next_due(p_namespace text, p_topics text[], p_now timestamptz)
RETURNS timestamptz
LANGUAGE plpgsql STABLE
SET plan_cache_mode = 'force_generic_plan'
AS $$
DECLARE
    v_next  timestamptz;
    v_token timestamptz;
    v_now   timestamptz := coalesce(p_now, statement_timestamp());
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_next_due');
    END IF;
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


CREATE OR REPLACE FUNCTION "${schema}".engine_next_due(p_namespace text, p_topics text[], p_now timestamptz)
RETURNS timestamptz
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    PERFORM "${schema}"._check_array('p_topics', p_topics, 1, 64);
    PERFORM "${schema}"._check_names('p_topics', p_topics);
    PERFORM "${schema}"._check_engine_now(p_now);
    RETURN "${schema}"._engine_next_due(p_namespace, p_topics, p_now);
END
$$;
