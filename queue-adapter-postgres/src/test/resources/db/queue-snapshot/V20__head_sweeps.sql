-- queue schema, version 20: looking behind the claim positions costs the fleet one claim per topic and interval.
--
-- Claimers resume after the position of their last claim (version 10), and look from the head now and then for
-- messages that turned up behind it. While a long transaction holds back vacuum, the head is a growing run of index
-- entries of messages claimed since, and each such look steps over all of them: one per claimer and sweep interval
-- added up to most of the server's time. Two changes:
--
-- * head_sweeps hands the look behind a topic's positions to one claimer of the fleet at a time (a row per
--   namespace and topic with the time of the last one, taken by a conditional upsert), instead of every claimer
--   taking its own.
-- * The claim takes, per topic, whether to look behind its position (p_behind). That look reads from the head up to
--   the position and stops there, and the claimer's next claim resumes after the position. A look that went on past
--   the position, into the part of the order the other claimers are working through, found every row they had
--   claimed since it began (after its snapshot) still pending, and tried and skipped each: with a pinned horizon
--   such a claim took a second and came back empty.

CREATE TABLE "${schema}".head_sweeps (
    namespace text COLLATE "C" NOT NULL,
    topic     text COLLATE "C" NOT NULL,
    swept_at  timestamptz      NOT NULL,
    CONSTRAINT head_sweeps_pkey PRIMARY KEY (namespace, topic)
)
-- a row is rewritten about once a second per topic, in place (no indexed column changes)
WITH (fillfactor = 50);

-- The topics of p_topics whose look behind the caller takes: those no claimer took within p_gap_micros of now (or
-- taken at a time after now: a manual clock moved back). Waits for a concurrent taker of the same topic, which then
-- has it.
CREATE FUNCTION "${schema}"._engine_take_head_sweeps(p_namespace text, p_topics text[], p_gap_micros bigint,
                                                     p_now timestamptz)
RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY
    INSERT INTO "${schema}".head_sweeps AS h (namespace, topic, swept_at)
    SELECT p_namespace, t.topic, coalesce(p_now, statement_timestamp())
    FROM (SELECT DISTINCT u.topic FROM unnest(p_topics) AS u(topic) ORDER BY u.topic) t
    ON CONFLICT (namespace, topic) DO UPDATE SET swept_at = excluded.swept_at
    WHERE h.swept_at <= excluded.swept_at - p_gap_micros * interval '1 microsecond'
       OR h.swept_at > excluded.swept_at
    RETURNING h.topic::text;
END
$$;

CREATE FUNCTION "${schema}".engine_take_head_sweeps(p_namespace text, p_topics text[], p_gap_micros bigint,
                                                    p_now timestamptz)
RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_take_head_sweeps(p_namespace, p_topics, p_gap_micros, p_now);
END
$$;

-- ------------------------------------------------------------------ the claim, looking behind on request

-- Version 18's claim (version 14's, recording the attempt's start), with p_behind: for a topic with a position
-- (p_after_ids not null) and p_behind true, the claim reads from the head up to and including the position, and not
-- after it. The position is included because a message given back unchanged (released) returns to exactly that
-- place.
CREATE FUNCTION "${schema}"._engine_claim(
    p_namespace text, p_topics text[], p_worker text, p_limit integer, p_lease_token bigint, p_lease_micros bigint,
    p_now timestamptz, p_async boolean, p_after_priorities integer[], p_after_run_at_micros bigint[],
    p_after_ids bigint[], p_behind boolean[])
RETURNS TABLE (id bigint, namespace text, topic text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, lease_token bigint, worker text, lease_until timestamptz,
               published_at timestamptz, run_at timestamptz, unique_key text, published_by text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_paused text[];
BEGIN
    -- before reading the pauses, so that a pause committing meanwhile is seen by the next statement
    PERFORM pg_advisory_xact_lock_shared("${schema}"._flow_lock_key(p_namespace, t.topic))
    FROM unnest(p_topics) AS t(topic);
    v_paused := ARRAY(SELECT p.topic::text FROM "${schema}".paused_topics p
                      WHERE p.namespace = p_namespace AND p.topic = ANY (p_topics));
    RETURN QUERY
    WITH picked AS MATERIALIZED (
        SELECT c.id, t.ord, r.part
        FROM unnest((SELECT p_topics), (SELECT p_after_priorities), (SELECT p_after_run_at_micros),
                    (SELECT p_after_ids), (SELECT p_behind))
             WITH ORDINALITY AS t(topic, after_priority, after_run_at_micros, after_id, behind, ord)
        CROSS JOIN (VALUES (1), (2)) AS r(part)
        CROSS JOIN LATERAL (
            SELECT m.id, m.priority, m.run_at
            FROM "${schema}".messages m
            WHERE m.namespace = p_namespace
              AND m.topic = t.topic
              AND m.state = 'pending'
              AND m.run_at <= (SELECT coalesce(p_now, statement_timestamp()))
              AND (m.priority, m.run_at, m.id) > (
                  CASE r.part WHEN 1 THEN -1 ELSE t.after_priority END::smallint,
                  CASE r.part WHEN 1 THEN '-infinity'::timestamptz
                       ELSE timestamptz 'epoch' + t.after_run_at_micros * interval '1 microsecond' END,
                  CASE r.part WHEN 1 THEN 0 ELSE t.after_id END)
              -- the end of the range: the position itself when looking behind it, before its priority otherwise,
              -- none in the second range or without a position
              AND (m.priority, m.run_at, m.id) <= (
                  CASE WHEN r.part = 2 OR t.after_id IS NULL THEN 9
                       WHEN t.behind THEN t.after_priority
                       ELSE t.after_priority - 1 END::smallint,
                  CASE WHEN r.part = 1 AND t.after_id IS NOT NULL AND t.behind
                       THEN timestamptz 'epoch' + t.after_run_at_micros * interval '1 microsecond'
                       ELSE 'infinity'::timestamptz END,
                  CASE WHEN r.part = 1 AND t.after_id IS NOT NULL AND t.behind THEN t.after_id
                       ELSE 9223372036854775807 END)
            ORDER BY m.priority, m.run_at, m.id
            LIMIT (SELECT p_limit)
            FOR UPDATE SKIP LOCKED
        ) c
        WHERE (r.part = 1 OR (t.after_id IS NOT NULL AND NOT coalesce(t.behind, false)))
          AND NOT (t.topic = ANY (v_paused))
        ORDER BY t.ord, r.part, c.priority, c.run_at, c.id
        LIMIT (SELECT p_limit)
    ),
    claimed AS (
        UPDATE "${schema}".messages m
        SET state = 'running',
            attempts = m.attempts + 1,
            worker = p_worker,
            attempt_started_at = coalesce(p_now, statement_timestamp()),
            lease_token = p_lease_token,
            lease_until = coalesce(p_now, statement_timestamp()) + p_lease_micros * interval '1 microsecond'
        WHERE m.id = ANY (ARRAY(SELECT p.id FROM picked p))
        RETURNING m.id, m.namespace, m.topic, m.payload, m.headers, m.priority, m.attempts, m.max_attempts,
                  m.lease_token, m.worker, m.lease_until, m.published_at, m.run_at, m.unique_key, m.published_by
    )
    SELECT c.id, c.namespace::text, c.topic::text, c.payload, c.headers, c.priority::integer, c.attempts,
           c.max_attempts, c.lease_token, c.worker, c.lease_until, c.published_at, c.run_at, c.unique_key::text,
           c.published_by
    FROM claimed c JOIN picked p ON p.id = c.id
    WHERE NOT p_async OR (SELECT set_config('synchronous_commit', 'off', true)) = 'off'
    ORDER BY p.ord, p.part, c.priority, c.run_at, c.id;
END
$$;

-- The claim of versions 10, 14 and 18 (the SQL pull functions call it): looks behind no position.
CREATE OR REPLACE FUNCTION "${schema}"._engine_claim(
    p_namespace text, p_topics text[], p_worker text, p_limit integer, p_lease_token bigint, p_lease_micros bigint,
    p_now timestamptz, p_async boolean, p_after_priorities integer[], p_after_run_at_micros bigint[],
    p_after_ids bigint[])
RETURNS TABLE (id bigint, namespace text, topic text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, lease_token bigint, worker text, lease_until timestamptz,
               published_at timestamptz, run_at timestamptz, unique_key text, published_by text)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY SELECT * FROM "${schema}"._engine_claim(p_namespace, p_topics, p_worker, p_limit, p_lease_token,
        p_lease_micros, p_now, p_async, p_after_priorities, p_after_run_at_micros, p_after_ids, NULL::boolean[]);
END
$$;

CREATE FUNCTION "${schema}".engine_claim(
    p_namespace text, p_topics text[], p_worker text, p_limit integer, p_lease_token bigint, p_lease_micros bigint,
    p_now timestamptz, p_async boolean, p_after_priorities integer[], p_after_run_at_micros bigint[],
    p_after_ids bigint[], p_behind boolean[])
RETURNS TABLE (id bigint, namespace text, topic text, payload json, headers jsonb, priority integer, attempts integer,
               max_attempts integer, lease_token bigint, worker text, lease_until timestamptz,
               published_at timestamptz, run_at timestamptz, unique_key text, published_by text)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._check_access(p_namespace);
    RETURN QUERY SELECT * FROM "${schema}"._engine_claim(p_namespace, p_topics, p_worker, p_limit, p_lease_token,
        p_lease_micros, p_now, p_async, p_after_priorities, p_after_run_at_micros, p_after_ids, p_behind);
END
$$;

SELECT "${schema}"._secure_schema();
