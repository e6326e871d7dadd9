-- queue schema, version 24: the promotion of ordering keys (version 22's _ordering_advance) in one statement.
--
-- Version 22 promoted the keys of an acknowledgement one at a time, four statements each, and woke the topic once
-- per key: an acknowledgement of hundreds of keyed messages held their keys' locks, and with them the keys'
-- publishers, for as long. The rules are unchanged: a key advances when it has no head, its first waiting message
-- becomes pending unless the topic waits behind dead letters and a dead letter of the key came before it. Every
-- probe is a LATERAL subquery with LIMIT 1, so each key costs index probes whatever the planner guesses of the
-- number of keys (a hash of every keyed row of the table would read it all).
--
-- A promoted message keeps its id and gets the promotion's time as its due time, so it often sorts behind the
-- positions claimers resume after (ClaimCursor): another promotion that committed first, with a later due time, was
-- claimed already. Found only by the sweep behind the positions, keys then moved once per sweep interval. Besides
-- the wake-up of its topic, each promotion now sends 'promoted:namespace/topic/priority/due-micros/id' on the same
-- channel with the first promoted message in claim order: the topic's subscribers move their position back to just
-- before it, and their next claim reads from there.

CREATE OR REPLACE FUNCTION "${schema}"._ordering_advance(p_namespaces text[], p_topics text[], p_keys text[],
                                                         p_now timestamptz, p_notify boolean)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    v_count integer;
BEGIN
    PERFORM "${schema}"._ordering_lock(p_namespaces, p_topics, p_keys);
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
        SELECT pg_notify('${schema}_wakeup', p.namespace || '/' || p.topic),
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
