-- queue schema, version 16: the trusted roles call the engine directly (docs/security.md).
--
-- Version 13 put every engine function behind a gate for any login but the owner. The gate is needed for
-- tenants, whose namespaces it checks. The app and operator roles are trusted with every namespace and may already
-- read and write the tables directly, so the gate checks nothing for them and costs them a second function call,
-- SECURITY DEFINER, on every statement of the hot path. From this version they may execute the engine functions
-- (_engine_*) themselves, and the internal functions those call: they then run as the caller, under row-level
-- security (enabled for every role but the owner), whose policy lets a trusted login see every namespace. The
-- internal functions skip the tenants' checks, which a trusted role passes anyway: it may already read and write
-- every table. Tenants keep the gates, and no internal function.
--
-- _secure_schema() grants them, so functions later migrations add are granted too: the securing of
-- version 11 keeps running first under a new name, then the grants follow. It also makes the owner a member of
-- pg_read_all_stats where the caller may grant that (health() needs it to see other logins' transactions).

ALTER FUNCTION "${schema}"._secure_schema() RENAME TO _secure_schema_objects;

CREATE FUNCTION "${schema}"._secure_schema() RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_schema text := '${schema}';
    v_role   text;
    v_object record;
BEGIN
    PERFORM "${schema}"._secure_schema_objects();
    -- health() runs as the owner, and PostgreSQL shows the transactions of other logins only to members of
    -- pg_read_all_stats: without it no long transaction of another login is ever reported.
    IF to_regrole(quote_ident(v_schema || '_owner')) IS NOT NULL
            AND NOT pg_has_role(to_regrole(quote_ident(v_schema || '_owner')), 'pg_read_all_stats', 'MEMBER') THEN
        BEGIN
            EXECUTE format('GRANT pg_read_all_stats TO %I', v_schema || '_owner');
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE NOTICE 'health() cannot see the transactions of other logins: grant pg_read_all_stats to % as a superuser',
                v_schema || '_owner';
        END;
    END IF;
    FOREACH v_role IN ARRAY ARRAY[v_schema || '_app', v_schema || '_operator'] LOOP
        CONTINUE WHEN to_regrole(quote_ident(v_role)) IS NULL;
        FOR v_object IN
            SELECT p.oid::regprocedure AS signature
            FROM pg_catalog.pg_proc p
            WHERE p.pronamespace = (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = v_schema)
              AND p.prokind = 'f'
              AND starts_with(p.proname, '_')
              AND p.prorettype <> 'pg_catalog.trigger'::pg_catalog.regtype
              AND p.proname NOT IN ('_secure_schema', '_secure_schema_objects')
            ORDER BY p.oid
        LOOP
            EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', v_object.signature, v_role);
        END LOOP;
    END LOOP;
END
$$;


-- ------------------------------------------------------------------ health for tenants

-- health() shows the database-wide warnings (a long transaction, a replication slot) to everyone who may call it,
-- since a tenant's queue suffers from them too. For a login that is not trusted, the evidence that names another
-- login's session (its user, application, query, the slot's name) is left out: the warning says what is wrong and
-- to ask an operator. Warnings of namespaces are already only the granted ones (row-level security).
ALTER FUNCTION "${schema}".health(text, interval, integer, bigint, interval, interval, integer, interval)
    RENAME TO _health_unfiltered;

CREATE FUNCTION "${schema}".health(
    p_namespace text DEFAULT NULL,
    p_max_transaction_age interval DEFAULT interval '5 minutes',
    p_max_slot_xmin_age integer DEFAULT 10000000,
    p_max_dead_rows bigint DEFAULT 100000,
    p_max_pending_age interval DEFAULT interval '5 minutes',
    p_dead_letter_window interval DEFAULT interval '15 minutes',
    p_max_new_dead_letters integer DEFAULT 10,
    p_lease_grace interval DEFAULT interval '10 seconds')
RETURNS TABLE (code text, namespace text, queue text, message text, evidence jsonb, advice text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
    v_trusted boolean := "${schema}".is_trusted();
    v_row     record;
BEGIN
    FOR v_row IN
        SELECT * FROM "${schema}"._health_unfiltered(p_namespace, p_max_transaction_age, p_max_slot_xmin_age,
                                                     p_max_dead_rows, p_max_pending_age, p_dead_letter_window,
                                                     p_max_new_dead_letters, p_lease_grace)
    LOOP
        code := v_row.code;
        namespace := v_row.namespace;
        queue := v_row.queue;
        message := v_row.message;
        evidence := v_row.evidence;
        advice := v_row.advice;
        IF NOT v_trusted AND v_row.code = 'long_transaction'
                AND v_row.evidence ->> 'user' IS DISTINCT FROM session_user::text THEN
            message := format('a transaction of another login, open for %s, holds back the vacuum horizon',
                              v_row.evidence ->> 'age');
            evidence := jsonb_build_object('age', v_row.evidence -> 'age',
                                           'transaction_start', v_row.evidence -> 'transaction_start');
            advice := 'ask an operator of the database to end that transaction (queue status names it to them)';
        ELSIF NOT v_trusted AND v_row.code = 'replication_slot' THEN
            message := format('a replication slot holds back the vacuum horizon by %s transactions',
                              v_row.evidence ->> 'xmin_age');
            evidence := jsonb_build_object('xmin_age', v_row.evidence -> 'xmin_age');
            advice := 'ask an operator of the database to look at its replication slots';
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;

SELECT "${schema}"._secure_schema();
