-- Queue policies: per queue (a topic, in SQL) the retry rule (max attempts and backoff), the visibility timeout of
-- SQL claims, the payload size limit and whether completed messages are archived. Table: queue_policies, where '*' as
-- namespace or as queue stands for every one: get_queue_policy resolves the row in force. The engine functions take
-- the policy's decisions as parameters (a retry's delay, whether to archive): the public functions resolve them here.
--
-- For psql users: get_queue_policy, set_queue_policy and delete_queue_policy. The rows of namespace '*', which apply
-- to every namespace, are readable by all and changed by trusted roles only: a tenant changes its own namespaces'
-- rows. Row-level security refuses the rest, and the guard trigger names the namespace with the queue's SQLSTATE
-- (QU005). Every change is recorded in audit_log by the triggers of R__audit.sql.


-- The policy in force for a queue: its own row, else its namespace's '*' row, else the row of that queue in every
-- namespace ('*', queue: what a Java queue's per-topic options write), else the '*' '*' row, else the Java defaults.
-- Internal: the functions that read a policy per message (_engine_complete) have checked their input already.
CREATE OR REPLACE FUNCTION "${schema}"._queue_policy(p_namespace text, p_queue text)
RETURNS "${schema}".queue_policies
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_policy "${schema}".queue_policies;
BEGIN
    SELECT p.* INTO v_policy
    FROM "${schema}".queue_policies p
    WHERE p.namespace IN (p_namespace, '*') AND p.queue IN (p_queue, '*')
    ORDER BY (p.namespace = '*'), (p.queue = '*')
    LIMIT 1;
    IF NOT FOUND THEN
        v_policy := ROW(p_namespace, p_queue, 20, interval '1 second', interval '1 hour', 2.0, 0.2,
                        interval '30 seconds', 1048576, false, timestamptz 'epoch', NULL);
    END IF;
    RETURN v_policy;
END
$$;


-- The policy in force for a queue ('*' as either argument: the row for every one, as set_queue_policy names it), for
-- a namespace the login may use and, with a tenant set for the session, that tenant's.
CREATE OR REPLACE FUNCTION "${schema}".get_queue_policy(p_namespace text, p_queue text)
RETURNS "${schema}".queue_policies
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    IF p_namespace IS DISTINCT FROM '*' OR "${schema}".current_tenant() IS NOT NULL THEN
        PERFORM "${schema}"._check_namespace(p_namespace);
    END IF;
    IF p_queue IS DISTINCT FROM '*' THEN
        PERFORM "${schema}"._check_name('p_queue', p_queue);
    END IF;
    RETURN "${schema}"._queue_policy(p_namespace, p_queue);
END
$$;


-- Creates or changes the policy of a queue ('*' as queue: every queue of the namespace, '*' as namespace: that queue
-- in every namespace). Parameters left null keep their current value (the default for a new row). Returns the
-- stored row.
CREATE OR REPLACE FUNCTION "${schema}".set_queue_policy(
    p_namespace text, p_queue text,
    p_max_attempts integer DEFAULT NULL, p_backoff_base interval DEFAULT NULL, p_backoff_cap interval DEFAULT NULL,
    p_backoff_multiplier double precision DEFAULT NULL, p_backoff_jitter double precision DEFAULT NULL,
    p_visibility_timeout interval DEFAULT NULL, p_max_payload_bytes integer DEFAULT NULL,
    p_archive_completed boolean DEFAULT NULL)
RETURNS "${schema}".queue_policies
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
DECLARE
    v_old "${schema}".queue_policies;
    v_new "${schema}".queue_policies;
BEGIN
    IF p_namespace IS DISTINCT FROM '*' OR "${schema}".current_tenant() IS NOT NULL THEN
        PERFORM "${schema}"._check_namespace(p_namespace);
    END IF;
    IF p_queue IS DISTINCT FROM '*' THEN
        PERFORM "${schema}"._check_name('p_queue', p_queue);
    END IF;
    -- each value given, before the row is locked (the base and the cap are checked together below)
    IF p_max_attempts IS NOT NULL THEN
        PERFORM "${schema}"._check_range('p_max_attempts', p_max_attempts, 1, 1000, '1 to 1000');
    END IF;
    -- the backoff is computed in days and seconds (backoff_delay, Java's Duration): no months or years
    IF p_backoff_base IS NOT NULL THEN
        PERFORM "${schema}"._check_interval('p_backoff_base', p_backoff_base, interval '0', interval '365 days',
            '0 to 365 days');
        IF date_part('year', p_backoff_base) <> 0 OR date_part('month', p_backoff_base) <> 0 THEN
            PERFORM "${schema}"._invalid('p_backoff_base', p_backoff_base::text, '0 to 365 days, without months or years');
        END IF;
    END IF;
    IF p_backoff_cap IS NOT NULL THEN
        PERFORM "${schema}"._check_interval('p_backoff_cap', p_backoff_cap, interval '0', interval '365 days',
            '0 to 365 days');
        IF date_part('year', p_backoff_cap) <> 0 OR date_part('month', p_backoff_cap) <> 0 THEN
            PERFORM "${schema}"._invalid('p_backoff_cap', p_backoff_cap::text, '0 to 365 days, without months or years');
        END IF;
    END IF;
    IF p_visibility_timeout IS NOT NULL THEN
        PERFORM "${schema}"._check_interval('p_visibility_timeout', p_visibility_timeout, interval '1 second',
            interval '24 hours', '1 s to 24 h');
    END IF;
    IF p_max_payload_bytes IS NOT NULL THEN
        PERFORM "${schema}"._check_range('p_max_payload_bytes', p_max_payload_bytes, 2, 67108864, '2 to 67108864 bytes');
    END IF;
    IF NOT (coalesce(p_backoff_multiplier, 2) BETWEEN 1 AND 100) THEN
        PERFORM "${schema}"._invalid('p_backoff_multiplier', p_backoff_multiplier::text, 'a multiplier from 1 to 100');
    END IF;
    IF NOT (coalesce(p_backoff_jitter, 0) BETWEEN 0 AND 1) THEN
        PERFORM "${schema}"._invalid('p_backoff_jitter', p_backoff_jitter::text, 'a jitter fraction from 0 to 1');
    END IF;
    SELECT * INTO v_old FROM "${schema}".queue_policies WHERE namespace = p_namespace AND queue = p_queue FOR UPDATE;
    IF NOT FOUND THEN
        v_old := ROW(p_namespace, p_queue, 20, interval '1 second', interval '1 hour', 2.0, 0.2,
                     interval '30 seconds', 1048576, false, NULL, NULL);
    END IF;
    v_new := ROW(p_namespace, p_queue,
                 coalesce(p_max_attempts, v_old.max_attempts),
                 coalesce(p_backoff_base, v_old.backoff_base),
                 coalesce(p_backoff_cap, v_old.backoff_cap),
                 coalesce(p_backoff_multiplier, v_old.backoff_multiplier),
                 coalesce(p_backoff_jitter, v_old.backoff_jitter),
                 coalesce(p_visibility_timeout, v_old.visibility_timeout),
                 coalesce(p_max_payload_bytes, v_old.max_payload_bytes),
                 coalesce(p_archive_completed, v_old.archive_completed),
                 statement_timestamp(), "${schema}".current_actor());
    PERFORM "${schema}"._check_range('p_max_attempts', v_new.max_attempts, 1, 1000, '1 to 1000');
    PERFORM "${schema}"._check_interval('p_backoff_base', v_new.backoff_base, interval '0', interval '365 days',
        '0 to 365 days');
    PERFORM "${schema}"._check_interval('p_backoff_cap', v_new.backoff_cap, v_new.backoff_base, interval '365 days',
        'from the base (' || v_new.backoff_base || ') to 365 days');
    IF NOT (v_new.backoff_multiplier BETWEEN 1 AND 100) THEN
        PERFORM "${schema}"._invalid('p_backoff_multiplier', v_new.backoff_multiplier::text, 'a multiplier from 1 to 100');
    END IF;
    IF NOT (v_new.backoff_jitter BETWEEN 0 AND 1) THEN
        PERFORM "${schema}"._invalid('p_backoff_jitter', v_new.backoff_jitter::text, 'a jitter fraction from 0 to 1');
    END IF;
    PERFORM "${schema}"._check_interval('p_visibility_timeout', v_new.visibility_timeout, interval '1 second',
        interval '24 hours', '1 s to 24 h');
    PERFORM "${schema}"._check_range('p_max_payload_bytes', v_new.max_payload_bytes, 2, 67108864, '2 to 67108864 bytes');
    INSERT INTO "${schema}".queue_policies AS p
    SELECT v_new.*
    ON CONFLICT (namespace, queue) DO UPDATE
        SET max_attempts = excluded.max_attempts, backoff_base = excluded.backoff_base,
            backoff_cap = excluded.backoff_cap, backoff_multiplier = excluded.backoff_multiplier,
            backoff_jitter = excluded.backoff_jitter, visibility_timeout = excluded.visibility_timeout,
            max_payload_bytes = excluded.max_payload_bytes, archive_completed = excluded.archive_completed,
            updated_at = excluded.updated_at, updated_by = excluded.updated_by;
    RETURN v_new;
END
$$;


-- Deletes the policy row of exactly this namespace and queue ('*' as either one names that row). True when there was
-- one: the queue then follows the next row in force, or the defaults.
CREATE OR REPLACE FUNCTION "${schema}".delete_queue_policy(p_namespace text, p_queue text) RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    IF p_namespace IS DISTINCT FROM '*' OR "${schema}".current_tenant() IS NOT NULL THEN
        PERFORM "${schema}"._check_namespace(p_namespace);
    END IF;
    IF p_queue IS DISTINCT FROM '*' THEN
        PERFORM "${schema}"._check_name('p_queue', p_queue);
    END IF;
    DELETE FROM "${schema}".queue_policies WHERE namespace = p_namespace AND queue = p_queue;
    RETURN FOUND;
END
$$;


-- Only trusted roles change the policies of every namespace ('*'), and a tenant only its own namespace's. Row-level
-- security refuses these too, this says which namespace with the queue's SQLSTATE (QU005).
CREATE OR REPLACE FUNCTION "${schema}"._guard_policy() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp AS $$
DECLARE
    v_namespace text;
BEGIN
    IF TG_OP = 'DELETE' THEN
        v_namespace := OLD.namespace;
    ELSE
        v_namespace := NEW.namespace;
    END IF;
    IF NOT "${schema}".is_trusted() THEN
        IF v_namespace = '*' THEN
            RAISE EXCEPTION USING ERRCODE = 'QU005',
                MESSAGE = format('namespace "*" (every namespace) is not granted to role %s, only the app and operator roles change it',
                                 "${schema}"._shown(session_user::text)),
                COLUMN = 'p_namespace';
        END IF;
        PERFORM "${schema}"._check_access(v_namespace);
        IF TG_OP = 'UPDATE' THEN
            PERFORM "${schema}"._check_access(OLD.namespace);
        END IF;
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RETURN NEW;
END
$$;


DROP TRIGGER IF EXISTS queue_policies_guard ON "${schema}".queue_policies;
CREATE TRIGGER queue_policies_guard BEFORE INSERT OR UPDATE OR DELETE ON "${schema}".queue_policies
    FOR EACH ROW EXECUTE FUNCTION "${schema}"._guard_policy();
