-- queue schema, version 22: ordering keys (docs/flow-control.md). A message published with an ordering key runs only
-- after every earlier message (lower id) of the same namespace, topic and key has left: completed, cancelled, or
-- dead-lettered (behind a dead letter a per-topic choice, kept in topic_ordering, makes the key wait until the dead
-- letter is redriven or purged, or go on).
--
-- Only the head of a key is pending or running. Its successors are stored in the state 'waiting', which the claim
-- index (pending rows only) does not hold, so the claim never steps over them and does not change. When a head
-- leaves, the next waiting message of its key becomes pending in the same transaction (_ordering_advance).
--
-- Order between racing writers of one key comes from a transaction-level advisory lock per key (two-int form, so it
-- never meets the one-bigint locks of the pauses), taken by a keyed publish before it draws ids (ids then follow
-- the lock order, which is the commit order of the key's publishers) and by every path that may promote. Several
-- keys are locked in the order of their lock values. Each statement after the lock reads with a fresh snapshot,
-- which READ COMMITTED gives and REPEATABLE READ does not: keyed work in a stricter transaction is refused (QU006).
-- The unique index messages_ordering_head_idx makes two heads of one key impossible whatever writes the table.
--
-- Rows without a key pay nothing but the partial indexes' predicates, and the acknowledgement a test of the key
-- column it already returns.

ALTER TABLE "${schema}".messages ADD COLUMN ordering_key text COLLATE "C";
ALTER TABLE "${schema}".dead_letters ADD COLUMN ordering_key text COLLATE "C";
ALTER TABLE "${schema}".completed_messages ADD COLUMN ordering_key text COLLATE "C";

-- Version 1's state machine with the state 'waiting': a successor behind the head of its key, holding no lease.
ALTER TABLE "${schema}".messages DROP CONSTRAINT messages_state_machine;
ALTER TABLE "${schema}".messages ADD CONSTRAINT messages_state_machine CHECK (
    state IN ('pending', 'running', 'waiting')
    AND attempts >= 0
    AND max_attempts >= 1
    AND priority BETWEEN 0 AND 9
    AND (state <> 'waiting' OR ordering_key IS NOT NULL)
    AND CASE state
            WHEN 'running' THEN worker IS NOT NULL AND lease_token IS NOT NULL AND lease_until IS NOT NULL
                                AND attempts >= 1
            ELSE worker IS NULL AND lease_token IS NULL AND lease_until IS NULL
        END) NOT VALID;
ALTER TABLE "${schema}".messages VALIDATE CONSTRAINT messages_state_machine;

-- At most one head (pending or running) per key.
CREATE UNIQUE INDEX messages_ordering_head_idx ON "${schema}".messages (namespace, topic, ordering_key)
    WHERE ordering_key IS NOT NULL AND state <> 'waiting';
-- The successors of each key in publish order: the next to promote is the first entry.
CREATE INDEX messages_ordering_waiting_idx ON "${schema}".messages (namespace, topic, ordering_key, id)
    WHERE state = 'waiting';
-- The dead letters of each key, for the choice WAIT.
CREATE INDEX dead_letters_ordering_idx ON "${schema}".dead_letters (namespace, topic, ordering_key, id)
    WHERE ordering_key IS NOT NULL;

-- The choice behind a dead letter, per topic: a row only for topics that set one (none: 'wait').
CREATE TABLE "${schema}".topic_ordering (
    namespace          text COLLATE "C" NOT NULL,
    topic              text COLLATE "C" NOT NULL,
    behind_dead_letter text             NOT NULL,
    changed_at         timestamptz      NOT NULL,
    changed_by         text,
    CONSTRAINT topic_ordering_pkey PRIMARY KEY (namespace, topic),
    CONSTRAINT topic_ordering_choice CHECK (behind_dead_letter IN ('wait', 'continue'))
);

-- ------------------------------------------------------------------ locks, the choice, the promotion

-- Locks the keys given (arrays of equal length, NULL keys skipped) for the rest of the transaction, in the order of
-- their lock values. A collision of two keys' values only makes them wait for each other.
CREATE FUNCTION "${schema}"._ordering_lock(p_namespaces text[], p_topics text[], p_keys text[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION USING ERRCODE = 'QU006',
            MESSAGE = format('ordering keys need READ COMMITTED transactions, this one is %s',
                             upper(current_setting('transaction_isolation'))),
            HINT = 'publish and settle messages with an ordering key in a READ COMMITTED transaction (the default)';
    END IF;
    PERFORM pg_advisory_xact_lock(k.space, k.key)
    FROM (SELECT DISTINCT hashtext('${schema}/' || u.namespace || '/' || u.topic) AS space, hashtext(u.key) AS key
          FROM unnest(p_namespaces, p_topics, p_keys) AS u(namespace, topic, key)
          WHERE u.key IS NOT NULL
          ORDER BY 1, 2) k;
END
$$;

-- Whether messages of the topic wait behind a dead letter of their key (the default) rather than go on.
CREATE FUNCTION "${schema}"._ordering_waits(p_namespace text, p_topic text) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN NOT EXISTS (SELECT 1 FROM "${schema}".topic_ordering o
                       WHERE o.namespace = p_namespace AND o.topic = p_topic AND o.behind_dead_letter = 'continue');
END
$$;

-- Whether a message published now to the key may be its head: the key has no live message, and no dead letter when
-- the topic waits behind them. A function, so that each keyed message of a publish probes the partial indexes rather
-- than the planner hashing every keyed row of the table. Reads the caller's snapshot (STABLE).
CREATE FUNCTION "${schema}"._ordering_free(p_namespace text, p_topic text, p_key text) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN NOT EXISTS (SELECT 1 FROM "${schema}".messages m
                       WHERE m.namespace = p_namespace AND m.topic = p_topic AND m.ordering_key = p_key
                         AND m.state <> 'waiting')
       AND NOT EXISTS (SELECT 1 FROM "${schema}".messages m
                       WHERE m.namespace = p_namespace AND m.topic = p_topic AND m.ordering_key = p_key
                         AND m.state = 'waiting')
       AND NOT ("${schema}"._ordering_waits(p_namespace, p_topic)
                AND EXISTS (SELECT 1 FROM "${schema}".dead_letters d
                            WHERE d.namespace = p_namespace AND d.topic = p_topic AND d.ordering_key = p_key));
END
$$;

-- For each key given: when it has no head (no pending or running message), its first waiting message becomes
-- pending, unless the topic waits behind dead letters and one of the key's dead letters came before it. A promoted
-- message is due at once if its due time passed (it joins the claim order at the tail of its priority, where the
-- claimers' positions still find it), and the topic's subscribers are woken (p_notify). Returns how many were
-- promoted. Takes the keys' locks first: every statement after reads what the key's earlier writers committed.
CREATE FUNCTION "${schema}"._ordering_advance(p_namespaces text[], p_topics text[], p_keys text[], p_now timestamptz,
                                              p_notify boolean)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    v_key   record;
    v_next  bigint;
    v_count integer := 0;
BEGIN
    PERFORM "${schema}"._ordering_lock(p_namespaces, p_topics, p_keys);
    FOR v_key IN
        SELECT DISTINCT u.namespace, u.topic, u.key
        FROM unnest(p_namespaces, p_topics, p_keys) AS u(namespace, topic, key)
        WHERE u.key IS NOT NULL
        ORDER BY 1, 2, 3
    LOOP
        CONTINUE WHEN EXISTS (SELECT 1 FROM "${schema}".messages m
                              WHERE m.namespace = v_key.namespace AND m.topic = v_key.topic
                                AND m.ordering_key = v_key.key AND m.state <> 'waiting');
        SELECT m.id INTO v_next
        FROM "${schema}".messages m
        WHERE m.namespace = v_key.namespace AND m.topic = v_key.topic AND m.ordering_key = v_key.key
          AND m.state = 'waiting'
        ORDER BY m.id
        LIMIT 1;
        CONTINUE WHEN v_next IS NULL;
        CONTINUE WHEN "${schema}"._ordering_waits(v_key.namespace, v_key.topic)
                      AND EXISTS (SELECT 1 FROM "${schema}".dead_letters d
                                  WHERE d.namespace = v_key.namespace AND d.topic = v_key.topic
                                    AND d.ordering_key = v_key.key AND d.id < v_next);
        UPDATE "${schema}".messages m
        SET state = 'pending', run_at = greatest(m.run_at, coalesce(p_now, statement_timestamp()))
        WHERE m.id = v_next;
        v_count := v_count + 1;
        IF p_notify THEN
            PERFORM pg_notify('${schema}_wakeup', v_key.namespace || '/' || v_key.topic);
        END IF;
    END LOOP;
    RETURN v_count;
END
$$;

-- Sets the choice behind a dead letter of a topic ('wait' or 'continue'). True when it changed, recorded in
-- audit_log ('ordering_wait' or 'ordering_continue', the topic) with the actor. Going to 'continue' promotes at once
-- the keys of the topic that waited behind a dead letter only, and wakes the topic's subscribers (p_notify).
CREATE FUNCTION "${schema}"._engine_set_ordering(p_namespace text, p_topic text, p_behind_dead_letter text,
                                                 p_now timestamptz, p_notify boolean, p_actor text)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    v_was  text;
    v_keys text[];
BEGIN
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
CREATE FUNCTION "${schema}"._engine_ordering(p_namespace text, p_topic text) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN coalesce((SELECT o.behind_dead_letter FROM "${schema}".topic_ordering o
                     WHERE o.namespace = p_namespace AND o.topic = p_topic), 'wait');
END
$$;

-- ------------------------------------------------------------------ publishing

-- Version 10's publish with an ordering key per message (p_ordering_keys, NULL or shorter: none). The keys are
-- locked before any id is drawn. A keyed message is inserted pending when it is the first of its key in the batch
-- and its key has no live message (and, when the topic waits behind dead letters, no dead letter), otherwise
-- waiting. When the first of a key was a duplicate (not inserted), the key is advanced afterwards, so the next of
-- the batch becomes its head.
CREATE FUNCTION "${schema}"._engine_publish(
    p_namespaces text[], p_topics text[], p_payloads text[], p_headers text[], p_priorities integer[],
    p_max_attempts integer[], p_unique_keys text[], p_run_at_us bigint[], p_delay_us bigint[],
    p_now timestamptz, p_notify boolean, p_actor text, p_ordering_keys text[])
RETURNS TABLE (ord integer, id bigint, duplicate boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_open      integer[];
    v_ords      integer[];
    v_ids       bigint[];
    v_dups      boolean[];
    v_round     integer := 0;
    v_keyed     boolean;
    v_keyed_dup boolean := false;
BEGIN
    IF coalesce(cardinality(p_namespaces), 0) = 0 THEN
        RETURN;
    END IF;
    v_keyed := EXISTS (SELECT 1 FROM unnest(p_ordering_keys) AS k(key) WHERE k.key IS NOT NULL);
    IF v_keyed THEN
        PERFORM "${schema}"._ordering_lock(p_namespaces, p_topics, p_ordering_keys);
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
                       WHEN x.head_of_batch AND "${schema}"._ordering_free(x.namespace, x.topic, x.ordering_key)
                           THEN 'pending'
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
END
$$;

-- Version 10's signature, for callers without ordering keys.
CREATE OR REPLACE FUNCTION "${schema}"._engine_publish(
    p_namespaces text[], p_topics text[], p_payloads text[], p_headers text[], p_priorities integer[],
    p_max_attempts integer[], p_unique_keys text[], p_run_at_us bigint[], p_delay_us bigint[],
    p_now timestamptz, p_notify boolean, p_actor text)
RETURNS TABLE (ord integer, id bigint, duplicate boolean)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY SELECT * FROM "${schema}"._engine_publish(p_namespaces, p_topics, p_payloads, p_headers, p_priorities,
        p_max_attempts, p_unique_keys, p_run_at_us, p_delay_us, p_now, p_notify, p_actor, NULL::text[]);
END
$$;

-- ------------------------------------------------------------------ the claim returns the key

-- Version 20's claims (12 and 11 arguments) and gate, returning the ordering key as their last column. The pick is
-- unchanged: waiting messages are not in the claim index.
DROP FUNCTION "${schema}".engine_claim(text, text[], text, integer, bigint, bigint, timestamptz, boolean, integer[],
                                       bigint[], bigint[], boolean[]);
DROP FUNCTION "${schema}"._engine_claim(text, text[], text, integer, bigint, bigint, timestamptz, boolean, integer[],
                                        bigint[], bigint[]);
DROP FUNCTION "${schema}"._engine_claim(text, text[], text, integer, bigint, bigint, timestamptz, boolean, integer[],
                                        bigint[], bigint[], boolean[]);

CREATE FUNCTION "${schema}"._engine_claim(
    p_namespace text, p_topics text[], p_worker text, p_limit integer, p_lease_token bigint, p_lease_micros bigint,
    p_now timestamptz, p_async boolean, p_after_priorities integer[], p_after_run_at_micros bigint[],
    p_after_ids bigint[], p_behind boolean[])
RETURNS TABLE (id bigint, namespace text, topic text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, lease_token bigint, worker text, lease_until timestamptz,
               published_at timestamptz, run_at timestamptz, unique_key text, published_by text, ordering_key text)
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
              -- the end of the range: the position itself when looking behind it, before its priority otherwise,
              -- none in the second range or without a position
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
           c.published_by, c.ordering_key::text
    FROM claimed c JOIN picked p ON p.id = c.id
    WHERE NOT p_async OR (SELECT set_config('synchronous_commit', 'off', true)) = 'off'
    ORDER BY p.ord, p.part, c.priority, c.run_at, c.id;
END
$$;

CREATE FUNCTION "${schema}"._engine_claim(
    p_namespace text, p_topics text[], p_worker text, p_limit integer, p_lease_token bigint, p_lease_micros bigint,
    p_now timestamptz, p_async boolean, p_after_priorities integer[], p_after_run_at_micros bigint[],
    p_after_ids bigint[])
RETURNS TABLE (id bigint, namespace text, topic text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, lease_token bigint, worker text, lease_until timestamptz,
               published_at timestamptz, run_at timestamptz, unique_key text, published_by text, ordering_key text)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY SELECT * FROM "${schema}"._engine_claim(p_namespace, p_topics, p_worker, p_limit, p_lease_token,
        p_lease_micros, p_now, p_async, p_after_priorities, p_after_run_at_micros, p_after_ids, NULL::boolean[]);
END
$$;

CREATE FUNCTION "${schema}".engine_claim(
    p_namespace text, p_topics text[], p_worker text, p_limit integer, p_lease_token bigint, p_lease_micros bigint,
    p_now timestamptz, p_async boolean, p_after_priorities integer[], p_after_run_at_micros bigint[],
    p_after_ids bigint[], p_behind boolean[])
RETURNS TABLE (id bigint, namespace text, topic text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, lease_token bigint, worker text, lease_until timestamptz,
               published_at timestamptz, run_at timestamptz, unique_key text, published_by text, ordering_key text)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_claim(p_namespace, p_topics, p_worker, p_limit, p_lease_token,
        p_lease_micros, p_now, p_async, p_after_priorities, p_after_run_at_micros, p_after_ids, p_behind);
END
$$;

-- ------------------------------------------------------------------ the ways out of the head

-- Version 18's completion: the archive keeps the key, and the keys of the completed heads advance.
CREATE OR REPLACE FUNCTION "${schema}"._engine_complete(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_archive boolean, p_now timestamptz, p_async boolean)
RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_ids    bigint[];
    v_topics text[];
    v_keys   text[];
BEGIN
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

-- Version 18's dead-lettering: the dead letter keeps the key, and the key advances (unless the topic waits).
CREATE OR REPLACE FUNCTION "${schema}"._engine_bury(
    p_namespace text, p_ids bigint[], p_tokens bigint[], p_error text, p_now timestamptz, p_failed_by text)
RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_ids    bigint[];
    v_topics text[];
    v_keys   text[];
BEGIN
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

-- Version 18's rescue: a lease that expired on its last attempt makes a dead letter that keeps its key, and the key
-- advances (unless the topic waits). A requeued head stays the head.
CREATE OR REPLACE FUNCTION "${schema}"._engine_rescue(p_namespace text, p_limit integer, p_now timestamptz, p_notify boolean,
                                            p_expired_since timestamptz)
RETURNS TABLE (requeued bigint, dead_lettered bigint, looked_up_to timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_requeued   bigint;
    v_dead       bigint;
    v_namespaces text[];
    v_topics     text[];
    v_keys       text[];
BEGIN
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
                                              attempt_started_at, ordering_key)
        SELECT b.id, b.namespace, b.topic, b.payload, b.headers, b.priority, b.attempts, b.max_attempts, b.unique_key,
               'lease expired on its last attempt', b.published_at, coalesce(p_now, statement_timestamp()),
               b.published_by, b.worker, b.attempt_started_at, b.ordering_key
        FROM buried b
    ),
    notified AS (
        SELECT pg_notify('${schema}_wakeup', t.namespace || '/' || t.topic)
        FROM (SELECT DISTINCT r.namespace, r.topic FROM back r) t
        WHERE p_notify
    )
    SELECT (SELECT count(*) FROM back) + 0 * (SELECT count(*) FROM recorded),
           (SELECT count(*) FROM buried) + 0 * (SELECT count(*) FROM notified),
           ARRAY(SELECT b.namespace::text FROM buried b WHERE b.ordering_key IS NOT NULL ORDER BY b.id),
           ARRAY(SELECT b.topic::text FROM buried b WHERE b.ordering_key IS NOT NULL ORDER BY b.id),
           ARRAY(SELECT b.ordering_key::text FROM buried b WHERE b.ordering_key IS NOT NULL ORDER BY b.id)
    INTO v_requeued, v_dead, v_namespaces, v_topics, v_keys;
    IF cardinality(v_keys) > 0 THEN
        PERFORM "${schema}"._ordering_advance(v_namespaces, v_topics, v_keys, p_now, p_notify);
    END IF;
    RETURN QUERY SELECT v_requeued, v_dead, coalesce(p_now, statement_timestamp());
END
$$;

-- Version 19's cancel, also of a waiting message (reported as 'pending': it had not run). A cancelled head's key
-- advances.
CREATE OR REPLACE FUNCTION "${schema}"._engine_cancel(p_namespace text, p_id bigint, p_now timestamptz, p_actor text)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    v_state text;
    v_topic text;
    v_key   text;
BEGIN
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

-- Version 10's redrive: a keyed dead letter comes back waiting with its key, and its key advances: it is the head
-- again when nothing of its key is pending or running (it came before the successors still waiting).
CREATE OR REPLACE FUNCTION "${schema}"._engine_redrive(p_namespace text, p_topic text, p_ids bigint[], p_after_id bigint,
                                                       p_limit integer, p_now timestamptz, p_notify boolean, p_actor text)
RETURNS TABLE (redriven bigint[], examined integer, last_id bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_redriven bigint[];
    v_examined integer;
    v_last     bigint;
    v_topics   text[];
    v_keys     text[];
BEGIN
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
                                               unique_key, run_at, published_at, last_error, published_by, redriven_by,
                                               ordering_key, state)
        SELECT c.id, c.namespace, c.topic, c.payload, c.headers, c.priority, 0, c.max_attempts, c.unique_key,
               coalesce(p_now, statement_timestamp()), c.published_at, c.last_error, c.published_by, p_actor,
               c.ordering_key, CASE WHEN c.ordering_key IS NULL THEN 'pending' ELSE 'waiting' END
        FROM candidates c
        ORDER BY c.id
        ON CONFLICT (namespace, topic, unique_key) WHERE unique_key IS NOT NULL DO NOTHING
        RETURNING m.id, m.namespace, m.topic, m.ordering_key
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
        FROM (SELECT DISTINCT x.namespace, x.topic FROM moved x WHERE x.ordering_key IS NULL) t
        WHERE p_notify
    )
    SELECT ARRAY(SELECT r.id FROM removed r ORDER BY r.id), (SELECT count(*) FROM candidates)::integer,
           coalesce((SELECT max(c.id) FROM candidates c), coalesce(p_after_id, 0))
           + 0 * (SELECT count(*) FROM notified),
           ARRAY(SELECT x.topic::text FROM moved x WHERE x.ordering_key IS NOT NULL ORDER BY x.id),
           ARRAY(SELECT x.ordering_key::text FROM moved x WHERE x.ordering_key IS NOT NULL ORDER BY x.id)
    INTO v_redriven, v_examined, v_last, v_topics, v_keys;
    IF cardinality(v_keys) > 0 THEN
        PERFORM "${schema}"._ordering_advance(array_fill(p_namespace, ARRAY[cardinality(v_keys)]), v_topics, v_keys,
                                              p_now, p_notify);
    END IF;
    RETURN QUERY SELECT v_redriven, v_examined, v_last;
END
$$;

-- Version 10's purge: a purged dead letter's key advances (what waited behind it goes on).
CREATE OR REPLACE FUNCTION "${schema}"._engine_purge(p_namespace text, p_topic text, p_ids bigint[], p_limit integer)
RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_ids    bigint[];
    v_topics text[];
    v_keys   text[];
BEGIN
    WITH gone AS (
        DELETE FROM "${schema}".dead_letters x
        WHERE x.namespace = p_namespace
          AND x.id = ANY (ARRAY(
              SELECT d.id FROM "${schema}".dead_letters d
              WHERE d.namespace = p_namespace
                AND (p_ids IS NULL OR d.id = ANY (p_ids))
                AND (p_topic IS NULL OR d.topic = p_topic)
              ORDER BY d.id
              LIMIT p_limit))
        RETURNING x.id, x.topic, x.ordering_key
    )
    SELECT array_agg(g.id ORDER BY g.id), array_agg(g.topic::text) FILTER (WHERE g.ordering_key IS NOT NULL),
           array_agg(g.ordering_key::text) FILTER (WHERE g.ordering_key IS NOT NULL)
    INTO v_ids, v_topics, v_keys
    FROM gone g;
    IF v_keys IS NOT NULL THEN
        PERFORM "${schema}"._ordering_advance(array_fill(p_namespace, ARRAY[cardinality(v_keys)]), v_topics, v_keys,
                                              NULL, true);
    END IF;
    RETURN QUERY SELECT u.id FROM unnest(v_ids) AS u(id);
END
$$;

-- ------------------------------------------------------------------ reading

-- Version 10's stats: a waiting message counts as pending (it has not run), but not for the oldest due time (it is
-- not claimable, its wait is its predecessor's).
CREATE OR REPLACE FUNCTION "${schema}"._engine_stats(p_namespace text, p_now timestamptz)
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
                      count(*) FILTER (WHERE x.state IN ('pending', 'waiting')) AS pending,
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

-- Version 10's lookup, with the ordering key last (state 'waiting' for a successor behind its key's head).
DROP FUNCTION "${schema}".engine_find(text, bigint);
DROP FUNCTION "${schema}"._engine_find(text, bigint);

CREATE FUNCTION "${schema}"._engine_find(p_namespace text, p_id bigint)
RETURNS TABLE (id bigint, namespace text, topic text, state text, payload json, headers jsonb, priority integer,
               attempts integer, max_attempts integer, unique_key text, published_at timestamptz, run_at timestamptz,
               lease_until timestamptz, worker text, last_error text, failed_at timestamptz, published_by text,
               failed_by text, ordering_key text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT m.id, m.namespace::text, m.topic::text, m.state, m.payload, m.headers, m.priority::integer, m.attempts,
           m.max_attempts, m.unique_key::text, m.published_at, m.run_at, m.lease_until, m.worker, m.last_error,
           NULL::timestamptz, m.published_by, NULL::text, m.ordering_key::text
    FROM "${schema}".messages m
    WHERE m.namespace = p_namespace AND m.id = p_id
    UNION ALL
    SELECT d.id, d.namespace::text, d.topic::text, 'dead', d.payload, d.headers, d.priority::integer, d.attempts,
           d.max_attempts, d.unique_key::text, d.published_at, NULL, NULL, NULL, d.last_error, d.failed_at,
           d.published_by, d.failed_by, d.ordering_key::text
    FROM "${schema}".dead_letters d
    WHERE d.namespace = p_namespace AND d.id = p_id;
END
$$;

CREATE FUNCTION "${schema}".engine_find(p_namespace text, p_id bigint)
RETURNS TABLE (id bigint, namespace text, topic text, state text, payload json, headers jsonb, priority integer,
               attempts integer, max_attempts integer, unique_key text, published_at timestamptz, run_at timestamptz,
               lease_until timestamptz, worker text, last_error text, failed_at timestamptz, published_by text,
               failed_by text, ordering_key text)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_find(p_namespace, p_id);
END
$$;

-- ------------------------------------------------------------------ gates (version 13's pattern)

CREATE FUNCTION "${schema}".engine_publish(
    p_namespaces text[], p_topics text[], p_payloads text[], p_headers text[], p_priorities integer[],
    p_max_attempts integer[], p_unique_keys text[], p_run_at_us bigint[], p_delay_us bigint[],
    p_now timestamptz, p_notify boolean, p_actor text, p_ordering_keys text[])
RETURNS TABLE (ord integer, id bigint, duplicate boolean)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_engine_namespaces(p_namespaces);
    RETURN QUERY SELECT * FROM "${schema}"._engine_publish(p_namespaces, p_topics, p_payloads, p_headers, p_priorities,
        p_max_attempts, p_unique_keys, p_run_at_us, p_delay_us, p_now, p_notify, p_actor, p_ordering_keys);
END
$$;

CREATE FUNCTION "${schema}".engine_set_ordering(p_namespace text, p_topic text, p_behind_dead_letter text,
                                                p_now timestamptz, p_notify boolean, p_actor text)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_engine_namespace(p_namespace);
    RETURN "${schema}"._engine_set_ordering(p_namespace, p_topic, p_behind_dead_letter, p_now, p_notify, p_actor);
END
$$;

CREATE FUNCTION "${schema}".engine_ordering(p_namespace text, p_topic text) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM "${schema}"._check_engine_namespace(p_namespace);
    RETURN "${schema}"._engine_ordering(p_namespace, p_topic);
END
$$;

-- ------------------------------------------------------------------ the SQL functions

-- Version 9's push with p_ordering_key (1 to 255 characters without control characters, NULL for none).
DROP FUNCTION "${schema}".push(text, text, json, interval, timestamptz, integer, integer, text, jsonb, boolean);

CREATE FUNCTION "${schema}".push(
    p_namespace text, p_queue text, p_payload json,
    p_delay interval DEFAULT NULL, p_run_at timestamptz DEFAULT NULL, p_priority integer DEFAULT 0,
    p_max_attempts integer DEFAULT NULL, p_unique_key text DEFAULT NULL, p_headers jsonb DEFAULT '{}',
    p_notify boolean DEFAULT NULL, p_ordering_key text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql AS $$
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

-- Version 15's push_batch with p_ordering_keys: one key (or NULL) per payload.
DROP FUNCTION "${schema}".push_batch(text, text, json[], interval, timestamptz, integer, integer, text[], jsonb, boolean);

CREATE FUNCTION "${schema}".push_batch(
    p_namespace text, p_queue text, p_payloads json[],
    p_delay interval DEFAULT NULL, p_run_at timestamptz DEFAULT NULL, p_priority integer DEFAULT 0,
    p_max_attempts integer DEFAULT NULL, p_unique_keys text[] DEFAULT NULL, p_headers jsonb DEFAULT '{}',
    p_notify boolean DEFAULT NULL, p_ordering_keys text[] DEFAULT NULL)
RETURNS TABLE (ordinal integer, id bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_policy   "${schema}".queue_policies;
    v_run_at   timestamptz;
    v_count    integer := coalesce(cardinality(p_payloads), 0);
    v_i        integer;
    v_row      record;
    v_stored   bigint := 0;
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
    IF p_ordering_keys IS NOT NULL AND cardinality(p_ordering_keys) <> v_count THEN
        PERFORM "${schema}"._invalid('p_ordering_keys', cardinality(p_ordering_keys) || ' keys',
            'one key (or NULL) per payload: ' || v_count);
    END IF;
    v_policy := "${schema}".get_queue_policy(p_namespace, p_queue);
    FOR v_i IN 1 .. v_count LOOP
        PERFORM "${schema}"._check_payload('p_payloads[' || v_i || ']', p_payloads[v_i], v_policy.max_payload_bytes);
        IF p_unique_keys[v_i] IS NOT NULL THEN
            PERFORM "${schema}"._check_text('p_unique_keys[' || v_i || ']', p_unique_keys[v_i], 255);
        END IF;
        IF p_ordering_keys[v_i] IS NOT NULL THEN
            PERFORM "${schema}"._check_text('p_ordering_keys[' || v_i || ']', p_ordering_keys[v_i], 255);
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

-- Version 18's inspect with the ordering key last, and the state 'waiting' for a message behind the head of its key.
DROP FUNCTION "${schema}".inspect(text, bigint);

CREATE FUNCTION "${schema}".inspect(p_namespace text, p_id bigint)
RETURNS TABLE (id bigint, queue text, state text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, unique_key text, published_at timestamptz, run_at timestamptz,
               lease_until timestamptz, worker_id text, last_error text, failed_at timestamptz, published_by text,
               failed_by text, attempt_history jsonb, attempts_not_kept integer, ordering_key text)
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
           h.history, h.not_kept, f.ordering_key
    FROM "${schema}"._engine_find(p_namespace, p_id) f
    CROSS JOIN "${schema}"._attempt_history(p_namespace, p_id) h;
END
$$;

-- Version 18's explain, with the verdict of a message waiting behind its ordering key: the message it waits for.
CREATE OR REPLACE FUNCTION "${schema}".explain(p_namespace text, p_id bigint)
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
    v_ahead bigint;
    v_ahead_state text;
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
        ELSIF m.state = 'waiting' THEN
            SELECT x.id, x.state INTO v_ahead, v_ahead_state FROM "${schema}".messages x
            WHERE x.namespace = p_namespace AND x.topic = m.topic AND x.ordering_key = m.ordering_key
              AND x.state <> 'waiting';
            IF v_ahead IS NULL THEN
                SELECT x.id, 'a dead letter' INTO v_ahead, v_ahead_state FROM "${schema}".dead_letters x
                WHERE x.namespace = p_namespace AND x.topic = m.topic AND x.ordering_key = m.ordering_key
                  AND x.id < m.id
                ORDER BY x.id
                LIMIT 1;
            END IF;
            verdict := format('waiting behind %s of its ordering key %s: it runs once the earlier messages of its key '
                              'have left', CASE WHEN v_ahead IS NULL THEN 'the earlier messages'
                                                ELSE format('message %s (%s)', v_ahead, v_ahead_state) END,
                              m.ordering_key);
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

-- 'wait' or 'continue' (p_behind_dead_letter): true when the queue's choice changed, recorded with the session's
-- actor. 'continue' lets the keys waiting behind a dead letter go on at once.
CREATE FUNCTION "${schema}".set_queue_ordering(p_namespace text, p_queue text, p_behind_dead_letter text)
RETURNS boolean
LANGUAGE plpgsql AS $$
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
CREATE FUNCTION "${schema}".get_queue_ordering(p_namespace text, p_queue text) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    PERFORM "${schema}"._check_name('p_queue', p_queue);
    RETURN "${schema}"._engine_ordering(p_namespace, p_queue);
END
$$;

SELECT "${schema}"._secure_schema();

-- The re-created hot functions plan their statements once per session again (version 21).
DO $$
DECLARE
    v_function record;
BEGIN
    FOR v_function IN
        SELECT p.oid::regprocedure AS signature
        FROM pg_catalog.pg_proc p
        WHERE p.pronamespace = (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = '${schema}')
          AND p.proname IN ('_engine_publish', '_engine_claim', '_engine_complete', '_engine_bury')
        ORDER BY p.oid
    LOOP
        EXECUTE format('ALTER FUNCTION %s SET plan_cache_mode = force_generic_plan', v_function.signature);
    END LOOP;
END
$$;
