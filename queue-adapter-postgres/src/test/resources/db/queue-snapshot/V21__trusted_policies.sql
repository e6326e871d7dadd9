-- queue schema, version 21: row-level security answers for the trusted roles without a function call.
--
-- Every table of tenant data has the policy tenant_isolation of version 11: "(SELECT is_trusted()) OR namespace =
-- ANY (granted namespaces)". is_trusted() is a PL/pgSQL call with three role-membership checks, evaluated once per
-- statement. In one-message transactions of the app role (each engine function runs several statements) those calls
-- were most of what the app role paid over the owner. From this version each such table also has the policy
-- trusted_roles, "USING (true)", for the app and operator roles only: PostgreSQL ORs the policies that apply to the
-- current role, and for a member of those roles the condition folds to true when the statement is planned, so no
-- function runs. The policy applies by the current role, not the login, which is why the owner must not be a
-- member of a trusted role: the tenants' gates run as the owner. _secure_schema() checks that and leaves the
-- policy out (with a notice) where it is. Tenants and the owner keep tenant_isolation as it was.
--
-- Besides, the engine functions of the hot path plan their statements once per session (generic plans). Under
-- row-level security PostgreSQL kept planning the statements inside them again at every call for the app role (a
-- custom plan each time), which by pg_stat_statements doubled the claim's time in one-message transactions, while
-- the owner's sessions reused one plan. Every statement in them is an index probe whatever its arguments
-- (QueryPlanTest holds their generic plans to that), so nothing is lost by planning them once.

CREATE OR REPLACE FUNCTION "${schema}"._secure_schema() RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_schema text := '${schema}';
    v_role   text;
    v_object record;
    v_owner  regrole;
    v_trusted text[];
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
    -- the trusted roles' own policy, on every table that has the tenants' (see the header)
    v_owner := to_regrole(quote_ident(v_schema || '_owner'));
    v_trusted := ARRAY(SELECT quote_ident(r) FROM unnest(ARRAY[v_schema || '_app', v_schema || '_operator']) AS r
                       WHERE to_regrole(quote_ident(r)) IS NOT NULL);
    IF v_owner IS NOT NULL AND EXISTS (SELECT 1 FROM unnest(ARRAY[v_schema || '_app', v_schema || '_operator']) AS r
                                       WHERE to_regrole(quote_ident(r)) IS NOT NULL
                                         AND pg_has_role(v_owner, to_regrole(quote_ident(r)), 'MEMBER')) THEN
        -- the gates run as the owner: a policy for the trusted roles would then let every tenant see everything
        RAISE NOTICE 'role % is a member of a trusted role: row-level security answers for trusted logins through '
                     'is_trusted() only', v_schema || '_owner';
        v_trusted := '{}';
    END IF;
    FOR v_object IN
        SELECT p.tablename FROM pg_catalog.pg_policies p
        WHERE p.schemaname = v_schema AND p.policyname = 'tenant_isolation'
        ORDER BY p.tablename
    LOOP
        EXECUTE format('DROP POLICY IF EXISTS trusted_roles ON %I.%I', v_schema, v_object.tablename);
        IF cardinality(v_trusted) > 0 THEN
            EXECUTE format('CREATE POLICY trusted_roles ON %I.%I TO %s USING (true) WITH CHECK (true)',
                           v_schema, v_object.tablename, array_to_string(v_trusted, ', '));
        END IF;
    END LOOP;
END
$$;

SELECT "${schema}"._secure_schema();

DO $$
DECLARE
    v_function record;
BEGIN
    FOR v_function IN
        SELECT p.oid::regprocedure AS signature
        FROM pg_catalog.pg_proc p
        WHERE p.pronamespace = (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = '${schema}')
          AND p.proname IN ('_engine_publish', '_engine_publish_fast', '_engine_publish_one', '_engine_claim',
                            '_engine_complete', '_engine_retry', '_engine_bury', '_engine_extend', '_engine_release',
                            '_engine_next_due', '_engine_snooze', '_engine_take_head_sweeps')
        ORDER BY p.oid
    LOOP
        EXECUTE format('ALTER FUNCTION %s SET plan_cache_mode = force_generic_plan', v_function.signature);
    END LOOP;
END
$$;
