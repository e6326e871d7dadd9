-- Dead letters: messages that failed for good (failed, out of attempts, or whose lease expired on the last attempt),
-- kept apart from the hot table so that they neither slow claims nor bloat the claim index. A dead letter keeps the
-- id it had while live: a redrive moves it back to messages with that id, a purge deletes it. Both take dead letters
-- by ids, by topic or of the whole namespace, oldest first and at most p_limit, and write a row of audit_log with
-- the actor. Tables: dead_letters, messages, audit_log.
--
-- A dead letter keeps its ordering key, and holds the key back while its topic waits behind dead letters: redriving
-- or purging it lets the key advance (_ordering_advance).
--
-- For psql users: list_dead_letters, redrive_dead_letters and purge_dead_letters. For the Java adapter:
-- _engine_dead_letters, _engine_redrive_audited and _engine_purge_audited, called directly by trusted logins, else
-- through the gates engine_dead_letters, engine_redrive_audited and engine_purge_audited, which check the caller's
-- namespace and every argument first.


-- Which dead letters a redrive or purge takes: by ids, or by queue, or (neither) the whole namespace.
CREATE OR REPLACE FUNCTION "${schema}"._check_dead_letter_selection(p_namespace text, p_queue text, p_ids bigint[], p_limit integer)
RETURNS void
LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    IF p_queue IS NOT NULL AND p_ids IS NOT NULL THEN
        PERFORM "${schema}"._invalid('p_ids', p_ids::text, 'either p_ids or p_queue, not both');
    END IF;
    IF p_queue IS NOT NULL THEN
        PERFORM "${schema}"._check_name('p_queue', p_queue);
    END IF;
    IF p_ids IS NOT NULL THEN
        -- one dimension first: array_position cannot search more
        PERFORM "${schema}"._check_array('p_ids', p_ids, 0, 10000, true);
    END IF;
    IF p_ids IS NOT NULL AND (cardinality(p_ids) > 10000 OR array_position(p_ids, NULL) IS NOT NULL) THEN
        PERFORM "${schema}"._invalid('p_ids', cardinality(p_ids) || ' ids', 'at most 10000 message ids, none null');
    END IF;
    PERFORM "${schema}"._check_range('p_limit', p_limit, 1, 10000, '1 to 10000');
END
$$;


-- Raises QU001 when the dead letters a redrive or purge of more than 1000 would take hold more than 1000 ordering
-- keys: each key takes a lock, and the server's lock table is small. The same selection as the engine's.
CREATE OR REPLACE FUNCTION "${schema}"._check_dead_letter_keys(p_namespace text, p_queue text, p_ids bigint[],
                                                               p_after_id bigint, p_limit integer)
RETURNS void
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_keys bigint;
BEGIN
    IF p_limit <= 1000 OR cardinality(p_ids) <= 1000 THEN
        RETURN;
    END IF;
    SELECT count(DISTINCT (d.topic, d.ordering_key)) INTO v_keys
    FROM (SELECT x.topic, x.ordering_key
          FROM "${schema}".dead_letters x
          WHERE x.namespace = p_namespace
            AND (p_ids IS NULL OR x.id = ANY (p_ids))
            AND (p_queue IS NULL OR x.topic = p_queue)
            AND x.id > coalesce(p_after_id, 0)
          ORDER BY x.id
          LIMIT p_limit) d
    WHERE d.ordering_key IS NOT NULL;
    IF v_keys > 1000 THEN
        PERFORM "${schema}"._invalid('p_limit', p_limit || ' (dead letters with ' || v_keys || ' ordering keys)',
            'a limit that takes dead letters of at most 1000 distinct ordering keys per call');
    END IF;
END
$$;


-- Oldest first by id: one (p_id), or a page after p_after_id of a topic (p_topic) or of the namespace.
CREATE OR REPLACE FUNCTION "${schema}"._engine_dead_letters(p_namespace text, p_topic text, p_id bigint, p_after_id bigint,
                                                            p_limit integer)
RETURNS TABLE (id bigint, namespace text, topic text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, unique_key text, last_error text, published_at timestamptz,
               failed_at timestamptz, published_by text, failed_by text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_dead_letters');
    END IF;
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


-- Moves dead letters back to the hot table, due now (p_now), with their attempts reset and the actor as redriven_by. A
-- dead letter whose unique key a live message holds stays where it is. A keyed dead letter comes back waiting with
-- its key, and its key advances: it is the head again when nothing of its key is pending or running (it came before
-- the successors still waiting). Returns the ids moved, how many were examined and the last id examined (the
-- p_after_id of the next page).
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
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_redrive');
    END IF;
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
        SELECT pg_notify('${schema}_wakeup', t.namespace || '/' || t.topic), "${schema}"._bump_wake_mark(t.namespace)
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


-- Deletes dead letters and returns their ids. A purged dead letter's key advances (what waited behind it goes on).
CREATE OR REPLACE FUNCTION "${schema}"._engine_purge(p_namespace text, p_topic text, p_ids bigint[], p_limit integer)
RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_ids    bigint[];
    v_topics text[];
    v_keys   text[];
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_purge');
    END IF;
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


-- A redrive and its audit_log row (as redrive_dead_letters writes it), with the caller's actor.
CREATE OR REPLACE FUNCTION "${schema}"._engine_redrive_audited(p_namespace text, p_topic text, p_ids bigint[], p_after_id bigint,
                                                               p_limit integer, p_now timestamptz, p_notify boolean, p_actor text)
RETURNS TABLE (redriven bigint[], examined integer, last_id bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_moved    bigint[];
    v_examined integer;
    v_last     bigint;
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_redrive_audited');
    END IF;
    SELECT r.redriven, r.examined, r.last_id INTO v_moved, v_examined, v_last
    FROM "${schema}"._engine_redrive(p_namespace, p_topic, p_ids, p_after_id, p_limit, p_now, p_notify, p_actor) r;
    IF cardinality(v_moved) > 0 THEN
        INSERT INTO "${schema}".audit_log (at, namespace, actor, action, subject, ids, count)
        VALUES (statement_timestamp(), p_namespace, p_actor, 'redrive_dead_letters', p_topic, v_moved,
                cardinality(v_moved));
    END IF;
    RETURN QUERY SELECT v_moved, v_examined, v_last;
END
$$;


-- A purge and its audit_log row (as purge_dead_letters writes it), with the caller's actor. Returns the ids.
CREATE OR REPLACE FUNCTION "${schema}"._engine_purge_audited(p_namespace text, p_topic text, p_ids bigint[], p_limit integer,
                                                             p_actor text)
RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_purged bigint[];
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_purge_audited');
    END IF;
    v_purged := ARRAY(SELECT p FROM "${schema}"._engine_purge(p_namespace, p_topic, p_ids, p_limit) p ORDER BY p);
    IF cardinality(v_purged) > 0 THEN
        INSERT INTO "${schema}".audit_log (at, namespace, actor, action, subject, ids, count)
        VALUES (statement_timestamp(), p_namespace, p_actor, 'purge_dead_letters', p_topic, v_purged,
                cardinality(v_purged));
    END IF;
    RETURN QUERY SELECT unnest(v_purged);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_dead_letters(p_namespace text, p_topic text, p_id bigint, p_after_id bigint,
                                                 p_limit integer)
RETURNS TABLE (id bigint, namespace text, topic text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, unique_key text, last_error text, published_at timestamptz,
               failed_at timestamptz, published_by text, failed_by text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    IF p_topic IS NOT NULL THEN
        PERFORM "${schema}"._check_name('p_topic', p_topic);
    END IF;
    PERFORM "${schema}"._check_range('p_limit', p_limit, 1, 1000, '1 to 1000');
    RETURN QUERY SELECT * FROM "${schema}"._engine_dead_letters(p_namespace, p_topic, p_id, p_after_id, p_limit);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_redrive_audited(p_namespace text, p_topic text, p_ids bigint[], p_after_id bigint,
                                                    p_limit integer, p_now timestamptz, p_notify boolean, p_actor text)
RETURNS TABLE (redriven bigint[], examined integer, last_id bigint)
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    PERFORM "${schema}"._check_engine_dead_letter_selection(p_topic, p_ids, p_limit);
    PERFORM "${schema}"._check_engine_now(p_now);
    PERFORM "${schema}"._check_engine_actor('p_actor', p_actor);
    RETURN QUERY SELECT * FROM "${schema}"._engine_redrive_audited(p_namespace, p_topic, p_ids, p_after_id, p_limit,
        p_now, coalesce(p_notify, false), p_actor);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".engine_purge_audited(p_namespace text, p_topic text, p_ids bigint[], p_limit integer,
                                                  p_actor text)
RETURNS SETOF bigint
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_gate_namespace(p_namespace, false);
    PERFORM "${schema}"._check_engine_dead_letter_selection(p_topic, p_ids, p_limit);
    PERFORM "${schema}"._check_engine_actor('p_actor', p_actor);
    RETURN QUERY SELECT * FROM "${schema}"._engine_purge_audited(p_namespace, p_topic, p_ids, p_limit, p_actor);
END
$$;


-- Which dead letters a redrive or purge through its gate takes: by ids (at most 10,000) or by topic, or (neither)
-- the namespace's, at most p_limit (1 to 1000: each keyed dead letter moved takes an advisory lock for its key).
CREATE OR REPLACE FUNCTION "${schema}"._check_engine_dead_letter_selection(p_topic text, p_ids bigint[],
                                                                           p_limit integer)
RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_topic IS NOT NULL AND p_ids IS NOT NULL THEN
        PERFORM "${schema}"._invalid('p_ids', "${schema}"._shown(p_ids::text), 'either p_ids or p_topic, not both');
    END IF;
    IF p_topic IS NOT NULL THEN
        PERFORM "${schema}"._check_name('p_topic', p_topic);
    END IF;
    IF p_ids IS NOT NULL THEN
        PERFORM "${schema}"._check_array('p_ids', p_ids, 1, 10000);
    END IF;
    PERFORM "${schema}"._check_range('p_limit', p_limit, 1, 1000, '1 to 1000');
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".list_dead_letters(p_namespace text, p_queue text DEFAULT NULL,
                                                         p_after_id bigint DEFAULT 0, p_limit integer DEFAULT 50)
RETURNS TABLE (id bigint, queue text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, unique_key text, last_error text, published_at timestamptz,
               failed_at timestamptz, published_by text, failed_by text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
#variable_conflict use_column
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    IF p_queue IS NOT NULL THEN
        PERFORM "${schema}"._check_name('p_queue', p_queue);
    END IF;
    p_limit := coalesce(p_limit, 50);
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
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_moved    bigint[];
    v_examined integer;
    v_last     bigint;
BEGIN
    p_limit := coalesce(p_limit, 1000);
    PERFORM "${schema}"._check_dead_letter_selection(p_namespace, p_queue, p_ids, p_limit);
    PERFORM "${schema}"._check_dead_letter_keys(p_namespace, p_queue, p_ids, p_after_id, p_limit);
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
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
DECLARE
    v_purged bigint[];
BEGIN
    p_limit := coalesce(p_limit, 1000);
    PERFORM "${schema}"._check_dead_letter_selection(p_namespace, p_queue, p_ids, p_limit);
    PERFORM "${schema}"._check_dead_letter_keys(p_namespace, p_queue, p_ids, NULL, p_limit);
    v_purged := ARRAY(SELECT p FROM "${schema}"._engine_purge(p_namespace, p_queue, p_ids, p_limit) p ORDER BY p);
    IF cardinality(v_purged) > 0 THEN
        INSERT INTO "${schema}".audit_log (at, namespace, actor, action, subject, ids, count)
        VALUES (statement_timestamp(), p_namespace, "${schema}".current_actor(), 'purge_dead_letters', p_queue,
                v_purged, cardinality(v_purged));
    END IF;
    RETURN cardinality(v_purged);
END
$$;
