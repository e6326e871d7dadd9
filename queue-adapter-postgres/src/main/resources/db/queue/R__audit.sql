-- The trail of who did what (docs/security.md, docs/tenants.md): the audit log, its retention, and the triggers that
-- keep it and the attempt history of each message (attempt_errors) whichever engine made a change.
--
-- Schedule and policy changes write a row of audit_log with the actor of the setting queue.actor (a schedule's tick
-- is not a change): the other actions (pauses, cancels, redrives, purges, grants, limits) write theirs in the
-- functions that make them. A new dead letter records the attempt that made it, and a message's history goes when
-- the message leaves for good, not when it moves between the hot table, the dead letters and the archive. Retries
-- and rescues record their attempts themselves, since only they know the clock they ran with. Tables: audit_log,
-- attempt_errors, settings: the triggers sit on messages, dead_letters, completed_messages, queue_policies, schedules.
--
-- For psql users: list_audit_log and get_audit_retention, and for the owner and operator roles set_audit_retention
-- and prune_audit_log. Pruning deletes at most p_limit rows per call, oldest first, so that an external scheduler
-- (cron, pg_cron) calls it until it returns less than p_limit. Without a retention nothing is pruned. Setting the
-- retention and pruning leave a row in the log themselves.


-- A message that failed before left the hot table: its history goes unless it became a dead letter or was
-- archived (both in the same statement, so already visible here). Messages that never failed skip the trigger.
CREATE OR REPLACE FUNCTION "${schema}"._trail_message_gone() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM "${schema}".dead_letters d WHERE d.id = OLD.id)
            AND NOT EXISTS (SELECT 1 FROM "${schema}".completed_messages c WHERE c.id = OLD.id) THEN
        DELETE FROM "${schema}".attempt_errors a WHERE a.message_id = OLD.id;
    END IF;
    RETURN NULL;
END
$$;


-- A dead letter left: redriven (back in the hot table, history kept) or purged (history gone).
CREATE OR REPLACE FUNCTION "${schema}"._trail_dead_gone() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM "${schema}".messages m WHERE m.id = OLD.id) THEN
        DELETE FROM "${schema}".attempt_errors a WHERE a.message_id = OLD.id;
    END IF;
    RETURN NULL;
END
$$;


-- An archived message was deleted: its history goes with it.
CREATE OR REPLACE FUNCTION "${schema}"._trail_archive_gone() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp AS $$
BEGIN
    DELETE FROM "${schema}".attempt_errors a WHERE a.message_id = OLD.id;
    RETURN NULL;
END
$$;


-- A new dead letter records the attempt that made it (outcome 'dead'), with the worker and clock of that attempt.
CREATE OR REPLACE FUNCTION "${schema}"._trail_dead() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp AS $$
BEGIN
    PERFORM "${schema}"._record_attempt(NEW.id, NEW.namespace, NEW.attempts, NEW.last_error, NEW.worker,
                                        NEW.attempt_started_at, NEW.failed_at, 'dead', NEW.failed_by);
    RETURN NULL;
END
$$;


-- Schedule and policy changes, whichever engine made them. A tick (next and last run) is not a change.
CREATE OR REPLACE FUNCTION "${schema}"._audit_schedule() RETURNS trigger
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


-- A queue policy set or deleted, as _audit_schedule records schedule changes. An update that changes no setting of
-- the policy is not recorded (the trigger's WHEN clause).
CREATE OR REPLACE FUNCTION "${schema}"._audit_policy() RETURNS trigger
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


-- The audit log of a namespace, oldest first, after p_after_id (pass the last id of the previous page).
CREATE OR REPLACE FUNCTION "${schema}".list_audit_log(p_namespace text, p_after_id bigint DEFAULT 0, p_limit integer DEFAULT 100)
RETURNS TABLE (id bigint, at timestamptz, actor text, login text, action text, subject text, ids bigint[], count integer)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
#variable_conflict use_column
BEGIN
    PERFORM "${schema}"._check_namespace(p_namespace);
    p_limit := coalesce(p_limit, 100);
    PERFORM "${schema}"._check_range('p_limit', p_limit, 1, 1000, '1 to 1000');
    RETURN QUERY SELECT a.id, a.at, a.actor, a.login, a.action, a.subject, a.ids, a.count
                 FROM "${schema}".audit_log a
                 WHERE a.namespace = p_namespace AND a.id > coalesce(p_after_id, 0)
                 ORDER BY a.id
                 LIMIT p_limit;
END
$$;


-- How long the audit log keeps its rows, NULL: for ever.
CREATE OR REPLACE FUNCTION "${schema}".get_audit_retention() RETURNS interval
LANGUAGE sql STABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
    SELECT s.value::interval FROM "${schema}".settings s WHERE s.name = 'audit_retention'
$$;


-- Sets the retention (NULL: keep for ever) and records who did. Returns the retention now in force.
CREATE OR REPLACE FUNCTION "${schema}".set_audit_retention(p_retention interval) RETURNS interval
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
BEGIN
    PERFORM "${schema}"._check_admin('set_audit_retention');
    IF p_retention IS NULL THEN
        DELETE FROM "${schema}".settings s WHERE s.name = 'audit_retention';
    ELSE
        PERFORM "${schema}"._check_interval('p_retention', p_retention, interval '1 hour', interval '100 years',
            '1 hour to 100 years, or NULL for ever');
        INSERT INTO "${schema}".settings (name, value, updated_at, updated_by)
        VALUES ('audit_retention', p_retention::text, statement_timestamp(), "${schema}".current_actor())
        ON CONFLICT (name) DO UPDATE
            SET value = excluded.value, updated_at = excluded.updated_at, updated_by = excluded.updated_by;
    END IF;
    INSERT INTO "${schema}".audit_log (at, namespace, actor, action, subject, ids, count)
    VALUES (statement_timestamp(), '*', "${schema}".current_actor(), 'set_audit_retention',
            coalesce(p_retention::text, 'for ever'), NULL, 0);
    RETURN p_retention;
END
$$;


-- Deletes the audit rows older than the retention, oldest first, at most p_limit. Returns how many went.
CREATE OR REPLACE FUNCTION "${schema}".prune_audit_log(p_limit integer DEFAULT 10000) RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
DECLARE
    v_retention interval;
    v_cutoff    timestamptz;
    v_count     integer;
BEGIN
    PERFORM "${schema}"._check_admin('prune_audit_log');
    p_limit := coalesce(p_limit, 10000);
    PERFORM "${schema}"._check_range('p_limit', p_limit, 1, 100000, '1 to 100000');
    v_retention := "${schema}".get_audit_retention();
    IF v_retention IS NULL THEN
        RETURN 0;
    END IF;
    v_cutoff := statement_timestamp() - v_retention;
    WITH doomed AS (
        SELECT a.id FROM "${schema}".audit_log a
        WHERE a.at < v_cutoff
        ORDER BY a.at
        LIMIT p_limit
    )
    DELETE FROM "${schema}".audit_log a USING doomed d WHERE a.id = d.id;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    IF v_count > 0 THEN
        INSERT INTO "${schema}".audit_log (at, namespace, actor, action, subject, ids, count)
        VALUES (statement_timestamp(), '*', "${schema}".current_actor(), 'prune_audit_log',
                'older than ' || v_cutoff::text, NULL, v_count);
    END IF;
    RETURN v_count;
END
$$;


DROP TRIGGER IF EXISTS completed_messages_trail_gone ON "${schema}".completed_messages;
CREATE TRIGGER completed_messages_trail_gone AFTER DELETE ON "${schema}".completed_messages
    FOR EACH ROW EXECUTE FUNCTION "${schema}"._trail_archive_gone();

DROP TRIGGER IF EXISTS dead_letters_trail ON "${schema}".dead_letters;
CREATE TRIGGER dead_letters_trail AFTER INSERT ON "${schema}".dead_letters
    FOR EACH ROW EXECUTE FUNCTION "${schema}"._trail_dead();

DROP TRIGGER IF EXISTS dead_letters_trail_gone ON "${schema}".dead_letters;
CREATE TRIGGER dead_letters_trail_gone AFTER DELETE ON "${schema}".dead_letters
    FOR EACH ROW EXECUTE FUNCTION "${schema}"._trail_dead_gone();

DROP TRIGGER IF EXISTS messages_trail_gone ON "${schema}".messages;
CREATE TRIGGER messages_trail_gone AFTER DELETE ON "${schema}".messages
    FOR EACH ROW WHEN (OLD.last_error IS NOT NULL)
    EXECUTE FUNCTION "${schema}"._trail_message_gone();

DROP TRIGGER IF EXISTS queue_policies_audit_insert_delete ON "${schema}".queue_policies;
CREATE TRIGGER queue_policies_audit_insert_delete AFTER INSERT OR DELETE ON "${schema}".queue_policies
    FOR EACH ROW EXECUTE FUNCTION "${schema}"._audit_policy();

DROP TRIGGER IF EXISTS queue_policies_audit_update ON "${schema}".queue_policies;
CREATE TRIGGER queue_policies_audit_update AFTER UPDATE ON "${schema}".queue_policies
    FOR EACH ROW WHEN ((OLD.max_attempts, OLD.backoff_base, OLD.backoff_cap, OLD.backoff_multiplier, OLD.backoff_jitter,
                        OLD.visibility_timeout, OLD.max_payload_bytes, OLD.archive_completed)
                       IS DISTINCT FROM
                       (NEW.max_attempts, NEW.backoff_base, NEW.backoff_cap, NEW.backoff_multiplier, NEW.backoff_jitter,
                        NEW.visibility_timeout, NEW.max_payload_bytes, NEW.archive_completed))
    EXECUTE FUNCTION "${schema}"._audit_policy();

DROP TRIGGER IF EXISTS schedules_audit_insert_delete ON "${schema}".schedules;
CREATE TRIGGER schedules_audit_insert_delete AFTER INSERT OR DELETE ON "${schema}".schedules
    FOR EACH ROW EXECUTE FUNCTION "${schema}"._audit_schedule();

DROP TRIGGER IF EXISTS schedules_audit_update ON "${schema}".schedules;
CREATE TRIGGER schedules_audit_update AFTER UPDATE ON "${schema}".schedules
    FOR EACH ROW WHEN (OLD.paused IS DISTINCT FROM NEW.paused OR OLD.updated_at IS DISTINCT FROM NEW.updated_at)
    EXECUTE FUNCTION "${schema}"._audit_schedule();
