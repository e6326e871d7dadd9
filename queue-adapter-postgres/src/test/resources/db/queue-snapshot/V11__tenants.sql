-- queue schema, version 11: tenants that cannot see each other, and a trail of who did what (docs/tenants.md).
--
-- Identity: the login role (session_user), which SET ROLE does not change and only a superuser can. A login is
--   trusted (every namespace) when it is a superuser or a member of the schema's owner, of "<schema>_app" or of
--   "<schema>_operator". Any other login may use exactly the namespaces granted to a role it is a member of
--   (grant_tenant, table tenant_grants). A session setting (set_tenant) only narrows, it never widens.
-- Enforcement, two layers:
--   1. Row-level security, enabled and FORCED on every table with a namespace column, for the owner too: the
--      functions run as the owner (SECURITY DEFINER), so a tenant's call sees and changes only granted rows.
--      The predicate is two InitPlans, evaluated once per statement, not per row.
--   2. Every function checks its namespace argument first and refuses an ungranted one with QU005, naming it.
-- Roles: setup_roles() (a procedure, called once by a role that may create roles) creates the owner, app,
--   operator and tenant roles named after the schema and hands every object of the schema to the owner role.
--   Without it the schema works as before: the connecting role owns it and is trusted.
-- Function privileges are applied generically by _secure_schema() over every function of the schema (also those
--   later migrations create or re-create): EXECUTE revoked from PUBLIC, public functions SECURITY DEFINER with a
--   fixed search_path and EXECUTE for the queue's roles, internal ones (leading underscore) for the owner only.
-- Trail: the actor is the default of published_by and failed_by, schedule and policy changes are written to
--   audit_log by triggers (whichever engine made them), and attempt_errors keeps the last 20 failed attempts of
--   each message, removed with the message.

-- ------------------------------------------------------------------ grants

CREATE TABLE "${schema}".tenant_grants (
    namespace  text COLLATE "C" NOT NULL,
    role_name  text COLLATE "C" NOT NULL,
    granted_at timestamptz      NOT NULL,
    granted_by text,
    CONSTRAINT tenant_grants_pkey PRIMARY KEY (namespace, role_name)
);

-- ------------------------------------------------------------------ the trail

-- The login that did it, besides the actor the application names (set_actor).
ALTER TABLE "${schema}".audit_log ADD COLUMN login text DEFAULT session_user;

-- Statements that list their columns without these (the Java engine's) still record the actor of the session.
ALTER TABLE "${schema}".messages ALTER COLUMN published_by SET DEFAULT nullif(current_setting('queue.actor', true), '');
ALTER TABLE "${schema}".dead_letters ALTER COLUMN failed_by SET DEFAULT nullif(current_setting('queue.actor', true), '');


-- Failed attempts: one row per attempt that ended in a retry (nack, failure with attempts left, expired lease)
-- or in the dead letters. At most 20 per message (the oldest go), removed when the message is completed
-- without archive, purged from the dead letters or pruned from the archive.
CREATE TABLE "${schema}".attempt_errors (
    id         bigint GENERATED ALWAYS AS IDENTITY,
    message_id bigint           NOT NULL,
    namespace  text COLLATE "C" NOT NULL,
    attempt    integer          NOT NULL,
    error      text,
    worker     text,
    failed_at  timestamptz      NOT NULL,
    actor      text,
    CONSTRAINT attempt_errors_pkey PRIMARY KEY (id)
);

CREATE INDEX attempt_errors_message_idx ON "${schema}".attempt_errors (message_id, id);

CREATE FUNCTION "${schema}"._record_attempt(p_id bigint, p_namespace text, p_attempt integer, p_error text,
                                            p_worker text, p_failed_at timestamptz, p_actor text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO "${schema}".attempt_errors (message_id, namespace, attempt, error, worker, failed_at, actor)
    VALUES (p_id, p_namespace, p_attempt, p_error, p_worker, p_failed_at, p_actor);
    DELETE FROM "${schema}".attempt_errors a
    WHERE a.message_id = p_id
      AND a.id < (SELECT min(k.id) FROM (SELECT x.id FROM "${schema}".attempt_errors x
                                         WHERE x.message_id = p_id ORDER BY x.id DESC LIMIT 20) k);
END
$$;

-- running to pending with the attempt kept: a retry (a release takes its attempt back and is no failure)
CREATE FUNCTION "${schema}"._trail_retry() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp AS $$
BEGIN
    PERFORM "${schema}"._record_attempt(OLD.id, OLD.namespace, OLD.attempts, NEW.last_error, OLD.worker,
                                        statement_timestamp(), nullif(current_setting('queue.actor', true), ''));
    RETURN NULL;
END
$$;

CREATE TRIGGER messages_trail_retry AFTER UPDATE ON "${schema}".messages
    FOR EACH ROW WHEN (OLD.state = 'running' AND NEW.state = 'pending' AND NEW.attempts = OLD.attempts)
    EXECUTE FUNCTION "${schema}"._trail_retry();

-- the attempt that made a dead letter
CREATE FUNCTION "${schema}"._trail_dead() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp AS $$
BEGIN
    PERFORM "${schema}"._record_attempt(NEW.id, NEW.namespace, NEW.attempts, NEW.last_error, NEW.worker,
                                        NEW.failed_at, NEW.failed_by);
    RETURN NULL;
END
$$;

CREATE TRIGGER dead_letters_trail AFTER INSERT ON "${schema}".dead_letters
    FOR EACH ROW EXECUTE FUNCTION "${schema}"._trail_dead();

-- A message that failed before left the hot table: its history goes unless it became a dead letter or was
-- archived (both in the same statement, so already visible here). Messages that never failed skip the trigger.
CREATE FUNCTION "${schema}"._trail_message_gone() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM "${schema}".dead_letters d WHERE d.id = OLD.id)
            AND NOT EXISTS (SELECT 1 FROM "${schema}".completed_messages c WHERE c.id = OLD.id) THEN
        DELETE FROM "${schema}".attempt_errors a WHERE a.message_id = OLD.id;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER messages_trail_gone AFTER DELETE ON "${schema}".messages
    FOR EACH ROW WHEN (OLD.last_error IS NOT NULL)
    EXECUTE FUNCTION "${schema}"._trail_message_gone();

-- A dead letter left: redriven (back in the hot table, history kept) or purged (history gone).
CREATE FUNCTION "${schema}"._trail_dead_gone() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM "${schema}".messages m WHERE m.id = OLD.id) THEN
        DELETE FROM "${schema}".attempt_errors a WHERE a.message_id = OLD.id;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER dead_letters_trail_gone AFTER DELETE ON "${schema}".dead_letters
    FOR EACH ROW EXECUTE FUNCTION "${schema}"._trail_dead_gone();

CREATE FUNCTION "${schema}"._trail_archive_gone() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp AS $$
BEGIN
    DELETE FROM "${schema}".attempt_errors a WHERE a.message_id = OLD.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER completed_messages_trail_gone AFTER DELETE ON "${schema}".completed_messages
    FOR EACH ROW EXECUTE FUNCTION "${schema}"._trail_archive_gone();

-- Schedule and policy changes, whichever engine made them. A tick (next and last run) is not a change.
CREATE FUNCTION "${schema}"._audit_schedule() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp AS $$
DECLARE
    v_row    "${schema}".schedules;
    v_action text;
BEGIN
    IF TG_OP = 'DELETE' THEN
        v_row := OLD;
    ELSE
        v_row := NEW;
    END IF;
    v_action := CASE
        WHEN TG_OP = 'INSERT' THEN 'schedule_created'
        WHEN TG_OP = 'DELETE' THEN 'schedule_deleted'
        WHEN OLD.paused AND NOT NEW.paused THEN 'schedule_resumed'
        WHEN NOT OLD.paused AND NEW.paused THEN 'schedule_paused'
        ELSE 'schedule_updated' END;
    INSERT INTO "${schema}".audit_log (at, namespace, actor, action, subject, ids, count)
    VALUES (statement_timestamp(), v_row.namespace, nullif(current_setting('queue.actor', true), ''), v_action,
            v_row.name, NULL, 1);
    RETURN NULL;
END
$$;

CREATE TRIGGER schedules_audit_insert_delete AFTER INSERT OR DELETE ON "${schema}".schedules
    FOR EACH ROW EXECUTE FUNCTION "${schema}"._audit_schedule();

CREATE TRIGGER schedules_audit_update AFTER UPDATE ON "${schema}".schedules
    FOR EACH ROW WHEN (OLD.paused IS DISTINCT FROM NEW.paused OR OLD.updated_at IS DISTINCT FROM NEW.updated_at)
    EXECUTE FUNCTION "${schema}"._audit_schedule();

CREATE FUNCTION "${schema}"._audit_policy() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp AS $$
DECLARE
    v_row "${schema}".queue_policies;
BEGIN
    IF TG_OP = 'DELETE' THEN
        v_row := OLD;
    ELSE
        v_row := NEW;
    END IF;
    INSERT INTO "${schema}".audit_log (at, namespace, actor, action, subject, ids, count)
    VALUES (statement_timestamp(), v_row.namespace, nullif(current_setting('queue.actor', true), ''),
            CASE WHEN TG_OP = 'DELETE' THEN 'policy_deleted' ELSE 'policy_set' END, v_row.queue, NULL, 1);
    RETURN NULL;
END
$$;

CREATE TRIGGER queue_policies_audit_insert_delete AFTER INSERT OR DELETE ON "${schema}".queue_policies
    FOR EACH ROW EXECUTE FUNCTION "${schema}"._audit_policy();

CREATE TRIGGER queue_policies_audit_update AFTER UPDATE ON "${schema}".queue_policies
    FOR EACH ROW WHEN ((OLD.max_attempts, OLD.backoff_base, OLD.backoff_cap, OLD.backoff_multiplier, OLD.backoff_jitter,
                        OLD.visibility_timeout, OLD.max_payload_bytes, OLD.archive_completed)
                       IS DISTINCT FROM
                       (NEW.max_attempts, NEW.backoff_base, NEW.backoff_cap, NEW.backoff_multiplier, NEW.backoff_jitter,
                        NEW.visibility_timeout, NEW.max_payload_bytes, NEW.archive_completed))
    EXECUTE FUNCTION "${schema}"._audit_policy();

-- Only trusted roles change the policies of every namespace ('*'), and a tenant only its own namespace's. Row-level
-- security refuses these too, this says which namespace with the queue's SQLSTATE (QU005).
CREATE FUNCTION "${schema}"._guard_policy() RETURNS trigger
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

CREATE TRIGGER queue_policies_guard BEFORE INSERT OR UPDATE OR DELETE ON "${schema}".queue_policies
    FOR EACH ROW EXECUTE FUNCTION "${schema}"._guard_policy();

-- ------------------------------------------------------------------ identity

-- Whether the login role may use every namespace: a superuser, or a member of the schema's owner, of
-- "<schema>_app" or of "<schema>_operator". session_user, not current_user: inside these functions current_user
-- is the owner, and SET ROLE changes current_user only.
CREATE FUNCTION "${schema}".is_trusted() RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN pg_has_role(session_user, (SELECT n.nspowner FROM pg_catalog.pg_namespace n WHERE n.nspname = '${schema}'),
                       'MEMBER')
        OR coalesce(pg_has_role(session_user, to_regrole(quote_ident('${schema}_app')), 'MEMBER'), false)
        OR coalesce(pg_has_role(session_user, to_regrole(quote_ident('${schema}_operator')), 'MEMBER'), false);
END
$$;

-- The namespaces granted to a role the login role is a member of (empty for none, whatever it is trusted with).
CREATE FUNCTION "${schema}".granted_namespaces() RETURNS text[]
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN coalesce((SELECT array_agg(DISTINCT g.namespace)
                     FROM "${schema}".tenant_grants g
                     WHERE coalesce(pg_has_role(session_user, to_regrole(quote_ident(g.role_name)), 'MEMBER'), false)),
                    '{}');
END
$$;

-- Whether the login role may use the namespace.
CREATE FUNCTION "${schema}".may_use(p_namespace text) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN coalesce("${schema}".is_trusted() OR p_namespace = ANY ("${schema}".granted_namespaces()), false);
END
$$;

-- Raises QU005 unless the login role may use the namespace. The same refusal whether the namespace exists.
CREATE FUNCTION "${schema}"._check_access(p_namespace text) RETURNS void
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
CREATE FUNCTION "${schema}"._check_admin(p_what text) RETURNS void
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

-- Version 9's check, plus the grant: every function checks its namespace here first.
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

-- ------------------------------------------------------------------ granting

-- Lets the role (and every role that is a member of it) use the namespace. Makes the role a member of
-- "<schema>_tenant" (EXECUTE on the functions) when setup_roles() made that role. True when the grant is new.
CREATE FUNCTION "${schema}".grant_tenant(p_namespace text, p_role text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    v_new boolean;
BEGIN
    PERFORM "${schema}"._check_admin('grant_tenant');
    PERFORM "${schema}"._check_name('p_namespace', p_namespace);
    IF p_role IS NULL OR to_regrole(quote_ident(p_role)) IS NULL THEN
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
CREATE FUNCTION "${schema}".revoke_tenant(p_namespace text, p_role text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_admin('revoke_tenant');
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
CREATE FUNCTION "${schema}".list_tenant_grants()
RETURNS TABLE (namespace text, role_name text, granted_at timestamptz, granted_by text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    PERFORM "${schema}"._check_admin('list_tenant_grants');
    RETURN QUERY SELECT g.namespace::text, g.role_name::text, g.granted_at, g.granted_by
                 FROM "${schema}".tenant_grants g ORDER BY g.namespace, g.role_name;
END
$$;

-- ------------------------------------------------------------------ reading the trail

-- The failed attempts of a live, dead or archived message of the namespace, oldest first (at most 20).
CREATE FUNCTION "${schema}".inspect_attempts(p_namespace text, p_id bigint)
RETURNS TABLE (attempt integer, error text, worker_id text, failed_at timestamptz, actor text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    IF p_id IS NULL THEN
        PERFORM "${schema}"._invalid('p_id', 'null', 'a message id');
    END IF;
    RETURN QUERY SELECT a.attempt, a.error, a.worker, a.failed_at, a.actor
                 FROM "${schema}".attempt_errors a
                 WHERE a.message_id = p_id AND a.namespace = p_namespace
                 ORDER BY a.id;
END
$$;

-- The audit log of a namespace, oldest first, after p_after_id (pass the last id of the previous page).
CREATE FUNCTION "${schema}".list_audit_log(p_namespace text, p_after_id bigint DEFAULT 0, p_limit integer DEFAULT 100)
RETURNS TABLE (id bigint, at timestamptz, actor text, login text, action text, subject text, ids bigint[], count integer)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    PERFORM "${schema}"._check_range('p_limit', p_limit, 1, 1000, '1 to 1000');
    RETURN QUERY SELECT a.id, a.at, a.actor, a.login, a.action, a.subject, a.ids, a.count
                 FROM "${schema}".audit_log a
                 WHERE a.namespace = p_namespace AND a.id > coalesce(p_after_id, 0)
                 ORDER BY a.id
                 LIMIT p_limit;
END
$$;

-- ------------------------------------------------------------------ securing the schema

-- Idempotent, generic over what the schema holds when it runs, so it also covers functions and tables later
-- migrations create or re-create (CREATE OR REPLACE resets SECURITY DEFINER and SET clauses). Runs at the end of
-- this migration, in setup_roles(), and after every migration the queue's own migrator applies. Run it again
-- (SELECT "<schema>"._secure_schema()) after applying later migrations with another tool.
CREATE FUNCTION "${schema}"._secure_schema() RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_schema   text := '${schema}';
    v_owner    text := '${schema}_owner';
    v_roles    text[];
    v_set_up   boolean;
    v_object   record;
    v_role     text;
    v_guard    text;
BEGIN
    -- set up: the owner role exists and owns the schema
    v_set_up := to_regrole(quote_ident(v_owner)) IS NOT NULL
        AND (SELECT n.nspowner FROM pg_catalog.pg_namespace n WHERE n.nspname = v_schema) = to_regrole(quote_ident(v_owner));
    SELECT coalesce(array_agg(r.name), '{}') INTO v_roles
    FROM unnest(ARRAY[v_schema || '_app', v_schema || '_operator', v_schema || '_tenant']) AS r(name)
    WHERE to_regrole(quote_ident(r.name)) IS NOT NULL;

    -- tables: owner, row-level security on tenant data, privileges of the trusted roles
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
        -- not the grants: the policy reads them, and tenants reach them only through granted_namespaces()
        IF v_object.relkind IN ('r', 'p') AND v_object.tenant_data AND v_object.relname <> 'tenant_grants' THEN
            EXECUTE format('ALTER TABLE %I.%I ENABLE ROW LEVEL SECURITY', v_schema, v_object.relname);
            EXECUTE format('ALTER TABLE %I.%I FORCE ROW LEVEL SECURITY', v_schema, v_object.relname);
            -- each call a scalar sub-select (an InitPlan: once per statement), the cast keeps ANY on an array
            v_guard := format('(SELECT %1$I.is_trusted()) OR namespace = ANY ((SELECT %1$I.granted_namespaces())::text[])', v_schema);
            EXECUTE format('DROP POLICY IF EXISTS tenant_isolation ON %I.%I', v_schema, v_object.relname);
            EXECUTE format('CREATE POLICY tenant_isolation ON %I.%I USING (%s) WITH CHECK (%s)',
                           v_schema, v_object.relname, v_guard, v_guard);
            IF v_object.relname = 'queue_policies' THEN
                -- the policies of every namespace ('*') apply to all: readable by all, changed by trusted roles
                EXECUTE format('DROP POLICY IF EXISTS shared_policies ON %I.%I', v_schema, v_object.relname);
                EXECUTE format('CREATE POLICY shared_policies ON %I.%I FOR SELECT USING (namespace = %L)',
                               v_schema, v_object.relname, '*');
            END IF;
        END IF;
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
            -- trigger functions have no public names, so every function here is an entry point
            EXECUTE format('ALTER FUNCTION %s SECURITY DEFINER SET search_path = pg_catalog, %I, pg_temp',
                           v_object.signature, v_schema);
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

-- ------------------------------------------------------------------ roles

-- Creates (when missing) the roles of this schema and makes the owner role own every object of the schema:
--   <schema>_owner     NOLOGIN, no superuser, no BYPASSRLS: the functions run as it, so row-level security binds
--                      them. The caller becomes a member (to migrate later versions).
--   <schema>_app       NOLOGIN: the trusted fleet. Grant it to the application's login role. Every namespace,
--                      the functions and direct access to the tables (the Java engine's statements).
--   <schema>_operator  NOLOGIN: cross-tenant administration, as the app role plus grant_tenant/revoke_tenant.
--   <schema>_tenant    NOLOGIN: EXECUTE on the functions, nothing on tables or sequences. grant_tenant makes a
--                      tenant's role a member, the grant decides which namespaces it sees.
-- Idempotent, and safe when several databases of one cluster use the same schema name (roles are cluster-wide:
-- the roles are then shared, the grants stay per database). Needs a role that may create roles and owns the
-- schema (or a superuser): CALL "<schema>".setup_roles()
CREATE PROCEDURE "${schema}".setup_roles()
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

SELECT "${schema}"._secure_schema();
