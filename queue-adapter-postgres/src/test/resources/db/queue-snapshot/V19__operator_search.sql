-- queue schema, version 19: what an operator finds without a message id (docs/operations.md, docs/sql.md).
--
-- find_messages looks a message up by its unique key or by a header, and list_namespaces names the namespaces the
-- database holds. Both read indexes and stop at a bound, whatever the size of the tables: an operator's page must
-- not scan a million pending messages. Nothing is added to the hot table's indexes (each one costs every publish):
-- the dead letters and the archive get a partial index over the rows that have a unique key, so messages
-- published without a key pay nothing for it. Last, a cancel of a running message notifies the process running it.

-- ------------------------------------------------------------------ indexes

-- A unique key search probes these per topic, as it probes messages_unique_key_idx of the hot table.
CREATE INDEX dead_letters_unique_key_idx ON "${schema}".dead_letters (namespace, topic, unique_key, id)
    WHERE unique_key IS NOT NULL;
CREATE INDEX completed_messages_unique_key_idx ON "${schema}".completed_messages (namespace, topic, unique_key, id)
    WHERE unique_key IS NOT NULL;

-- ------------------------------------------------------------------ search

-- Messages of the namespace by unique key, or by header, newest first within each state, at most p_limit.
--   By unique key (p_unique_key): the live message holding it, the dead letters and the archived messages that had
--   it, in every topic of the namespace (at most 1000, by name) or in p_queue. One index probe per topic and table.
--   By header (p_header_name, optionally p_header_value, any value when NULL): headers have no index, so only a
--   window of p_queue's messages is searched, each part an index range of at most p_window rows: the next
--   p_window pending messages in claim order, up to p_window running ones, the newest p_window dead letters and
--   the newest p_window archived messages. A message outside that window is not found.
-- state is pending, running, dead or completed (archived), finished_at the failure or completion time.
CREATE FUNCTION "${schema}".find_messages(
    p_namespace text, p_queue text DEFAULT NULL, p_unique_key text DEFAULT NULL, p_header_name text DEFAULT NULL,
    p_header_value text DEFAULT NULL, p_window integer DEFAULT 1000, p_limit integer DEFAULT 50)
RETURNS TABLE (id bigint, queue text, state text, unique_key text, headers jsonb, priority integer, attempts integer,
               max_attempts integer, published_at timestamptz, run_at timestamptz, finished_at timestamptz,
               last_error text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
    v_left integer;
    v_n    integer;
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    IF p_queue IS NOT NULL THEN
        PERFORM "${schema}"._check_name('p_queue', p_queue);
    END IF;
    PERFORM "${schema}"._check_range('p_limit', p_limit, 1, 1000, '1 to 1000');
    PERFORM "${schema}"._check_range('p_window', p_window, 1, 10000, '1 to 10000');
    IF (p_unique_key IS NULL) = (p_header_name IS NULL) THEN
        PERFORM "${schema}"._invalid(CASE WHEN p_unique_key IS NULL THEN 'p_unique_key' ELSE 'p_header_name' END,
            CASE WHEN p_unique_key IS NULL THEN 'null' ELSE "${schema}"._shown(p_header_name) END,
            'exactly one of p_unique_key and p_header_name');
    END IF;
    v_left := p_limit;

    IF p_unique_key IS NOT NULL THEN
        PERFORM "${schema}"._check_text('p_unique_key', p_unique_key, 255);
        IF p_header_value IS NOT NULL THEN
            PERFORM "${schema}"._invalid('p_header_value', "${schema}"._shown(p_header_value),
                'null when searching by p_unique_key');
        END IF;
        -- the topics are the index's second column: one probe per topic of the registry, which is small
        RETURN QUERY
        SELECT m.id, m.topic::text, m.state, m.unique_key::text, m.headers, m.priority::integer, m.attempts,
               m.max_attempts, m.published_at, m.run_at, NULL::timestamptz, m.last_error
        FROM (SELECT t.topic FROM "${schema}".topics t
              WHERE t.namespace = p_namespace AND (p_queue IS NULL OR t.topic = p_queue)
              ORDER BY t.topic LIMIT 1000) t
        CROSS JOIN LATERAL (SELECT * FROM "${schema}".messages x
                            WHERE x.namespace = p_namespace AND x.topic = t.topic AND x.unique_key = p_unique_key) m
        ORDER BY m.id DESC
        LIMIT v_left;
        GET DIAGNOSTICS v_n = ROW_COUNT;
        v_left := v_left - v_n;
        IF v_left > 0 THEN
            RETURN QUERY
            SELECT d.id, d.topic::text, 'dead'::text, d.unique_key::text, d.headers, d.priority::integer, d.attempts,
                   d.max_attempts, d.published_at, NULL::timestamptz, d.failed_at, d.last_error
            FROM (SELECT t.topic FROM "${schema}".topics t
                  WHERE t.namespace = p_namespace AND (p_queue IS NULL OR t.topic = p_queue)
                  ORDER BY t.topic LIMIT 1000) t
            CROSS JOIN LATERAL (SELECT * FROM "${schema}".dead_letters x
                                WHERE x.namespace = p_namespace AND x.topic = t.topic AND x.unique_key = p_unique_key
                                ORDER BY x.id DESC LIMIT v_left) d
            ORDER BY d.id DESC
            LIMIT v_left;
            GET DIAGNOSTICS v_n = ROW_COUNT;
            v_left := v_left - v_n;
        END IF;
        IF v_left > 0 THEN
            RETURN QUERY
            SELECT c.id, c.topic::text, 'completed'::text, c.unique_key::text, c.headers, c.priority::integer,
                   c.attempts, c.max_attempts, c.published_at, NULL::timestamptz, c.completed_at, NULL::text
            FROM (SELECT t.topic FROM "${schema}".topics t
                  WHERE t.namespace = p_namespace AND (p_queue IS NULL OR t.topic = p_queue)
                  ORDER BY t.topic LIMIT 1000) t
            CROSS JOIN LATERAL (SELECT * FROM "${schema}".completed_messages x
                                WHERE x.namespace = p_namespace AND x.topic = t.topic AND x.unique_key = p_unique_key
                                ORDER BY x.id DESC LIMIT v_left) c
            ORDER BY c.id DESC
            LIMIT v_left;
        END IF;
        RETURN;
    END IF;

    IF p_queue IS NULL THEN
        PERFORM "${schema}"._invalid('p_queue', 'null',
            'a queue name: a header search reads a bounded window of one queue''s messages');
    END IF;
    PERFORM "${schema}"._check_name('p_header_name', p_header_name);
    IF p_header_value IS NOT NULL THEN
        PERFORM "${schema}"._check_text('p_header_value', p_header_value, 1024);
    END IF;
    -- each window is an index range ended by its LIMIT: the filter on headers runs over those rows only
    RETURN QUERY
    SELECT m.id, m.topic::text, m.state, m.unique_key::text, m.headers, m.priority::integer, m.attempts,
           m.max_attempts, m.published_at, m.run_at, NULL::timestamptz, m.last_error
    FROM (SELECT * FROM "${schema}".messages x
          WHERE x.namespace = p_namespace AND x.topic = p_queue AND x.state = 'pending'
          ORDER BY x.priority, x.run_at, x.id
          LIMIT p_window) m
    WHERE m.headers ? p_header_name AND (p_header_value IS NULL OR m.headers ->> p_header_name = p_header_value)
    ORDER BY m.id DESC
    LIMIT v_left;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    v_left := v_left - v_n;
    IF v_left > 0 THEN
        -- the lease index holds the running messages of every namespace: as many as workers run at once
        RETURN QUERY
        SELECT m.id, m.topic::text, m.state, m.unique_key::text, m.headers, m.priority::integer, m.attempts,
               m.max_attempts, m.published_at, m.run_at, NULL::timestamptz, m.last_error
        FROM (SELECT * FROM "${schema}".messages x
              WHERE x.state = 'running' AND x.namespace = p_namespace AND x.topic = p_queue
              ORDER BY x.lease_until
              LIMIT p_window) m
        WHERE m.headers ? p_header_name AND (p_header_value IS NULL OR m.headers ->> p_header_name = p_header_value)
        ORDER BY m.id DESC
        LIMIT v_left;
        GET DIAGNOSTICS v_n = ROW_COUNT;
        v_left := v_left - v_n;
    END IF;
    IF v_left > 0 THEN
        RETURN QUERY
        SELECT d.id, d.topic::text, 'dead'::text, d.unique_key::text, d.headers, d.priority::integer, d.attempts,
               d.max_attempts, d.published_at, NULL::timestamptz, d.failed_at, d.last_error
        FROM (SELECT * FROM "${schema}".dead_letters x
              WHERE x.namespace = p_namespace AND x.topic = p_queue
              ORDER BY x.id DESC
              LIMIT p_window) d
        WHERE d.headers ? p_header_name AND (p_header_value IS NULL OR d.headers ->> p_header_name = p_header_value)
        ORDER BY d.id DESC
        LIMIT v_left;
        GET DIAGNOSTICS v_n = ROW_COUNT;
        v_left := v_left - v_n;
    END IF;
    IF v_left > 0 THEN
        RETURN QUERY
        SELECT c.id, c.topic::text, 'completed'::text, c.unique_key::text, c.headers, c.priority::integer,
               c.attempts, c.max_attempts, c.published_at, NULL::timestamptz, c.completed_at, NULL::text
        FROM (SELECT * FROM "${schema}".completed_messages x
              WHERE x.namespace = p_namespace AND x.topic = p_queue
              ORDER BY x.id DESC
              LIMIT p_window) c
        WHERE c.headers ? p_header_name AND (p_header_value IS NULL OR c.headers ->> p_header_name = p_header_value)
        ORDER BY c.id DESC
        LIMIT v_left;
    END IF;
END
$$;

-- ------------------------------------------------------------------ namespaces

-- The namespaces that hold topics or schedules, by name, at most p_limit (1 to 1000). Every namespace that ever held
-- a message is in the topics registry (a publish registers its topic, and a dead letter was published first).
-- A trusted login walks the leading namespace column of the registry's and the schedules' primary keys, one index
-- probe per namespace (a loose index scan), however many topics and schedules each holds. Another login gets its
-- granted namespaces that hold something, and with a session tenant set, that one only.
CREATE FUNCTION "${schema}".list_namespaces(p_limit integer DEFAULT 100)
RETURNS TABLE (namespace text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
    v_tenant text := "${schema}".current_tenant();
BEGIN
    PERFORM "${schema}"._check_range('p_limit', p_limit, 1, 1000, '1 to 1000');
    IF v_tenant IS NOT NULL OR NOT "${schema}".is_trusted() THEN
        RETURN QUERY
        SELECT g.n::text
        FROM unnest(CASE WHEN v_tenant IS NULL THEN "${schema}".granted_namespaces()
                         WHEN "${schema}".may_use(v_tenant) THEN ARRAY[v_tenant]
                         ELSE ARRAY[]::text[] END) AS g(n)
        WHERE EXISTS (SELECT 1 FROM "${schema}".topics t WHERE t.namespace = g.n)
           OR EXISTS (SELECT 1 FROM "${schema}".schedules s WHERE s.namespace = g.n)
        ORDER BY 1
        LIMIT p_limit;
        RETURN;
    END IF;
    RETURN QUERY
    WITH RECURSIVE by_topic (n, depth) AS (
        (SELECT t.namespace, 1 FROM "${schema}".topics t ORDER BY t.namespace LIMIT 1)
        UNION ALL
        SELECT (SELECT t.namespace FROM "${schema}".topics t WHERE t.namespace > b.n ORDER BY t.namespace LIMIT 1),
               b.depth + 1
        FROM by_topic b
        WHERE b.n IS NOT NULL AND b.depth < p_limit
    ), by_schedule (n, depth) AS (
        (SELECT s.namespace, 1 FROM "${schema}".schedules s ORDER BY s.namespace LIMIT 1)
        UNION ALL
        SELECT (SELECT s.namespace FROM "${schema}".schedules s WHERE s.namespace > b.n ORDER BY s.namespace LIMIT 1),
               b.depth + 1
        FROM by_schedule b
        WHERE b.n IS NOT NULL AND b.depth < p_limit
    )
    SELECT u.n::text
    FROM (SELECT b.n FROM by_topic b WHERE b.n IS NOT NULL
          UNION
          SELECT b.n FROM by_schedule b WHERE b.n IS NOT NULL) u
    ORDER BY u.n COLLATE "C"
    LIMIT p_limit;
END
$$;

-- ------------------------------------------------------------------ a cancel reaches the handler at once

-- Version 14's cancel, now telling the process that runs a cancelled message at once: a notification
-- "cancel:<namespace>/<id>" on the wake-up channel (delivered at commit), which its listener turns into the
-- handler's isCancelled(). Without it the handler heard of the cancel only at its next lease extension. Pending
-- messages have no handler to tell, so their cancel sends nothing.
CREATE OR REPLACE FUNCTION "${schema}"._engine_cancel(p_namespace text, p_id bigint, p_now timestamptz, p_actor text)
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
    IF v_state = 'running' THEN
        PERFORM pg_notify('${schema}_wakeup', 'cancel:' || p_namespace || '/' || p_id);
    END IF;
    RETURN v_state;
END
$$;

SELECT "${schema}"._secure_schema();
