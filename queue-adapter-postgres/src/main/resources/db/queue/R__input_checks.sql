-- Checks of the SQL API's input, and the texts its errors and verdicts show. The public functions call them before
-- the engine functions, which trust their input. They apply the rules of the Java API (InputRules), so that a psql
-- user and a Java caller get the same answer, and read no table.
--
-- Errors carry SQLSTATEs of the queue's own class QU (docs/sql.md): QU001 an argument breaks a rule (the message
-- names the argument, what was expected and the value received), QU002 the namespace differs from the tenant set for
-- the session, QU003 the schedule does not exist, QU004 the payload cannot be stored, QU005 the login may not use
-- the namespace or the function, QU006 ordering keys outside a READ COMMITTED transaction. In SQL a topic is called a
-- queue: p_queue and the "queue" columns hold what the Java API calls a topic. Functions whose names start with an
-- underscore are internal and may change without notice.


-- A value as error messages show it: text quoted and cut at 200 characters, like the Java API's messages.
CREATE OR REPLACE FUNCTION "${schema}"._shown(p_value text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_value IS NULL THEN 'null'
                ELSE '"' || replace(replace(left(p_value, 200), E'\n', '\n'), E'\r', '\r') || '"'
                     || CASE WHEN length(p_value) > 200 THEN '...(' || length(p_value) || ' chars)' ELSE '' END
           END
$$;


-- Raises QU001 (or the given code) naming the argument, what was expected and the value received.
CREATE OR REPLACE FUNCTION "${schema}"._invalid(p_argument text, p_shown text, p_expected text, p_code text DEFAULT 'QU001')
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = p_code,
        MESSAGE = format('invalid %s: expected %s, got: %s', p_argument, p_expected, p_shown),
        COLUMN = p_argument;
END
$$;


-- An interval in whole microseconds, the unit of the engine functions' durations.
CREATE OR REPLACE FUNCTION "${schema}"._micros(p_interval interval) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT (extract(epoch FROM p_interval) * 1000000)::bigint
$$;


-- Names of namespaces, queues, schedules and header names: the rule of InputRules.isName.
CREATE OR REPLACE FUNCTION "${schema}"._check_name(p_argument text, p_value text) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF NOT coalesce("${schema}"._is_name(p_value), false) THEN
        PERFORM "${schema}"._invalid(p_argument, "${schema}"._shown(p_value),
            '1 to 64 characters: letters, digits, ''.'', ''_'' or ''-'', starting with a letter or digit');
    END IF;
END
$$;


-- Text without control characters (Java's Character.isISOControl: U+0000-U+001F, U+007F-U+009F).
CREATE OR REPLACE FUNCTION "${schema}"._check_text(p_argument text, p_value text, p_max_length integer) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF NOT coalesce("${schema}"._is_text(p_value, p_max_length), false) THEN
        PERFORM "${schema}"._invalid(p_argument, "${schema}"._shown(p_value),
            '1 to ' || p_max_length || ' characters without control characters');
    END IF;
END
$$;


CREATE OR REPLACE FUNCTION "${schema}"._check_range(p_argument text, p_value bigint, p_min bigint, p_max bigint, p_expected text)
RETURNS void LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_value IS NULL OR p_value < p_min OR p_value > p_max THEN
        PERFORM "${schema}"._invalid(p_argument, coalesce(p_value::text, 'null'), p_expected);
    END IF;
END
$$;


CREATE OR REPLACE FUNCTION "${schema}"._check_interval(p_argument text, p_value interval, p_min interval, p_max interval,
                                                       p_expected text)
RETURNS void LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    -- compared as numeric seconds: an interval of millions of years overflows bigint microseconds
    IF p_value IS NULL OR extract(epoch FROM p_value) < extract(epoch FROM p_min)
            OR extract(epoch FROM p_value) > extract(epoch FROM p_max) THEN
        PERFORM "${schema}"._invalid(p_argument, coalesce(p_value::text, 'null'), p_expected);
    END IF;
END
$$;


-- An array argument: one dimension (PostgreSQL also accepts '{{1,2},{3,4}}' for a bigint[]), p_min to p_max
-- elements, and no NULL element unless p_nulls. A NULL array is refused here: callers map an optional NULL to its
-- default first.
CREATE OR REPLACE FUNCTION "${schema}"._check_array(p_argument text, p_value anyarray, p_min integer, p_max integer,
                                                    p_nulls boolean DEFAULT false)
RETURNS void LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_value IS NULL THEN
        PERFORM "${schema}"._invalid(p_argument, 'null', 'an array of ' || p_min || ' to ' || p_max || ' elements');
    END IF;
    IF array_ndims(p_value) > 1 THEN
        PERFORM "${schema}"._invalid(p_argument, array_ndims(p_value) || '-dimensional array',
            'a one-dimensional array');
    END IF;
    IF cardinality(p_value) < p_min OR cardinality(p_value) > p_max THEN
        PERFORM "${schema}"._invalid(p_argument, cardinality(p_value) || ' elements',
            p_min || ' to ' || p_max || ' elements');
    END IF;
    -- the engine pairs arrays by subscript from 1: '[0:1]={a,b}' would shift one against the other
    IF array_lower(p_value, 1) <> 1 THEN
        PERFORM "${schema}"._invalid(p_argument, 'subscripts from ' || array_lower(p_value, 1),
            'an array indexed from 1');
    END IF;
    IF NOT p_nulls AND array_position(p_value, NULL) IS NOT NULL THEN
        PERFORM "${schema}"._invalid(p_argument, 'NULL at position ' || array_position(p_value, NULL),
            'no NULL element');
    END IF;
END
$$;


CREATE OR REPLACE FUNCTION "${schema}"._check_instant(p_argument text, p_value timestamptz) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_value IS NULL OR p_value < timestamptz '1970-01-01 00:00:00+00'
            OR p_value > timestamptz '9999-12-31 23:59:59+00' THEN
        PERFORM "${schema}"._invalid(p_argument, coalesce(p_value::text, 'null'), 'an instant between 1970 and 9999');
    END IF;
END
$$;


-- One JSON value within the size limit and without a \u0000 escape (PostgreSQL's json input has already checked
-- the syntax by the time a function sees the argument).
CREATE OR REPLACE FUNCTION "${schema}"._check_payload(p_argument text, p_payload json, p_max_bytes integer) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_text  text := p_payload::text;
    v_bytes integer;
BEGIN
    IF p_payload IS NULL THEN
        PERFORM "${schema}"._invalid(p_argument, 'null', 'JSON text (use ''null'' for a JSON null)', 'QU004');
    END IF;
    v_bytes := octet_length(v_text);
    IF v_bytes > p_max_bytes THEN
        PERFORM "${schema}"._invalid(p_argument, v_bytes || ' bytes', 'at most ' || p_max_bytes || ' bytes of UTF-8 JSON',
            'QU004');
    END IF;
    -- an escape is a backslash preceded by an even number of backslashes
    IF strpos(v_text, '\u0000') > 0 AND v_text ~ '(^|[^\\])(\\\\)*\\u0000' THEN
        PERFORM "${schema}"._invalid(p_argument, "${schema}"._shown(v_text),
            'valid JSON without a \u0000 escape, which cannot be stored', 'QU004');
    END IF;
END
$$;


-- Headers: a JSON object of at most p_max_count string values, names by the name rule and not the queue's own.
CREATE OR REPLACE FUNCTION "${schema}"._check_headers(p_argument text, p_headers jsonb, p_max_count integer) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_header record;
BEGIN
    IF p_headers IS NULL OR jsonb_typeof(p_headers) <> 'object' THEN
        PERFORM "${schema}"._invalid(p_argument, coalesce(p_headers::text, 'null'),
            'a JSON object of header names to string values, possibly empty');
    END IF;
    IF (SELECT count(*) FROM jsonb_object_keys(p_headers)) > p_max_count THEN
        PERFORM "${schema}"._invalid(p_argument, (SELECT count(*) FROM jsonb_object_keys(p_headers)) || ' headers',
            'at most ' || p_max_count);
    END IF;
    FOR v_header IN SELECT key, value FROM jsonb_each(p_headers) LOOP
        PERFORM "${schema}"._check_name(p_argument || ' name', v_header.key);
        IF lower(v_header.key) LIKE 'queue-%' THEN
            PERFORM "${schema}"._invalid(p_argument || ' name', "${schema}"._shown(v_header.key),
                'a name not starting with ''queue-'', which the queue reserves for the headers it sets itself');
        END IF;
        IF jsonb_typeof(v_header.value) <> 'string' OR length(v_header.value #>> '{}') > 1024 THEN
            PERFORM "${schema}"._invalid(p_argument || ' ' || v_header.key, v_header.value::text,
                'a string of at most 1024 characters');
        END IF;
    END LOOP;
END
$$;


-- Error texts are kept, not rejected: a blank one says so, a long one is cut (InputRules.errorText).
CREATE OR REPLACE FUNCTION "${schema}"._error_text(p_error text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_error IS NULL OR btrim(p_error, E' \t\n\r\f\v') = '' THEN 'no reason given'
                WHEN length(p_error) <= 8000 THEN p_error
                ELSE left(p_error, 8000 - length('...(cut)')) || '...(cut)'
           END
$$;


-- An instant as Java's Instant.toString() writes it (the queue-due-at header and the unique key of fired messages
-- must be the same text whichever ticker fired).
CREATE OR REPLACE FUNCTION "${schema}"._instant_text(p_at timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')
           || CASE WHEN f.micros = 0 THEN ''
                   WHEN f.micros % 1000 = 0 THEN '.' || lpad((f.micros / 1000)::text, 3, '0')
                   ELSE '.' || lpad(f.micros::text, 6, '0') END
           || 'Z'
    FROM (SELECT (extract(microseconds FROM p_at)::bigint % 1000000) AS micros) f
$$;


-- An instant as the verdicts show it: UTC, to the second.
CREATE OR REPLACE FUNCTION "${schema}"._shown_time(p_at timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC'
$$;


-- A duration as the verdicts show it, to the second.
CREATE OR REPLACE FUNCTION "${schema}"._shown_age(p_age interval) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT justify_interval(date_trunc('second', p_age))::text
$$;


-- The rule of _check_name as an expression (NULL for NULL), which the planner inlines into set-based checks.
CREATE OR REPLACE FUNCTION "${schema}"._is_name(p_value text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT p_value ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'
$$;


-- The rule of _check_text as an expression (NULL for NULL), which the planner inlines into the set-based checks of
-- arrays (_check_texts): a key, a worker, an actor.
CREATE OR REPLACE FUNCTION "${schema}"._is_text(p_value text, p_max_length integer) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT length(p_value) BETWEEN 1 AND p_max_length AND p_value !~ '[\x01-\x1f\x7f-\x9f]'
$$;


-- Every element of an array is a name (_check_name): one pass over the array, and the first offender named with its
-- position. Its shape (dimensions, cardinality, NULL elements) is _check_array's.
CREATE OR REPLACE FUNCTION "${schema}"._check_names(p_argument text, p_values text[]) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_at    bigint;
    v_value text;
BEGIN
    SELECT u.at, u.value INTO v_at, v_value
    FROM unnest(p_values) WITH ORDINALITY AS u(value, at)
    WHERE NOT coalesce("${schema}"._is_name(u.value), false)
    ORDER BY u.at
    LIMIT 1;
    IF v_at IS NOT NULL THEN
        PERFORM "${schema}"._check_name(p_argument || '[' || v_at || ']', v_value);
    END IF;
END
$$;


-- Each non-NULL element of a one-dimensional array by the rule of _check_text, in one statement: only a bad element
-- costs a call, which names it as p_argument[ordinal].
CREATE OR REPLACE FUNCTION "${schema}"._check_texts(p_argument text, p_values text[], p_max_length integer) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_bad record;
BEGIN
    SELECT u.value, u.ord INTO v_bad
    FROM unnest(p_values) WITH ORDINALITY AS u(value, ord)
    WHERE u.value IS NOT NULL AND NOT "${schema}"._is_text(u.value, p_max_length)
    ORDER BY u.ord
    LIMIT 1;
    IF FOUND THEN
        PERFORM "${schema}"._check_text(p_argument || '[' || v_bad.ord || ']', v_bad.value, p_max_length);
    END IF;
END
$$;


-- Every element that is not NULL lies in p_min..p_max (_check_range), in one pass. NULL elements are _check_array's.
-- Integer arrays are passed as bigint[] (an exact cast).
CREATE OR REPLACE FUNCTION "${schema}"._check_ranges(p_argument text, p_values bigint[], p_min bigint, p_max bigint,
                                                     p_expected text)
RETURNS void LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_at    bigint;
    v_value bigint;
BEGIN
    SELECT u.at, u.value INTO v_at, v_value
    FROM unnest(p_values) WITH ORDINALITY AS u(value, at)
    WHERE u.value < p_min OR u.value > p_max
    ORDER BY u.at
    LIMIT 1;
    IF v_at IS NOT NULL THEN
        PERFORM "${schema}"._check_range(p_argument || '[' || v_at || ']', v_value, p_min, p_max, p_expected);
    END IF;
END
$$;


-- The caller's clock, which the engine_ gates take as p_now (NULL: the database's, statement_timestamp()).
CREATE OR REPLACE FUNCTION "${schema}"._check_engine_now(p_now timestamptz) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_now IS NOT NULL THEN
        PERFORM "${schema}"._check_instant('p_now', p_now);
    END IF;
END
$$;


-- Who an engine_ gate records as acting (the Java queue's actor): NULL for nobody, else as set_actor takes it.
CREATE OR REPLACE FUNCTION "${schema}"._check_engine_actor(p_argument text, p_actor text) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_actor IS NOT NULL THEN
        PERFORM "${schema}"._check_text(p_argument, p_actor, 128);
    END IF;
END
$$;


-- Each payload of a one-dimensional array by the rule of _check_payload, in one statement: only the payloads that
-- may break it (NULL, too large, holding the text \u0000, which may also be an escaped backslash) cost a call, which
-- names the first bad one as p_argument[ordinal].
CREATE OR REPLACE FUNCTION "${schema}"._check_payloads(p_argument text, p_payloads json[], p_max_bytes integer)
RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_suspect record;
BEGIN
    FOR v_suspect IN
        SELECT u.payload, u.ord
        FROM unnest(p_payloads) WITH ORDINALITY AS u(payload, ord)
        WHERE u.payload IS NULL OR octet_length(u.payload::text) > p_max_bytes OR strpos(u.payload::text, '\u0000') > 0
        ORDER BY u.ord
    LOOP
        PERFORM "${schema}"._check_payload(p_argument || '[' || v_suspect.ord || ']', v_suspect.payload, p_max_bytes);
    END LOOP;
END
$$;
