-- Rescue of expired leases: a running message whose lease ended (its worker crashed, hung or outlived the lease) goes
-- back to pending, due now, with the error 'lease expired' and its attempt recorded (outcome 'lease_expired'): one
-- whose lease expired on its last attempt becomes a dead letter. Rows another rescuer holds are skipped (FOR UPDATE
-- SKIP LOCKED), so several processes may rescue at once. Tables: messages, dead_letters, attempt_errors.
--
-- For psql users: rescue_expired (the SQL pulls rescue before they claim, too). For the Java adapter: _engine_rescue,
-- called directly by trusted logins, else through the gate engine_rescue, which checks the caller's namespace and every
-- argument first. A NULL namespace rescues every namespace, narrowed to the session's tenant when one is set, and by
-- row-level security to those the caller may use.


-- Expired leases (of one namespace, or of all with NULL), at most p_limit, oldest lease first and ended at or after
-- p_expired_since, by the caller's clock. A lease that expired on its last attempt makes a dead letter that keeps its
-- key, and the key advances (unless the topic waits). A requeued head stays the head. Returns the counts and the time
-- looked up to.
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
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_engine_rescue');
    END IF;
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
        SELECT pg_notify('${schema}_wakeup', t.namespace || '/' || t.topic), "${schema}"._bump_wake_mark(t.namespace)
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


CREATE OR REPLACE FUNCTION "${schema}".engine_rescue(p_namespace text, p_limit integer, p_now timestamptz, p_notify boolean,
                                           p_expired_since timestamptz)
RETURNS TABLE (requeued bigint, dead_lettered bigint, looked_up_to timestamptz)
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
DECLARE
    v_namespace text := "${schema}"._check_gate_namespace(p_namespace, true);
BEGIN
    -- at most 1000: each lease that expired on its last attempt with an ordering key locks its key
    PERFORM "${schema}"._check_range('p_limit', p_limit, 1, 1000, '1 to 1000');
    PERFORM "${schema}"._check_engine_now(p_now);
    IF p_expired_since IS NOT NULL THEN
        PERFORM "${schema}"._check_instant('p_expired_since', p_expired_since);
    END IF;
    RETURN QUERY SELECT * FROM "${schema}"._engine_rescue(v_namespace, p_limit, p_now, coalesce(p_notify, false),
                                                          p_expired_since);
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".rescue_expired(p_namespace text DEFAULT NULL, p_limit integer DEFAULT 1000)
RETURNS TABLE (requeued bigint, dead_lettered bigint)
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
#variable_conflict use_column
BEGIN
    IF p_namespace IS NOT NULL OR "${schema}".current_tenant() IS NOT NULL THEN
        PERFORM "${schema}"._check_namespace(p_namespace);
    END IF;
    p_limit := coalesce(p_limit, 1000);
    -- each rescued message with an ordering key locks its key: at most 1000 locks per call
    PERFORM "${schema}"._check_range('p_limit', p_limit, 1, 1000, '1 to 1000');
    RETURN QUERY SELECT r.requeued, r.dead_lettered
                 FROM "${schema}"._engine_rescue(p_namespace, p_limit, NULL, "${schema}"._notify_wanted(NULL), NULL) r;
END
$$;
