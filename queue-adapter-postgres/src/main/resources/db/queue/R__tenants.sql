-- Tenants that cannot see each other's namespaces, the session's tenant and actor, and the securing of the schema
-- (docs/tenants.md, docs/security.md). Tables: tenant_grants, audit_log, and every table for _secure_schema().
--
-- Identity is the login role (session_user), which SET ROLE does not change. A login is trusted with every namespace
-- when it is a superuser or a member of the owner, of "<schema>_app" or of "<schema>_operator": any other login uses
-- the namespaces granted to a role it is a member of (grant_tenant). A session's tenant (set_tenant) only narrows.
-- Two layers enforce it: row-level security, forced on every table and with policies for the queue's own roles only
-- (so a login given table privileges by mistake still reaches no row), and a check of the namespace argument first in
-- every function (QU005). Public functions serve psql users. The trusted Java adapter calls the _engine_ functions
-- directly, and a tenant's login reaches them through the engine_ gates, which check the namespaces given as the
-- public functions do (_check_gate_namespace, _check_engine_namespaces), then every other argument, and run as the
-- owner, under the forced row-level security. The internal functions refuse any other caller (_check_engine_caller),
-- whatever EXECUTE it was given. setup_roles() creates the roles: without them the connecting role owns the schema.
-- _secure_schema() applies grants, ownership and row-level security policies generically after every migration,
-- while each public function declares SECURITY DEFINER and its search_path in its own CREATE.


-- The context lives in the custom settings queue.tenant_id and queue.actor: session-level by default, or
-- transaction-local with p_local (set_config(..., true)), which is what pooled callers should use, since a
-- transaction-local value ends with the transaction and cannot reach the next borrower of the connection.
CREATE OR REPLACE FUNCTION "${schema}".current_tenant() RETURNS text
LANGUAGE sql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
    SELECT nullif(current_setting('queue.tenant_id', true), '')
$$;


CREATE OR REPLACE FUNCTION "${schema}".current_actor() RETURNS text
LANGUAGE sql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
    SELECT nullif(current_setting('queue.actor', true), '')
$$;


CREATE OR REPLACE FUNCTION "${schema}".set_tenant(p_namespace text, p_local boolean DEFAULT false) RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_name('p_namespace', p_namespace);
    RETURN set_config('queue.tenant_id', p_namespace, coalesce(p_local, false));
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".clear_tenant(p_local boolean DEFAULT false) RETURNS void
LANGUAGE sql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
    SELECT set_config('queue.tenant_id', '', coalesce(p_local, false))
$$;


CREATE OR REPLACE FUNCTION "${schema}".set_actor(p_actor text, p_local boolean DEFAULT false) RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_text('p_actor', p_actor, 128);
    RETURN set_config('queue.actor', p_actor, coalesce(p_local, false));
END
$$;


CREATE OR REPLACE FUNCTION "${schema}".clear_actor(p_local boolean DEFAULT false) RETURNS void
LANGUAGE sql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
    SELECT set_config('queue.actor', '', coalesce(p_local, false))
$$;


-- Whether the login role may use every namespace: a superuser, or a member of the schema's owner, of
-- "<schema>_app" or of "<schema>_operator". session_user, not current_user: inside these functions current_user
-- is the owner, and SET ROLE changes current_user only.
CREATE OR REPLACE FUNCTION "${schema}".is_trusted() RETURNS boolean
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    RETURN pg_has_role(session_user, (SELECT n.nspowner FROM pg_catalog.pg_namespace n WHERE n.nspname = '${schema}'),
                       'MEMBER')
        OR coalesce(pg_has_role(session_user, to_regrole(quote_ident('${schema}_app')), 'MEMBER'), false)
        OR coalesce(pg_has_role(session_user, to_regrole(quote_ident('${schema}_operator')), 'MEMBER'), false);
END
$$;


-- The namespaces granted to a role the login role is a member of (empty for none, whatever it is trusted with).
CREATE OR REPLACE FUNCTION "${schema}".granted_namespaces() RETURNS text[]
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    RETURN coalesce((SELECT array_agg(DISTINCT g.namespace)
                     FROM "${schema}".tenant_grants g
                     WHERE coalesce(pg_has_role(session_user, to_regrole(quote_ident(g.role_name)), 'MEMBER'), false)),
                    '{}');
END
$$;


-- Whether the login role may use the namespace.
CREATE OR REPLACE FUNCTION "${schema}".may_use(p_namespace text) RETURNS boolean
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_name('p_namespace', p_namespace);
    RETURN coalesce("${schema}".is_trusted() OR p_namespace = ANY ("${schema}".granted_namespaces()), false);
END
$$;


-- Raises QU005 unless the login role may use the namespace. The same refusal whether the namespace exists.
CREATE OR REPLACE FUNCTION "${schema}"._check_access(p_namespace text) RETURNS void
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF NOT coalesce("${schema}".is_trusted() OR p_namespace = ANY ("${schema}".granted_namespaces()), false) THEN
        RAISE EXCEPTION USING ERRCODE = 'QU005',
            MESSAGE = format('namespace %s is not granted to role %s', "${schema}"._shown(p_namespace),
                             "${schema}"._shown(session_user::text)),
            HINT = 'an operator grants it with grant_tenant(namespace, role)',
            COLUMN = 'p_namespace';
    END IF;
END
$$;


-- Raises QU005 unless the login role is a superuser or a member of the owner or of "<schema>_operator".
CREATE OR REPLACE FUNCTION "${schema}"._check_admin(p_what text) RETURNS void
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF NOT (pg_has_role(session_user, (SELECT n.nspowner FROM pg_catalog.pg_namespace n WHERE n.nspname = '${schema}'),
                        'MEMBER')
            OR coalesce(pg_has_role(session_user, to_regrole(quote_ident('${schema}_operator')), 'MEMBER'), false)) THEN
        RAISE EXCEPTION USING ERRCODE = 'QU005',
            MESSAGE = format('%s needs the owner or operator role, not %s', p_what, "${schema}"._shown(session_user::text));
    END IF;
END
$$;


-- The namespace argument, checked first by every public function: QU002 when it differs from the tenant set for the
-- session, QU001 when it is not a valid name, QU005 when the login may not use it.
CREATE OR REPLACE FUNCTION "${schema}"._check_namespace(p_namespace text) RETURNS void
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_tenant text := "${schema}".current_tenant();
BEGIN
    IF v_tenant IS NOT NULL AND p_namespace IS DISTINCT FROM v_tenant THEN
        RAISE EXCEPTION USING ERRCODE = 'QU002',
            MESSAGE = format('namespace %s differs from the tenant %s set for this session',
                             "${schema}"._shown(p_namespace), "${schema}"._shown(v_tenant)),
            HINT = 'pass the tenant''s namespace, or call set_tenant()/clear_tenant() first',
            COLUMN = 'p_namespace';
    END IF;
    PERFORM "${schema}"._check_name('p_namespace', p_namespace);
    PERFORM "${schema}"._check_access(p_namespace);
END
$$;


-- The namespaces of an array argument of an engine_ gate (engine_publish, engine_record_rates), each checked as
-- _check_namespace checks one: QU002 when it differs from the session's tenant, QU001 when it is not a name, QU005
-- when the login may not use it. One pass per rule over the array, which holds up to 10,000 elements, and the first
-- offender is named by its position. The array's shape is checked before (_check_array).
CREATE OR REPLACE FUNCTION "${schema}"._check_engine_namespaces(p_namespaces text[]) RETURNS void
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_tenant    text := "${schema}".current_tenant();
    v_granted   text[];
    v_namespace text;
BEGIN
    IF v_tenant IS NOT NULL THEN
        SELECT u.n INTO v_namespace FROM unnest(p_namespaces) AS u(n) WHERE u.n IS DISTINCT FROM v_tenant LIMIT 1;
        IF FOUND THEN
            PERFORM "${schema}"._check_namespace(v_namespace);
        END IF;
    END IF;
    PERFORM "${schema}"._check_names('p_namespaces', p_namespaces);
    IF NOT "${schema}".is_trusted() THEN
        v_granted := "${schema}".granted_namespaces();
        SELECT u.n INTO v_namespace FROM unnest(p_namespaces) AS u(n) WHERE NOT (u.n = ANY (v_granted)) LIMIT 1;
        IF FOUND THEN
            PERFORM "${schema}"._check_access(v_namespace);
        END IF;
    END IF;
END
$$;


-- The namespace argument of an engine_ gate, checked as _check_namespace checks a public function's (QU002, QU001,
-- QU005), and returned as the gate passes it on. With p_every_namespace (the rescue, the schedule ticker's lock and
-- next run) NULL stands for every namespace: with a tenant set for the session that is the tenant's, checked the
-- same way, else NULL stays, and row-level security narrows the statement to the namespaces granted to the login.
CREATE OR REPLACE FUNCTION "${schema}"._check_gate_namespace(p_namespace text, p_every_namespace boolean) RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_namespace text := p_namespace;
BEGIN
    IF v_namespace IS NULL AND p_every_namespace THEN
        v_namespace := "${schema}".current_tenant();
        IF v_namespace IS NULL THEN
            RETURN NULL;
        END IF;
    END IF;
    PERFORM "${schema}"._check_namespace(v_namespace);
    RETURN v_namespace;
END
$$;


-- The guard that opens every internal function that reads or writes a table, takes a lock or notifies is an IF of this
-- function, which calls _check_engine_caller('<function>') only when it is false. It says whether the current role is a
-- member of "<schema>_app", of a superuser (PostgreSQL makes a superuser a member of every role, here of the bootstrap
-- superuser, oid 10, whose members are superusers in all but name), of the schema's owner or of "<schema>_operator".
-- current_user, not session_user: inside the public functions and the engine_ gates, which are SECURITY DEFINER, it is
-- the owner and passes, and the trusted Java adapter calls the engine as its app login. SQL, so that PL/pgSQL inlines
-- it into the IF as a simple expression of catalog cache lookups: the guard runs once per call on the hot path
-- (_engine_claim, _engine_publish*, the settle functions), where a call of a PL/pgSQL function would cost ten times as
-- much.
CREATE OR REPLACE FUNCTION "${schema}"._is_engine_caller() RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT coalesce(pg_has_role(current_user, to_regrole(quote_ident('${schema}_app')), 'MEMBER'), false)
        OR pg_has_role(current_user, 10::oid, 'MEMBER')
        OR coalesce(pg_has_role(current_user, to_regrole(quote_ident('${schema}_owner')), 'MEMBER'), false)
        OR coalesce(pg_has_role(current_user, to_regrole(quote_ident('${schema}_operator')), 'MEMBER'), false)
$$;


-- The rest of the guard, for a caller _is_engine_caller() did not pass: without setup_roles() the role that migrated
-- owns the functions and passes too, and any other caller gets QU005 naming the function and the role, before the
-- function reads anything (a tenant's login given EXECUTE on every function by mistake). The pure helpers (checks of
-- arguments, the cron and backoff rules) have no guard: they compute from their arguments only.
CREATE OR REPLACE FUNCTION "${schema}"._check_engine_caller(p_function text) RETURNS void
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF "${schema}"._is_engine_caller() THEN
        RETURN;
    END IF;
    -- without setup_roles() the role that migrated owns the functions (an index probe of pg_proc), and usually the
    -- schema (a scan of the few rows of pg_namespace, so only when that failed)
    IF pg_has_role(current_user, (SELECT p.proowner FROM pg_catalog.pg_proc p
                                  WHERE p.oid = '"${schema}"._check_engine_caller(text)'::regprocedure), 'MEMBER') THEN
        RETURN;
    END IF;
    IF pg_has_role(current_user, (SELECT n.nspowner FROM pg_catalog.pg_namespace n WHERE n.nspname = '${schema}'),
                   'MEMBER') THEN
        RETURN;
    END IF;
    RAISE EXCEPTION USING ERRCODE = 'QU005',
        MESSAGE = format('%s is internal to schema %s: role %s%s is not a member of its owner, %s or %s',
                         p_function, quote_ident('${schema}'), quote_ident(current_user::text),
                         CASE WHEN session_user <> current_user
                              THEN format(' (login %s)', quote_ident(session_user::text)) ELSE '' END,
                         quote_ident('${schema}_app'), quote_ident('${schema}_operator')),
        HINT = 'call the public functions or the engine_ gates, which check the namespaces: docs/security.md';
END
$$;


-- Before a TRUNCATE of any table of the schema (_secure_schema_objects() puts it on each): row-level security does
-- not apply to TRUNCATE, so a login given the TRUNCATE privilege by mistake would empty every tenant's rows. Only a
-- trusted login (a superuser, a member of the owner, app or operator role) may.
CREATE OR REPLACE FUNCTION "${schema}"._refuse_truncate() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp AS $$
BEGIN
    IF NOT "${schema}".is_trusted() THEN
        RAISE EXCEPTION USING ERRCODE = 'QU005',
            MESSAGE = format('TRUNCATE of %s.%s needs the owner, app or operator role, not %s',
                             quote_ident(TG_TABLE_SCHEMA), quote_ident(TG_TABLE_NAME), quote_ident(session_user::text));
    END IF;
    RETURN NULL;
END
$$;


-- Replaced by _check_gate_namespace, which also refuses NULL where it does not mean every namespace.
DROP FUNCTION IF EXISTS "${schema}"._check_engine_namespace(text);


-- Lets the role (and every role that is a member of it) use the namespace. Makes the role a member of
-- "<schema>_tenant" (EXECUTE on the functions) when setup_roles() made that role. True when the grant is new.
CREATE OR REPLACE FUNCTION "${schema}".grant_tenant(p_namespace text, p_role text) RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
DECLARE
    v_new boolean;
BEGIN
    PERFORM "${schema}"._check_admin('grant_tenant');
    PERFORM "${schema}"._check_name('p_namespace', p_namespace);
    -- a longer name would be cut to 63 bytes by to_regrole, and name the role it was cut to
    IF p_role IS NULL OR p_role = '' OR octet_length(p_role) > 63 OR to_regrole(quote_ident(p_role)) IS NULL THEN
        PERFORM "${schema}"._invalid('p_role', "${schema}"._shown(p_role), 'the name of an existing role');
    END IF;
    INSERT INTO "${schema}".tenant_grants (namespace, role_name, granted_at, granted_by)
    VALUES (p_namespace, p_role, statement_timestamp(), coalesce("${schema}".current_actor(), session_user::text))
    ON CONFLICT (namespace, role_name) DO NOTHING;
    v_new := FOUND;
    IF to_regrole(quote_ident('${schema}_tenant')) IS NOT NULL
            AND NOT pg_has_role(p_role, to_regrole(quote_ident('${schema}_tenant')), 'MEMBER') THEN
        EXECUTE format('GRANT %I TO %I', '${schema}_tenant', p_role);
    END IF;
    IF v_new THEN
        INSERT INTO "${schema}".audit_log (at, namespace, actor, action, subject, ids, count)
        VALUES (statement_timestamp(), p_namespace, "${schema}".current_actor(), 'grant_tenant', p_role, NULL, 1);
    END IF;
    RETURN v_new;
END
$$;


-- Takes the grant back (the role stays a member of "<schema>_tenant", which alone gives no namespace).
CREATE OR REPLACE FUNCTION "${schema}".revoke_tenant(p_namespace text, p_role text) RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_admin('revoke_tenant');
    PERFORM "${schema}"._check_name('p_namespace', p_namespace);
    -- the role may have been dropped since its grant: a granted name is enough
    IF p_role IS NULL OR p_role = '' OR octet_length(p_role) > 63
            OR (to_regrole(quote_ident(p_role)) IS NULL
                AND NOT EXISTS (SELECT 1 FROM "${schema}".tenant_grants g WHERE g.role_name = p_role)) THEN
        PERFORM "${schema}"._invalid('p_role', "${schema}"._shown(p_role), 'the name of an existing or granted role');
    END IF;
    DELETE FROM "${schema}".tenant_grants g WHERE g.namespace = p_namespace AND g.role_name = p_role;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    INSERT INTO "${schema}".audit_log (at, namespace, actor, action, subject, ids, count)
    VALUES (statement_timestamp(), p_namespace, "${schema}".current_actor(), 'revoke_tenant', p_role, NULL, 1);
    RETURN true;
END
$$;


-- Every grant (owner and operator roles only).
CREATE OR REPLACE FUNCTION "${schema}".list_tenant_grants()
RETURNS TABLE (namespace text, role_name text, granted_at timestamptz, granted_by text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
#variable_conflict use_column
BEGIN
    PERFORM "${schema}"._check_admin('list_tenant_grants');
    RETURN QUERY SELECT g.namespace::text, g.role_name::text, g.granted_at, g.granted_by
                 FROM "${schema}".tenant_grants g ORDER BY g.namespace, g.role_name;
END
$$;


-- Ownership, privileges and row-level security over whatever the schema holds when it runs, so it covers every table
-- and function however it was created: the owner role (once setup_roles() has made it) owns every object, tables are
-- closed to PUBLIC and open to the app and operator roles (tenant_grants to the operator role only), every table gets
-- forced row-level security, and the public functions (no leading underscore) get EXECUTE for the queue's roles only.
--
-- Row-level security is the boundary that holds whatever privileges an administrator grants a tenant's login by
-- mistake (GRANT ... ON ALL TABLES): its policies name only the queue's own roles, the role that owns the table (the
-- functions run as it) and the app and operator roles, so any other login reads no row and writes none, and reaches
-- the tables only through the functions. Tables of tenant data get tenant_isolation (the caller's namespaces, decided
-- by the login, see the header of _secure_schema), the others (the grants, workers, settings, the migrators' records)
-- queue_roles (all rows, tenant_grants for the owner and the operator role only, so that no login can grant itself a
-- namespace by editing a row). What row-level security does not govern is taken care of here too: TRUNCATE is
-- refused by a trigger (_refuse_truncate) to all but trusted logins, and TRUNCATE, TRIGGER, REFERENCES and MAINTAIN on
-- tables and UPDATE on sequences (setval) are revoked from every other role, with a warning naming it.
-- Idempotent. It runs through _secure_schema(), in setup_roles() and after every migration (afterMigrate.sql): run
-- SELECT "<schema>"._secure_schema() again after applying migrations with a tool that skips that callback.
CREATE OR REPLACE FUNCTION "${schema}"._secure_schema_objects() RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_schema   text := '${schema}';
    v_owner    text := '${schema}_owner';
    v_roles    text[];
    v_trusted  oid[];
    v_set_up   boolean;
    v_object   record;
    v_grant    record;
    v_role     text;
    v_guard    text;
    v_to       text[];
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_secure_schema_objects');
    END IF;
    -- set up: the owner role exists and owns the schema
    v_set_up := to_regrole(quote_ident(v_owner)) IS NOT NULL
        AND (SELECT n.nspowner FROM pg_catalog.pg_namespace n WHERE n.nspname = v_schema) = to_regrole(quote_ident(v_owner));
    SELECT coalesce(array_agg(r.name), '{}') INTO v_roles
    FROM unnest(ARRAY[v_schema || '_app', v_schema || '_operator', v_schema || '_tenant']) AS r(name)
    WHERE to_regrole(quote_ident(r.name)) IS NOT NULL;
    v_trusted := ARRAY(SELECT to_regrole(quote_ident(r))::oid FROM unnest(ARRAY[v_schema || '_app', v_schema || '_operator']) AS r
                       WHERE to_regrole(quote_ident(r)) IS NOT NULL);

    -- tables: owner, row-level security, privileges of the trusted roles
    FOR v_object IN
        SELECT c.oid, c.relname, c.relkind,
               EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                       WHERE a.attrelid = c.oid AND a.attname = 'namespace' AND NOT a.attisdropped) AS tenant_data
        FROM pg_catalog.pg_class c
        WHERE c.relnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = v_schema)
          AND c.relkind IN ('r', 'p', 'S')
        ORDER BY c.relname
    LOOP
        IF v_set_up AND v_object.relkind <> 'S' THEN
            EXECUTE format('ALTER TABLE %I.%I OWNER TO %I', v_schema, v_object.relname, v_owner);
        ELSIF v_set_up AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                                       WHERE d.objid = v_object.oid AND d.classid = 'pg_class'::regclass
                                         AND d.deptype IN ('a', 'i')) THEN
            -- sequences owned by a column move with their table
            EXECUTE format('ALTER SEQUENCE %I.%I OWNER TO %I', v_schema, v_object.relname, v_owner);
        END IF;
        -- privileges no policy binds, granted to any other role: TRUNCATE, TRIGGER (a trigger of its own would see
        -- every tenant's rows as they are written), REFERENCES (a foreign key of its own probes and pins ids), MAINTAIN
        -- (locks, PostgreSQL 17, but for the app and operator roles) on tables, UPDATE (setval) on sequences.
        FOR v_grant IN
            SELECT r.rolname::text AS grantee, array_agg(DISTINCT a.privilege_type ORDER BY a.privilege_type) AS privileges
            FROM pg_catalog.pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a
            LEFT JOIN pg_catalog.pg_roles r ON r.oid = a.grantee
            WHERE c.oid = v_object.oid AND a.grantee <> c.relowner
              AND CASE WHEN v_object.relkind = 'S' THEN a.privilege_type = 'UPDATE' AND a.grantee <> ALL (v_trusted)
                       ELSE a.privilege_type IN ('TRUNCATE', 'TRIGGER', 'REFERENCES')
                            OR (a.privilege_type = 'MAINTAIN' AND a.grantee <> ALL (v_trusted)) END
            GROUP BY 1
        LOOP
            FOREACH v_role IN ARRAY v_grant.privileges LOOP
                -- the keyword itself, not the catalog's text
                EXECUTE format('REVOKE %s ON %s %I.%I FROM %s',
                               CASE v_role WHEN 'UPDATE' THEN 'UPDATE' WHEN 'TRUNCATE' THEN 'TRUNCATE'
                                           WHEN 'TRIGGER' THEN 'TRIGGER' WHEN 'REFERENCES' THEN 'REFERENCES'
                                           ELSE 'MAINTAIN' END,
                               CASE WHEN v_object.relkind = 'S' THEN 'SEQUENCE' ELSE 'TABLE' END, v_schema, v_object.relname,
                               CASE WHEN v_grant.grantee IS NULL THEN 'PUBLIC' ELSE quote_ident(v_grant.grantee) END);
            END LOOP;
            RAISE WARNING 'revoked % on %.% from %: row-level security cannot bind it (docs/security.md)',
                array_to_string(v_grant.privileges, ', '), quote_ident(v_schema), quote_ident(v_object.relname),
                coalesce(quote_ident(v_grant.grantee), 'PUBLIC');
        END LOOP;
        IF v_object.relkind = 'S' THEN
            FOREACH v_role IN ARRAY array_remove(v_roles, v_schema || '_tenant') LOOP
                EXECUTE format('GRANT USAGE, SELECT, UPDATE ON SEQUENCE %I.%I TO %I', v_schema, v_object.relname, v_role);
            END LOOP;
            CONTINUE;
        END IF;
        EXECUTE format('REVOKE ALL ON TABLE %I.%I FROM PUBLIC', v_schema, v_object.relname);
        FOREACH v_role IN ARRAY array_remove(v_roles, v_schema || '_tenant') LOOP
            -- grants are the operator's: the app role does not change who sees what
            CONTINUE WHEN v_object.relname = 'tenant_grants' AND v_role <> v_schema || '_operator';
            EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE %I.%I TO %I', v_schema, v_object.relname, v_role);
            IF current_setting('server_version_num')::integer >= 170000 AND v_object.relkind IN ('r', 'p') THEN
                EXECUTE format('GRANT MAINTAIN ON TABLE %I.%I TO %I', v_schema, v_object.relname, v_role);
            END IF;
        END LOOP;
        EXECUTE format('ALTER TABLE %I.%I ENABLE ROW LEVEL SECURITY', v_schema, v_object.relname);
        EXECUTE format('ALTER TABLE %I.%I FORCE ROW LEVEL SECURITY', v_schema, v_object.relname);
        -- the roles the policies apply to: the table's owner (the functions run as it), the app and operator roles
        v_to := ARRAY(SELECT DISTINCT quote_ident(r.rolname::text) FROM pg_catalog.pg_roles r
                      WHERE r.oid = (SELECT c.relowner FROM pg_catalog.pg_class c WHERE c.oid = v_object.oid)
                         OR r.oid = ANY (CASE WHEN v_object.relname = 'tenant_grants'
                                              THEN ARRAY[to_regrole(quote_ident(v_schema || '_operator'))::oid]
                                              ELSE v_trusted END)
                      ORDER BY 1);
        -- the policies made here, dropped to be made again (without a notice for each that is missing), and those of
        -- the other kind of table (trusted_roles is _secure_schema()'s)
        FOR v_grant IN
            SELECT p.polname FROM pg_catalog.pg_policy p
            WHERE p.polrelid = v_object.oid
              AND p.polname IN ('tenant_isolation', 'shared_policies', 'queue_roles', 'trusted_roles')
              AND (p.polname <> 'trusted_roles' OR NOT v_object.tenant_data OR v_object.relname = 'tenant_grants')
        LOOP
            EXECUTE format('DROP POLICY %I ON %I.%I', v_grant.polname, v_schema, v_object.relname);
        END LOOP;
        -- not the grants: the policy reads them
        IF v_object.tenant_data AND v_object.relname <> 'tenant_grants' THEN
            -- each call a scalar sub-select (an InitPlan: once per statement), the cast keeps ANY on an array
            v_guard := format('(SELECT %1$I.is_trusted()) OR namespace = ANY ((SELECT %1$I.granted_namespaces())::text[])', v_schema);
            EXECUTE format('CREATE POLICY tenant_isolation ON %I.%I TO %s USING (%s) WITH CHECK (%s)',
                           v_schema, v_object.relname, array_to_string(v_to, ', '), v_guard, v_guard);
            IF v_object.relname = 'queue_policies' THEN
                -- the policies of every namespace ('*') apply to all: readable by all, changed by trusted roles
                EXECUTE format('CREATE POLICY shared_policies ON %I.%I FOR SELECT TO %s USING (namespace = %L)',
                               v_schema, v_object.relname, array_to_string(v_to, ', '), '*');
            END IF;
        ELSE
            -- no tenant data: the queue's roles read and write every row, nobody else any
            EXECUTE format('CREATE POLICY queue_roles ON %I.%I TO %s USING (true) WITH CHECK (true)',
                           v_schema, v_object.relname, array_to_string(v_to, ', '));
        END IF;
        IF v_object.relkind = 'r' AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_trigger t
                                                  WHERE t.tgrelid = v_object.oid
                                                    AND t.tgname = left(v_object.relname, 54) || '_truncate') THEN
            EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON %I.%I FOR EACH STATEMENT EXECUTE FUNCTION %I._refuse_truncate()',
                           left(v_object.relname, 54) || '_truncate', v_schema, v_object.relname, v_schema);
        END IF;
    END LOOP;

    -- what a login given TRIGGER or REFERENCES by mistake may have left before they were revoked: only the owner can
    -- drop it, so say so
    FOR v_object IN
        SELECT format('trigger %I on %I.%I', t.tgname, v_schema, c.relname) AS what
        FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid
        JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid
        WHERE c.relnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = v_schema)
          AND NOT t.tgisinternal AND p.pronamespace <> c.relnamespace
        UNION ALL
        SELECT format('foreign key %I of %s referencing %I.%I', k.conname, k.conrelid::regclass, v_schema, c.relname)
        FROM pg_catalog.pg_constraint k JOIN pg_catalog.pg_class c ON c.oid = k.confrelid
        WHERE k.contype = 'f' AND k.connamespace <> c.relnamespace
          AND c.relnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = v_schema)
    LOOP
        RAISE WARNING '% is not the queue''s: drop it unless you made it (docs/security.md)', v_object.what;
    END LOOP;

    -- types
    IF v_set_up THEN
        FOR v_object IN
            SELECT t.typname FROM pg_catalog.pg_type t
            WHERE t.typnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = v_schema)
              AND t.typtype = 'c' AND t.typrelid IN (SELECT c.oid FROM pg_catalog.pg_class c WHERE c.relkind = 'c')
        LOOP
            EXECUTE format('ALTER TYPE %I.%I OWNER TO %I', v_schema, v_object.typname, v_owner);
        END LOOP;
    END IF;

    -- functions and procedures
    FOR v_object IN
        SELECT p.oid::regprocedure AS signature, p.proname, p.prokind
        FROM pg_catalog.pg_proc p
        WHERE p.pronamespace = (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = v_schema)
          AND p.prokind IN ('f', 'p')
        ORDER BY p.oid
    LOOP
        IF v_set_up THEN
            EXECUTE format('ALTER ROUTINE %s OWNER TO %I', v_object.signature, v_owner);
        END IF;
        EXECUTE format('REVOKE ALL ON ROUTINE %s FROM PUBLIC', v_object.signature);
        IF left(v_object.proname, 1) = '_' THEN
            CONTINUE;
        END IF;
        IF v_object.prokind = 'f' THEN
            -- trigger functions have no public names, so every function here is an entry point: each declares
            -- SECURITY DEFINER and its search_path where it is created (SchemaFunctionsTest holds them to it)
            FOREACH v_role IN ARRAY v_roles LOOP
                EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', v_object.signature, v_role);
            END LOOP;
        END IF;
    END LOOP;

    IF array_length(v_roles, 1) > 0 THEN
        FOREACH v_role IN ARRAY v_roles LOOP
            EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', v_schema, v_role);
        END LOOP;
    END IF;
END
$$;


-- Secures the schema (_secure_schema_objects), then what the trusted roles need to call the engine without a gate:
-- the app and operator roles may execute the internal functions (trigger functions and the two securing functions
-- aside), which then run as the caller, under row-level security. The owner is made a member of pg_read_all_stats
-- where the caller may grant that (health() needs it to see other logins' transactions).
--
-- Every table of tenant data has the policy tenant_isolation, for the table's owner and the app and operator roles
-- (no other role has a policy, see _secure_schema_objects): "(SELECT is_trusted()) OR namespace = ANY (granted
-- namespaces)", where is_trusted() is a PL/pgSQL call with three role-membership checks, once per statement. Each such
-- table also gets the policy trusted_roles, "USING (true)", for the app and operator roles only: PostgreSQL ORs the
-- policies that apply to the current role, and for a member of those roles the condition folds to true when the
-- statement is planned, so no function runs for them. The policy applies by the current role, not the login, which is
-- why the owner must not be a member of a trusted role: the tenants' gates run as the owner. Where it is, the policy
-- is left out (with a notice). The owner, running a tenant's call, is bound by tenant_isolation, and a tenant's own
-- login by nothing but the absence of any policy for it: it reaches no row directly.
CREATE OR REPLACE FUNCTION "${schema}"._secure_schema() RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_schema text := '${schema}';
    v_role   text;
    v_object record;
    v_owner  regrole;
    v_trusted text[];
BEGIN
    IF NOT "${schema}"._is_engine_caller() THEN
        PERFORM "${schema}"._check_engine_caller('_secure_schema');
    END IF;
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


-- Creates (when missing) the roles of this schema and makes the owner role own every object of the schema:
--   <schema>_owner     NOLOGIN, no superuser, no BYPASSRLS: the functions run as it, so row-level security binds
--                      them. The caller becomes a member (so that it can apply later migrations).
--   <schema>_app       NOLOGIN: the trusted fleet. Grant it to the application's login role. Every namespace,
--                      the functions and direct access to the tables (the Java engine's statements).
--   <schema>_operator  NOLOGIN: cross-tenant administration, as the app role plus grant_tenant/revoke_tenant.
--   <schema>_tenant    NOLOGIN: EXECUTE on the functions, nothing on tables or sequences. grant_tenant makes a
--                      tenant's role a member, the grant decides which namespaces it sees.
-- Idempotent, and safe when several databases of one cluster use the same schema name (roles are cluster-wide:
-- the roles are then shared, the grants stay per database). Needs a role that may create roles and owns the
-- schema (or a superuser): CALL "<schema>".setup_roles()
CREATE OR REPLACE PROCEDURE "${schema}".setup_roles()
LANGUAGE plpgsql AS $$
DECLARE
    v_schema text := '${schema}';
    v_kind   text;
    v_name   text;
BEGIN
    FOREACH v_kind IN ARRAY ARRAY['owner', 'app', 'operator', 'tenant'] LOOP
        v_name := v_schema || '_' || v_kind;
        IF length(v_name) > 63 THEN
            PERFORM "${schema}"._invalid('schema', "${schema}"._shown(v_schema),
                'a schema name of at most ' || (63 - length('_' || v_kind)) || ' characters for role ' || v_name);
        END IF;
        IF to_regrole(quote_ident(v_name)) IS NULL THEN
            BEGIN
                EXECUTE format('CREATE ROLE %I NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE', v_name);
            EXCEPTION WHEN duplicate_object OR unique_violation THEN
                -- created at the same moment by a setup of another database of the cluster
                NULL;
            END;
        END IF;
    END LOOP;
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_roles r
               WHERE r.rolname = v_schema || '_owner' AND (r.rolsuper OR r.rolbypassrls)) THEN
        RAISE EXCEPTION USING ERRCODE = 'QU005',
            MESSAGE = format('role %s is a superuser or bypasses row-level security, so it cannot own the queue',
                             v_schema || '_owner');
    END IF;
    IF NOT pg_has_role(current_user, to_regrole(quote_ident(v_schema || '_owner')), 'USAGE') THEN
        EXECUTE format('GRANT %I TO %I', v_schema || '_owner', current_user);
    END IF;
    -- so that grant_tenant, running as the owner, can make roles members of the tenant role
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_auth_members m
                   WHERE m.roleid = to_regrole(quote_ident(v_schema || '_tenant'))
                     AND m.member = to_regrole(quote_ident(v_schema || '_owner')) AND m.admin_option) THEN
        EXECUTE format('GRANT %I TO %I WITH ADMIN OPTION', v_schema || '_tenant', v_schema || '_owner');
    END IF;
    EXECUTE format('ALTER SCHEMA %I OWNER TO %I', v_schema, v_schema || '_owner');
    PERFORM "${schema}"._secure_schema();
END
$$;
