-- Flow control (docs/flow-control.md): pausing a topic (a queue, in SQL) for the whole fleet, ordering keys, and
-- concurrency and rate limits per topic. Tables: paused_topics, topic_ordering, topic_limits, limit_holders,
-- limit_slots, limit_buckets, and messages and dead_letters for the keys.
--
-- A pause is a row of paused_topics. The claim reads it under a per-topic advisory lock (_flow_lock_key) that a pause
-- and a change of limits take exclusively: they wait for the claims under way, and once committed, no claim starts a
-- message against them. An ordering key runs its messages one at a time in id order, and behind a dead letter waits
-- or goes on by its topic's choice (topic_ordering). Only the head of a key is pending or running: its successors
-- wait in the state 'waiting', which the claim index does not hold, and _ordering_advance promotes the next one in
-- the transaction that settles the head. Publishers of a key and promoters of a key each take an advisory lock of
-- their own per key (_ordering_lock), and meet only at the row a publish locks (_ordering_free_keys). Limits count
-- running messages through limit_holders, or seat them in limit_slots when a running limit for the whole topic is
-- the only one, and ration starts with token buckets in limit_buckets, all kept by the claim.
--
-- For psql users: pause_queue, resume_queue, list_paused_queues, set_queue_ordering, get_queue_ordering,
-- set_queue_limits, list_queue_limits and clear_queue_limits. For the Java adapter: the _engine_ functions here,
-- called directly by trusted logins, else through their engine_ gates, which check the caller's namespace and every
-- argument first.


-- The advisory lock key of a topic's claims. Seeded with the schema, so two queue schemas in one database do not
-- wait for each other (a collision would only make a claim wait for an unrelated pause, never change a result).
CREATE OR REPLACE FUNCTION "${schema}"._flow_lock_key(p_namespace text, p_topic text) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT hashtextextended(p_namespace || '/' || p_topic, hashtext('${schema}')::bigint)
$$;


-- Pauses (p_paused) or resumes a topic. True when that changed something, recorded in audit_log with the actor.
-- A resume wakes the topic's subscribers (p_notify). The exclusive lock makes a pause wait for claims under way.
CREATE OR REPLACE FUNCTION "${schema}"._engine_pause_topic(p_namespace text, p_topic text, p_paused boolean, p_now timestamptz,
                                                           p_notify boolean, p_actor text)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_pause_topic');
    END IF;
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
CREATE OR REPLACE FUNCTION "${schema}"._engine_paused_topics(p_namespace text)
RETURNS TABLE (topic text, paused_at timestamptz, paused_by text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_paused_topics');
    END IF;
    RETURN QUERY SELECT p.topic::text, p.paused_at, p.paused_by
                 FROM "${schema}".paused_topics p
                 WHERE p.namespace = p_namespace
                 ORDER BY p.topic;
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_pause_topic(p_namespace text, p_topic text, p_paused boolean, p_now timestamptz,
                                                          p_notify boolean, p_actor text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    PERFORM "${schema}"._check_name('p_topic', p_topic);
    IF p_paused IS NULL THEN
        PERFORM "${schema}"._invalid('p_paused', 'null', 'true (pause) or false (resume)');
    END IF;
    PERFORM "${schema}"._check_engine_now(p_now);
    PERFORM "${schema}"._check_engine_actor('p_actor', p_actor);
    RETURN "${schema}"._engine_pause_topic(p_namespace, p_topic, p_paused, p_now, coalesce(p_notify, false), p_actor);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_paused_topics(p_namespace text)
RETURNS TABLE (topic text, paused_at timestamptz, paused_by text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    RETURN QUERY SELECT * FROM "${schema}"._engine_paused_topics(p_namespace);
END
$$;


-- True when the queue was running and is paused now. Messages already running finish, nothing new is claimed.
CREATE OR REPLACE FUNCTION "${schema}".pause_queue(p_namespace text, p_queue text) RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    PERFORM "${schema}"._check_name('p_queue', p_queue);
    RETURN "${schema}"._engine_pause_topic(p_namespace, p_queue, true, NULL, false, "${schema}".current_actor());
END
$$;


-- True when the queue was paused and runs again: its subscribers are woken (unless queue.notify is off).
CREATE OR REPLACE FUNCTION "${schema}".resume_queue(p_namespace text, p_queue text) RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    PERFORM "${schema}"._check_name('p_queue', p_queue);
    RETURN "${schema}"._engine_pause_topic(p_namespace, p_queue, false, NULL, "${schema}"._notify_wanted(NULL),
                                           "${schema}".current_actor());
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".list_paused_queues(p_namespace text)
RETURNS TABLE (queue text, paused_at timestamptz, paused_by text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_paused_topics(p_namespace);
END
$$;


-- Takes the advisory locks of the keys given (arrays of equal length, NULL keys skipped) for the rest of the
-- transaction, in the order of their lock values, in one of two spaces: 'publish' for publishers, 'advance' for the
-- paths that promote (_ordering_advance). Publishers of one key wait for each other, so the ids of a key follow the
-- order in which its publishers commit. Promoters of one key wait for each other, so two of them never promote two
-- heads. A publisher and a promoter do not share a lock: they meet only at the row that holds a new message back
-- (_ordering_free_keys). A collision of two keys' values only makes them wait for each other, and the two-int form
-- never meets the one-bigint locks of the topics. Each statement after the lock must read with a fresh snapshot,
-- which READ COMMITTED gives and REPEATABLE READ does not: keyed work in a stricter transaction is refused (QU006).
-- The unique index messages_ordering_head_idx makes two heads of one key impossible whatever writes the table.
CREATE OR REPLACE FUNCTION "${schema}"._ordering_lock(p_space text, p_namespaces text[], p_topics text[], p_keys text[])
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_ordering_lock');
    END IF;
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION USING ERRCODE = 'QU006',
            MESSAGE = format('ordering keys need READ COMMITTED transactions, this one is %s',
                             upper(current_setting('transaction_isolation'))),
            HINT = 'publish and settle messages with an ordering key in a READ COMMITTED transaction (the default)';
    END IF;
    PERFORM pg_advisory_xact_lock(k.space, k.key)
    FROM (SELECT DISTINCT hashtext('${schema}/' || p_space || '/' || u.namespace || '/' || u.topic) AS space,
                          hashtext(u.key) AS key
          FROM unnest(p_namespaces, p_topics, p_keys) AS u(namespace, topic, key)
          WHERE u.key IS NOT NULL
          ORDER BY 1, 2) k;
END
$$;
DROP FUNCTION IF EXISTS "${schema}"._ordering_lock(text[], text[], text[]);


-- Whether messages of the topic wait behind a dead letter of their key (the default) rather than go on.
CREATE OR REPLACE FUNCTION "${schema}"._ordering_waits(p_namespace text, p_topic text) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_ordering_waits');
    END IF;
    RETURN NOT EXISTS (SELECT 1 FROM "${schema}".topic_ordering o
                       WHERE o.namespace = p_namespace AND o.topic = p_topic AND o.behind_dead_letter = 'continue');
END
$$;


-- The keys given (arrays of equal length, NULL keys skipped) that a message published now may be the head of, for a
-- publisher holding their 'publish' locks. A key is not free while it has a live message, or a dead letter when the
-- topic waits behind them. Whatever holds a key back is row-locked FOR KEY SHARE until the publisher commits: the
-- key's last waiting message, else its head, else its dead letters. That lock does not stop a claim or a promotion
-- (updates of other columns under FOR NO KEY UPDATE), but it stops the delete of that row and the settles that lock
-- it FOR UPDATE: an acknowledgement, dead letter, cancel or purge of it waits for the publish to commit, and the
-- promotion that follows in its transaction then sees the new message. Were the row deleted first, the lock waits
-- for that commit, and a later statement reads what it promoted. So a publisher and the settling of a head wait for
-- each other only when the head is the key's last message and both act at once. The dead letters are locked under
-- 'continue' too, so that a redrive (which inserts rows of the key) cannot make a second head beside the new one.
-- Under 'wait', the read of the topic's choice holds a shared lock that a change of the choice takes exclusively, so
-- a switch to 'continue' promotes what this publish leaves waiting. One statement per step for all the keys, each
-- step reading what the previous one's waits let commit.
CREATE OR REPLACE FUNCTION "${schema}"._ordering_free_keys(p_namespaces text[], p_topics text[], p_keys text[])
RETURNS TABLE (namespace text, topic text, ordering_key text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_ns        text[];
    v_topics    text[];
    v_keys      text[];
    v_dead      boolean[];
    v_free_ns   text[] := '{}'::text[];
    v_free_tops text[] := '{}'::text[];
    v_free_keys text[] := '{}'::text[];
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_ordering_free_keys');
    END IF;
    SELECT coalesce(array_agg(k.namespace), '{}'::text[]), coalesce(array_agg(k.topic), '{}'::text[]),
           coalesce(array_agg(k.key), '{}'::text[])
    INTO v_ns, v_topics, v_keys
    FROM (SELECT DISTINCT u.namespace, u.topic, u.key
          FROM unnest(p_namespaces, p_topics, p_keys) AS u(namespace, topic, key)
          WHERE u.key IS NOT NULL) k;
    FOR v_round IN 1..10 LOOP
        -- keys with a waiting message: its last one locked
        SELECT coalesce(array_agg(k.namespace), '{}'::text[]), coalesce(array_agg(k.topic), '{}'::text[]),
               coalesce(array_agg(k.key), '{}'::text[])
        INTO v_ns, v_topics, v_keys
        FROM unnest(v_ns, v_topics, v_keys) AS k(namespace, topic, key)
        LEFT JOIN LATERAL (
            SELECT true AS found
            FROM "${schema}".messages m
            WHERE m.namespace = k.namespace AND m.topic = k.topic AND m.ordering_key = k.key AND m.state = 'waiting'
            ORDER BY m.id DESC
            LIMIT 1
            FOR KEY SHARE
        ) w ON true
        WHERE w.found IS NULL;
        -- keys with a head (at most one, by messages_ordering_head_idx): locked
        SELECT coalesce(array_agg(k.namespace), '{}'::text[]), coalesce(array_agg(k.topic), '{}'::text[]),
               coalesce(array_agg(k.key), '{}'::text[])
        INTO v_ns, v_topics, v_keys
        FROM unnest(v_ns, v_topics, v_keys) AS k(namespace, topic, key)
        LEFT JOIN LATERAL (
            SELECT true AS found
            FROM "${schema}".messages m
            WHERE m.namespace = k.namespace AND m.topic = k.topic AND m.ordering_key = k.key AND m.state <> 'waiting'
            FOR KEY SHARE
        ) h ON true
        WHERE h.found IS NULL;
        -- dead letters: every one of the key locked
        SELECT coalesce(array_agg(d.n > 0), '{}'::boolean[]) INTO v_dead
        FROM unnest(v_ns, v_topics, v_keys) WITH ORDINALITY AS k(namespace, topic, key, ord)
        CROSS JOIN LATERAL (
            SELECT count(*) AS n
            FROM (SELECT 1 FROM "${schema}".dead_letters x
                  WHERE x.namespace = k.namespace AND x.topic = k.topic AND x.ordering_key = k.key
                  FOR KEY SHARE) l
        ) d;
        PERFORM pg_advisory_xact_lock_shared(hashtext('${schema}/ordering'), hashtext(t.namespace || '/' || t.topic))
        FROM (SELECT DISTINCT k.namespace, k.topic
              FROM unnest(v_ns, v_topics, v_dead) AS k(namespace, topic, dead)
              WHERE k.dead
              ORDER BY 1, 2) t;
        -- the keys left, but for those whose topic waits behind their dead letters. A row deleted while the locks
        -- above waited may have been replaced (a promotion, a redrive): those keys go round again
        WITH open AS MATERIALIZED (
            SELECT k.namespace, k.topic, k.key,
                   -- two probes, since one index holds the waiting rows and the other the rest
                   (EXISTS (SELECT 1 FROM "${schema}".messages m
                            WHERE m.namespace = k.namespace AND m.topic = k.topic AND m.ordering_key = k.key
                              AND m.state = 'waiting')
                    OR EXISTS (SELECT 1 FROM "${schema}".messages m
                               WHERE m.namespace = k.namespace AND m.topic = k.topic AND m.ordering_key = k.key
                                 AND m.state <> 'waiting')) AS live
            FROM unnest(v_ns, v_topics, v_keys, v_dead) AS k(namespace, topic, key, dead)
            WHERE NOT (k.dead AND "${schema}"._ordering_waits(k.namespace, k.topic))
        )
        SELECT v_free_ns || coalesce(array_agg(o.namespace) FILTER (WHERE NOT o.live), '{}'::text[]),
               v_free_tops || coalesce(array_agg(o.topic) FILTER (WHERE NOT o.live), '{}'::text[]),
               v_free_keys || coalesce(array_agg(o.key) FILTER (WHERE NOT o.live), '{}'::text[]),
               coalesce(array_agg(o.namespace) FILTER (WHERE o.live), '{}'::text[]),
               coalesce(array_agg(o.topic) FILTER (WHERE o.live), '{}'::text[]),
               coalesce(array_agg(o.key) FILTER (WHERE o.live), '{}'::text[])
        INTO v_free_ns, v_free_tops, v_free_keys, v_ns, v_topics, v_keys
        FROM open o;
        IF cardinality(v_keys) = 0 THEN
            RETURN QUERY SELECT * FROM unnest(v_free_ns, v_free_tops, v_free_keys);
            RETURN;
        END IF;
    END LOOP;
    RAISE EXCEPTION USING ERRCODE = '40001',
        MESSAGE = format('publish gave up after 10 rounds: the ordering keys %s kept changing', v_keys::text);
END
$$;
DROP FUNCTION IF EXISTS "${schema}"._ordering_free(text, text, text);


-- Takes the 'advance' locks of the keys given (arrays of equal length) and promotes them in one statement, so that
-- settling many keyed messages holds those locks only briefly. A key advances when it has no
-- head: its first waiting message becomes pending, unless the topic waits behind dead letters and a dead letter of the
-- key came before it. Every probe is a LATERAL subquery with LIMIT 1, so each key costs index probes whatever the
-- planner guesses of the number of keys (a hash of every keyed row of the table would read it all). Returns how many
-- messages became pending.
--
-- A promoted message keeps its id and gets the promotion's time as its due time (unless it was due later), so it
-- often sorts behind the positions claimers resume after (ClaimCursor), where only the sweep behind the positions
-- would find it. Besides the wake-up of its topic, each promotion therefore sends
-- 'promoted:namespace/topic/priority/due-micros/id' on the same channel with the first promoted message in claim
-- order: the topic's subscribers move their position back to just before it, and their next claim reads from there.
CREATE OR REPLACE FUNCTION "${schema}"._ordering_advance(p_namespaces text[], p_topics text[], p_keys text[],
                                                         p_now timestamptz, p_notify boolean)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    v_count integer;
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_ordering_advance');
    END IF;
    PERFORM "${schema}"._ordering_lock('advance', p_namespaces, p_topics, p_keys);
    WITH keys AS MATERIALIZED (
        SELECT DISTINCT u.namespace, u.topic, u.key
        FROM unnest(p_namespaces, p_topics, p_keys) AS u(namespace, topic, key)
        WHERE u.key IS NOT NULL
    ),
    topics AS MATERIALIZED (
        SELECT t.namespace, t.topic, "${schema}"._ordering_waits(t.namespace, t.topic) AS waits
        FROM (SELECT DISTINCT k.namespace, k.topic FROM keys k) t
    ),
    next AS MATERIALIZED (
        SELECT n.id
        FROM keys k
        JOIN topics t ON t.namespace = k.namespace AND t.topic = k.topic
        CROSS JOIN LATERAL (
            SELECT m.id
            FROM "${schema}".messages m
            WHERE m.namespace = k.namespace AND m.topic = k.topic AND m.ordering_key = k.key AND m.state = 'waiting'
            ORDER BY m.id
            LIMIT 1
        ) n
        LEFT JOIN LATERAL (
            SELECT true AS found
            FROM "${schema}".messages h
            WHERE h.namespace = k.namespace AND h.topic = k.topic AND h.ordering_key = k.key AND h.state <> 'waiting'
            LIMIT 1
        ) head ON true
        LEFT JOIN LATERAL (
            SELECT true AS found
            FROM "${schema}".dead_letters d
            WHERE t.waits AND d.namespace = k.namespace AND d.topic = k.topic AND d.ordering_key = k.key
              AND d.id < n.id
            LIMIT 1
        ) dead ON true
        WHERE head.found IS NULL AND dead.found IS NULL
    ),
    promoted AS (
        UPDATE "${schema}".messages m
        SET state = 'pending', run_at = greatest(m.run_at, coalesce(p_now, statement_timestamp()))
        -- primary key probes: a join let the planner read every waiting row through their index
        WHERE m.id = ANY (ARRAY(SELECT x.id FROM next x)) AND m.state = 'waiting'
        RETURNING m.namespace, m.topic, m.priority, m.run_at, m.id
    ),
    notified AS (
        SELECT pg_notify('${schema}_wakeup', p.namespace || '/' || p.topic), "${schema}"._bump_wake_mark(p.namespace),
               pg_notify('${schema}_wakeup', 'promoted:' || p.namespace || '/' || p.topic || '/' || p.priority || '/'
                                             || (extract(epoch FROM p.run_at) * 1000000)::bigint || '/' || p.id)
        FROM (SELECT DISTINCT ON (y.namespace, y.topic) y.namespace, y.topic, y.priority, y.run_at, y.id
              FROM promoted y
              ORDER BY y.namespace, y.topic, y.priority, y.run_at, y.id) p
        WHERE p_notify
    )
    SELECT count(*) INTO v_count
    FROM promoted
    WHERE (SELECT count(*) FROM notified) >= 0;
    RETURN v_count;
END
$$;


-- Sets the choice behind a dead letter of a topic ('wait' or 'continue'). True when it changed, recorded in
-- audit_log ('ordering_wait' or 'ordering_continue', the topic) with the actor. Going to 'continue' promotes at once
-- the keys of the topic that waited behind a dead letter only, and wakes the topic's subscribers (p_notify).
CREATE OR REPLACE FUNCTION "${schema}"._engine_set_ordering(p_namespace text, p_topic text, p_behind_dead_letter text,
                                                            p_now timestamptz, p_notify boolean, p_actor text)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    v_was  text;
    v_keys text[];
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_set_ordering');
    END IF;
    -- one setter of a topic at a time (the upsert below would wait anyway, but not before reading the old value)
    PERFORM pg_advisory_xact_lock(hashtext('${schema}/ordering'), hashtext(p_namespace || '/' || p_topic));
    v_was := coalesce((SELECT o.behind_dead_letter FROM "${schema}".topic_ordering o
                       WHERE o.namespace = p_namespace AND o.topic = p_topic), 'wait');
    IF v_was = p_behind_dead_letter THEN
        RETURN false;
    END IF;
    INSERT INTO "${schema}".topic_ordering AS o (namespace, topic, behind_dead_letter, changed_at, changed_by)
    VALUES (p_namespace, p_topic, p_behind_dead_letter, coalesce(p_now, statement_timestamp()), p_actor)
    ON CONFLICT (namespace, topic) DO UPDATE
        SET behind_dead_letter = excluded.behind_dead_letter, changed_at = excluded.changed_at,
            changed_by = excluded.changed_by;
    INSERT INTO "${schema}".audit_log (at, namespace, actor, action, subject, ids, count)
    VALUES (statement_timestamp(), p_namespace, p_actor, 'ordering_' || p_behind_dead_letter, p_topic, NULL, 1);
    IF p_behind_dead_letter = 'continue' THEN
        v_keys := ARRAY(SELECT DISTINCT m.ordering_key::text FROM "${schema}".messages m
                        WHERE m.namespace = p_namespace AND m.topic = p_topic AND m.state = 'waiting');
        IF cardinality(v_keys) > 0 THEN
            PERFORM "${schema}"._ordering_advance(array_fill(p_namespace, ARRAY[cardinality(v_keys)]),
                                                  array_fill(p_topic, ARRAY[cardinality(v_keys)]), v_keys, p_now,
                                                  p_notify);
        END IF;
    END IF;
    RETURN true;
END
$$;


-- The choice of a topic: 'wait' (also when never set) or 'continue'.
CREATE OR REPLACE FUNCTION "${schema}"._engine_ordering(p_namespace text, p_topic text) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_ordering');
    END IF;
    RETURN coalesce((SELECT o.behind_dead_letter FROM "${schema}".topic_ordering o
                     WHERE o.namespace = p_namespace AND o.topic = p_topic), 'wait');
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_set_ordering(p_namespace text, p_topic text, p_behind_dead_letter text,
                                                           p_now timestamptz, p_notify boolean, p_actor text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    PERFORM "${schema}"._check_name('p_topic', p_topic);
    IF p_behind_dead_letter IS NULL OR p_behind_dead_letter NOT IN ('wait', 'continue') THEN
        PERFORM "${schema}"._invalid('p_behind_dead_letter', "${schema}"._shown(p_behind_dead_letter),
                                     'wait or continue');
    END IF;
    PERFORM "${schema}"._check_engine_now(p_now);
    PERFORM "${schema}"._check_engine_actor('p_actor', p_actor);
    RETURN "${schema}"._engine_set_ordering(p_namespace, p_topic, p_behind_dead_letter, p_now,
                                            coalesce(p_notify, false), p_actor);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_ordering(p_namespace text, p_topic text) RETURNS text
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    PERFORM "${schema}"._check_name('p_topic', p_topic);
    RETURN "${schema}"._engine_ordering(p_namespace, p_topic);
END
$$;


-- 'wait' or 'continue' (p_behind_dead_letter): true when the queue's choice changed, recorded with the session's
-- actor. 'continue' lets the keys waiting behind a dead letter go on at once.
CREATE OR REPLACE FUNCTION "${schema}".set_queue_ordering(p_namespace text, p_queue text, p_behind_dead_letter text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    PERFORM "${schema}"._check_name('p_queue', p_queue);
    IF p_behind_dead_letter IS NULL OR p_behind_dead_letter NOT IN ('wait', 'continue') THEN
        PERFORM "${schema}"._invalid('p_behind_dead_letter', "${schema}"._shown(p_behind_dead_letter),
                                     'wait or continue');
    END IF;
    RETURN "${schema}"._engine_set_ordering(p_namespace, p_queue, p_behind_dead_letter, NULL,
                                            "${schema}"._notify_wanted(NULL), "${schema}".current_actor());
END
$$;


-- The queue's choice behind a dead letter: 'wait' (the default) or 'continue'.
CREATE OR REPLACE FUNCTION "${schema}".get_queue_ordering(p_namespace text, p_queue text) RETURNS text
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    PERFORM "${schema}"._check_name('p_queue', p_queue);
    RETURN "${schema}"._engine_ordering(p_namespace, p_queue);
END
$$;


-- Tokens a bucket holds at p_now: what it held at its last refill plus the refill since (none when the clock went
-- back), at most its capacity. A topic or partition without a row has a full bucket.
CREATE OR REPLACE FUNCTION "${schema}"._bucket_tokens(p_tokens double precision, p_refilled_at timestamptz, p_starts integer,
                                                      p_period_micros bigint, p_now timestamptz)
RETURNS double precision
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_tokens IS NULL THEN p_starts::double precision
                ELSE least(p_starts::double precision,
                           p_tokens + greatest(0, extract(epoch FROM p_now - p_refilled_at) * 1000000)
                                      * p_starts / p_period_micros)
           END
$$;


-- A message's partition under a topic's limits: the header's value or the ordering key, '' without one.
CREATE OR REPLACE FUNCTION "${schema}"._limit_partition(p_headers jsonb, p_ordering_key text, p_kind text, p_name text)
RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE p_kind WHEN 'header' THEN coalesce(p_headers ->> p_name, '')
                       WHEN 'ordering_key' THEN coalesce(p_ordering_key, '')
                       ELSE '' END
$$;


-- Whether a topic's only limit is a topic-wide rate.
CREATE OR REPLACE FUNCTION "${schema}"._rate_alone(p_limits "${schema}".topic_limits) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT p_limits.rate_starts IS NOT NULL AND p_limits.max_running IS NULL
           AND p_limits.max_running_per_partition IS NULL AND p_limits.partition_rate_starts IS NULL
$$;


-- Whether a topic's only limit is a running limit for the whole topic: its claims seat their messages in
-- limit_slots, locked with SKIP LOCKED, rather than run one at a time.
CREATE OR REPLACE FUNCTION "${schema}"._slots_alone(p_limits "${schema}".topic_limits) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT p_limits.max_running IS NOT NULL AND p_limits.rate_starts IS NULL
           AND p_limits.max_running_per_partition IS NULL AND p_limits.partition_rate_starts IS NULL
$$;


-- The limited topics of a namespace, by name.
CREATE OR REPLACE FUNCTION "${schema}"._engine_topic_limits(p_namespace text)
RETURNS TABLE (topic text, max_running integer, partition_kind text, partition_name text,
               max_running_per_partition integer, rate_starts integer, rate_period_micros bigint,
               partition_rate_starts integer, partition_rate_period_micros bigint, set_at timestamptz, set_by text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_topic_limits');
    END IF;
    RETURN QUERY SELECT l.topic::text, l.max_running, l.partition_kind, l.partition_name, l.max_running_per_partition,
                        l.rate_starts, l.rate_period_micros, l.partition_rate_starts, l.partition_rate_period_micros,
                        l.set_at, l.set_by
                 FROM "${schema}".topic_limits l
                 WHERE l.namespace = p_namespace
                 ORDER BY l.topic;
END
$$;


-- Sets a topic's limits, or clears them when all four are NULL, under the topic's exclusive claim lock. True when they
-- changed, recorded in audit_log with the actor. The messages running now count against the new limits: the holders
-- (or, for a running limit alone, the slots) are rebuilt from them, each holder taking its partition from the header
-- or the ordering key. A change of the kind of
-- partition or of its header starts the partitions' buckets afresh, and a rate removed takes its buckets with it.
CREATE OR REPLACE FUNCTION "${schema}"._engine_set_topic_limits(
    p_namespace text, p_topic text, p_max_running integer, p_partition_kind text, p_partition_name text,
    p_max_running_per_partition integer, p_rate_starts integer, p_rate_period_micros bigint,
    p_partition_rate_starts integer, p_partition_rate_period_micros bigint, p_now timestamptz, p_notify boolean,
    p_actor text)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    v_old "${schema}".topic_limits;
    v_new "${schema}".topic_limits;
    v_clear boolean := p_max_running IS NULL AND p_max_running_per_partition IS NULL AND p_rate_starts IS NULL
                       AND p_partition_rate_starts IS NULL;
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_set_topic_limits');
    END IF;
    PERFORM pg_advisory_xact_lock("${schema}"._flow_lock_key(p_namespace, p_topic));
    SELECT * INTO v_old FROM "${schema}".topic_limits l WHERE l.namespace = p_namespace AND l.topic = p_topic;
    IF v_clear THEN
        IF v_old.topic IS NULL THEN
            RETURN false;
        END IF;
        DELETE FROM "${schema}".topic_limits l WHERE l.namespace = p_namespace AND l.topic = p_topic;
        DELETE FROM "${schema}".limit_holders h WHERE h.namespace = p_namespace AND h.topic = p_topic;
        DELETE FROM "${schema}".limit_slots s WHERE s.namespace = p_namespace AND s.topic = p_topic;
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
        -- the messages running now count against the new limits, whoever claimed them: as holders, or seated in
        -- slots when the running limit for the whole topic is the only limit (above it when there are more)
        DELETE FROM "${schema}".limit_holders h WHERE h.namespace = p_namespace AND h.topic = p_topic;
        DELETE FROM "${schema}".limit_slots s WHERE s.namespace = p_namespace AND s.topic = p_topic;
        SELECT * INTO v_new FROM "${schema}".topic_limits l WHERE l.namespace = p_namespace AND l.topic = p_topic;
        IF "${schema}"._slots_alone(v_new) THEN
            WITH running AS MATERIALIZED (
                SELECT m.id, m.lease_token, row_number() OVER (ORDER BY m.id)::integer AS slot
                FROM "${schema}".messages m
                WHERE m.namespace = p_namespace AND m.topic = p_topic AND m.state = 'running'
            )
            INSERT INTO "${schema}".limit_slots (namespace, topic, slot, message_id, lease_token)
            SELECT p_namespace, p_topic, g.slot, r.id, r.lease_token
            FROM generate_series(1, greatest(p_max_running, (SELECT count(*) FROM running)::integer)) AS g(slot)
            LEFT JOIN running r ON r.slot = g.slot
            ORDER BY g.slot;
        ELSE
            INSERT INTO "${schema}".limit_holders (namespace, topic, message_id, lease_token, partition)
            SELECT p_namespace, p_topic, m.id, m.lease_token,
                   "${schema}"._limit_partition(m.headers, m.ordering_key, p_partition_kind, p_partition_name)
            FROM "${schema}".messages m
            WHERE m.namespace = p_namespace AND m.topic = p_topic AND m.state = 'running'
              AND (p_max_running IS NOT NULL OR p_max_running_per_partition IS NOT NULL);
        END IF;
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


CREATE OR REPLACE FUNCTION "${schema}".engine_set_topic_limits(
    p_namespace text, p_topic text, p_max_running integer, p_partition_kind text, p_partition_name text,
    p_max_running_per_partition integer, p_rate_starts integer, p_rate_period_micros bigint,
    p_partition_rate_starts integer, p_partition_rate_period_micros bigint, p_now timestamptz, p_notify boolean,
    p_actor text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    PERFORM "${schema}"._check_name('p_topic', p_topic);
    PERFORM "${schema}"._check_engine_topic_limits(p_max_running, p_partition_kind, p_partition_name,
        p_max_running_per_partition, p_rate_starts, p_rate_period_micros, p_partition_rate_starts,
        p_partition_rate_period_micros);
    PERFORM "${schema}"._check_engine_now(p_now);
    PERFORM "${schema}"._check_engine_actor('p_actor', p_actor);
    RETURN "${schema}"._engine_set_topic_limits(p_namespace, p_topic, p_max_running, p_partition_kind,
        p_partition_name, p_max_running_per_partition, p_rate_starts, p_rate_period_micros, p_partition_rate_starts,
        p_partition_rate_period_micros, p_now, coalesce(p_notify, false), p_actor);
END
$$;


-- Limits as engine_set_topic_limits takes them (all NULL clears them), by the rules of set_queue_limits and of the
-- Java TopicLimits: running limits 1 to 100000, a rate 1 to 1000000 starts per 1 ms to 1 day given together, and a
-- partition (kind header with a header name, or ordering_key without one) exactly with a per-partition limit.
CREATE OR REPLACE FUNCTION "${schema}"._check_engine_topic_limits(
    p_max_running integer, p_partition_kind text, p_partition_name text, p_max_running_per_partition integer,
    p_rate_starts integer, p_rate_period_micros bigint, p_partition_rate_starts integer,
    p_partition_rate_period_micros bigint)
RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_max_running IS NOT NULL THEN
        PERFORM "${schema}"._check_range('p_max_running', p_max_running, 1, 100000, '1 to 100000');
    END IF;
    IF p_max_running_per_partition IS NOT NULL THEN
        PERFORM "${schema}"._check_range('p_max_running_per_partition', p_max_running_per_partition, 1, 100000,
                                         '1 to 100000');
    END IF;
    IF p_rate_starts IS NOT NULL OR p_rate_period_micros IS NOT NULL THEN
        PERFORM "${schema}"._check_range('p_rate_starts', p_rate_starts, 1, 1000000,
                                         '1 to 1000000 with p_rate_period_micros');
        PERFORM "${schema}"._check_range('p_rate_period_micros', p_rate_period_micros, 1000, 86400000000,
                                         '1000 to 86400000000 microseconds (1 ms to 1 day) with p_rate_starts');
    END IF;
    IF p_partition_rate_starts IS NOT NULL OR p_partition_rate_period_micros IS NOT NULL THEN
        PERFORM "${schema}"._check_range('p_partition_rate_starts', p_partition_rate_starts, 1, 1000000,
                                         '1 to 1000000 with p_partition_rate_period_micros');
        PERFORM "${schema}"._check_range('p_partition_rate_period_micros', p_partition_rate_period_micros, 1000,
            86400000000, '1000 to 86400000000 microseconds (1 ms to 1 day) with p_partition_rate_starts');
    END IF;
    IF p_max_running_per_partition IS NOT NULL OR p_partition_rate_starts IS NOT NULL THEN
        IF p_partition_kind IS NULL OR p_partition_kind NOT IN ('header', 'ordering_key') THEN
            PERFORM "${schema}"._invalid('p_partition_kind', "${schema}"._shown(p_partition_kind),
                                         'header or ordering_key with a per-partition limit');
        END IF;
        IF p_partition_kind = 'header' THEN
            PERFORM "${schema}"._check_name('p_partition_name', p_partition_name);
        ELSIF p_partition_name IS NOT NULL THEN
            PERFORM "${schema}"._invalid('p_partition_name', "${schema}"._shown(p_partition_name),
                                         'null with p_partition_kind ordering_key');
        END IF;
    ELSIF p_partition_kind IS NOT NULL OR p_partition_name IS NOT NULL THEN
        PERFORM "${schema}"._invalid(
            CASE WHEN p_partition_kind IS NOT NULL THEN 'p_partition_kind' ELSE 'p_partition_name' END,
            "${schema}"._shown(coalesce(p_partition_kind, p_partition_name)),
            'null without p_max_running_per_partition or p_partition_rate_starts');
    END IF;
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_topic_limits(p_namespace text)
RETURNS TABLE (topic text, max_running integer, partition_kind text, partition_name text,
               max_running_per_partition integer, rate_starts integer, rate_period_micros bigint,
               partition_rate_starts integer, partition_rate_period_micros bigint, set_at timestamptz, set_by text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    RETURN QUERY SELECT * FROM "${schema}"._engine_topic_limits(p_namespace);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".set_queue_limits(
    p_namespace text, p_queue text, p_max_running integer DEFAULT NULL, p_partition_header text DEFAULT NULL,
    p_max_running_per_partition integer DEFAULT NULL, p_rate_limit integer DEFAULT NULL,
    p_rate_period interval DEFAULT NULL, p_partition_rate_limit integer DEFAULT NULL,
    p_partition_rate_period interval DEFAULT NULL, p_partition_kind text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
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


CREATE OR REPLACE FUNCTION "${schema}".list_queue_limits(p_namespace text)
RETURNS TABLE (queue text, max_running integer, partition_header text, max_running_per_partition integer,
               rate_limit integer, rate_period interval, partition_rate_limit integer,
               partition_rate_period interval, set_at timestamptz, set_by text, partition_kind text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    RETURN QUERY SELECT l.topic, l.max_running, l.partition_name, l.max_running_per_partition, l.rate_starts,
                        l.rate_period_micros * interval '1 microsecond', l.partition_rate_starts,
                        l.partition_rate_period_micros * interval '1 microsecond', l.set_at, l.set_by,
                        l.partition_kind
                 FROM "${schema}"._engine_topic_limits(p_namespace) l;
END
$$;


-- True when the queue had limits and has none now.
CREATE OR REPLACE FUNCTION "${schema}".clear_queue_limits(p_namespace text, p_queue text) RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    PERFORM "${schema}"._check_name('p_queue', p_queue);
    RETURN "${schema}"._engine_set_topic_limits(p_namespace, p_queue, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
        NULL, "${schema}"._notify_wanted(NULL), "${schema}".current_actor());
END
$$;
