-- queue schema, version 17: a retention for the audit log, and its pruning in bounded batches (docs/security.md).
--
-- The audit log of version 9 only grows. An operator sets how long its rows are kept (set_audit_retention), and
-- prune_audit_log() deletes the rows older than that, oldest first and at most p_limit per call, so an external
-- cron (or pg_cron) calls it until it returns less than p_limit. Both are the operator's (or the owner's), and
-- both leave a row in the log themselves. Without a retention nothing is pruned.

-- Schema-wide settings of the queue, one row per name.
CREATE TABLE "${schema}".settings (
    name       text COLLATE "C" NOT NULL,
    value      text             NOT NULL,
    updated_at timestamptz      NOT NULL,
    updated_by text,
    CONSTRAINT settings_pkey PRIMARY KEY (name)
);

-- Pruning walks the log by time: a range scan, bounded by p_limit, whatever the table's size.
CREATE INDEX audit_log_at_idx ON "${schema}".audit_log (at);

-- How long the audit log keeps its rows, NULL: for ever.
CREATE FUNCTION "${schema}".get_audit_retention() RETURNS interval
LANGUAGE sql STABLE AS $$
    SELECT s.value::interval FROM "${schema}".settings s WHERE s.name = 'audit_retention'
$$;

-- Sets the retention (NULL: keep for ever) and records who did. Returns the retention now in force.
CREATE FUNCTION "${schema}".set_audit_retention(p_retention interval) RETURNS interval
LANGUAGE plpgsql AS $$
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
CREATE FUNCTION "${schema}".prune_audit_log(p_limit integer DEFAULT 10000) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    v_retention interval;
    v_cutoff    timestamptz;
    v_count     integer;
BEGIN
    PERFORM "${schema}"._check_admin('prune_audit_log');
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
