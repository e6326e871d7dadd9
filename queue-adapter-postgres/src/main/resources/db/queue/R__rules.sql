-- Two rules of the Java domain as SQL functions, so that the database applies them with no Java process running:
--
--   cron_next_run(expression, time zone, after)   the next fire time of a schedule's cron expression, exactly as
--                                                   the Java side computes it with cron-utils (DueTimes)
--   backoff_delay(attempt, base, cap, multiplier,   the wait before the next attempt, exactly as BackoffSchedule
--                 jitter, random)                   computes it
--
-- Differential tests on thousands of seeded random cases keep both equal to the Java code (CronNextRunDifferentialTest
-- and BackoffDelayDifferentialTest). cron_next_run follows cron-utils 9.2.1 step by step rather than a textbook cron,
-- because the two must agree on every input, quirks included: each quirk is described where it is implemented. The
-- schedule functions and nack call them. Nothing here reads or writes a table, and invalid arguments raise QU001.


-- Raises QU001 naming the argument, what was expected and the value received (p_shown, already quoted as needed).
-- Volatile, as everything that raises must be: the planner runs an immutable function with constant arguments while
-- it prepares a statement, also where the call sits in a branch that is never taken.
CREATE OR REPLACE FUNCTION "${schema}"._rules_invalid(p_argument text, p_expected text, p_shown text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    -- both may quote the value: cut like _shown, so that the message stays readable whatever its length
    RAISE EXCEPTION USING ERRCODE = 'QU001', COLUMN = p_argument,
        MESSAGE = format('invalid %s: expected %s, got: %s', p_argument,
                         CASE WHEN length(p_expected) <= 400 THEN p_expected
                              ELSE left(p_expected, 400) || '...(' || length(p_expected) || ' chars)' END,
                         CASE WHEN length(p_shown) <= 202 THEN p_shown
                              ELSE left(p_shown, 201) || '...(' || length(p_shown) || ' chars)' END);
END
$$;


-- Java's String.split, which cron-utils parses with: trailing empty strings are dropped, so "1-2-" reads as "1-2".
CREATE OR REPLACE FUNCTION "${schema}"._cron_split(p_text text, p_separator text) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_parts text[] := string_to_array(p_text, p_separator);
BEGIN
    WHILE cardinality(v_parts) > 0 AND v_parts[cardinality(v_parts)] = '' LOOP
        v_parts := v_parts[1:cardinality(v_parts) - 1];
    END LOOP;
    RETURN v_parts;
END
$$;


-- Raises QU001 for an invalid cron expression, naming it and what was expected.
CREATE OR REPLACE FUNCTION "${schema}"._cron_invalid(p_expression text, p_expected text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "${schema}"._rules_invalid('p_expression', p_expected, coalesce(quote_literal(p_expression), 'null'));
END
$$;


-- A number of a field as cron-utils reads it: a name where the field has names (JAN-DEC, MON-SUN with SUN = 7) or
-- a decimal integer (Java's Integer.parseInt, so "+5" and "05" are 5). With p_sunday_is_zero, 7 in the day of
-- week becomes 0, as cron-utils maps single values and steps but not the ends of ranges.
CREATE OR REPLACE FUNCTION "${schema}"._cron_number(p_expression text, p_text text, p_field text, p_sunday_is_zero boolean)
RETURNS integer LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_value integer;
BEGIN
    IF p_field = 'month' THEN
        v_value := array_position(ARRAY['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'], p_text);
    ELSIF p_field = 'day of week' THEN
        v_value := array_position(ARRAY['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'], p_text);
    END IF;
    IF v_value IS NULL THEN
        IF p_text !~ '^\+?[0-9]+$' OR ltrim(p_text, '+0') ~ '^[0-9]{11,}$'
                OR ltrim(p_text, '+')::numeric > 2147483647 THEN
            PERFORM "${schema}"._cron_invalid(p_expression, format('a number in the %s field, not %s', p_field, quote_literal(p_text)));
        END IF;
        v_value := ltrim(p_text, '+')::integer;
    END IF;
    IF p_sunday_is_zero AND p_field = 'day of week' AND v_value = 7 THEN
        v_value := 0;
    END IF;
    RETURN v_value;
END
$$;


-- One element of a field (a field without commas, or one item of a list), parsed and validated as cron-utils'
-- FieldParser and ValidationFieldExpressionVisitor do. Kinds: 'always' (*), 'question' (?), 'on' (a),
-- 'between' (a to b, as written), 'every' (from a to b by step, the bounds as cron-utils derives them for a
-- step over *, over a value or over a range) and 'hash' (weekday a, occurrence b).
CREATE OR REPLACE FUNCTION "${schema}"._cron_parse_element(p_expression text, p_part text, p_field text, p_six_fields boolean,
        OUT kind text, OUT a integer, OUT b integer, OUT step integer)
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_low integer := CASE p_field WHEN 'day of month' THEN 1 WHEN 'month' THEN 1 ELSE 0 END;
    v_high integer := CASE p_field WHEN 'second' THEN 59 WHEN 'minute' THEN 59 WHEN 'hour' THEN 23
                                   WHEN 'day of month' THEN 31 WHEN 'month' THEN 12 ELSE 7 END;
    -- In 6 fields (cron-utils' Spring definition) only seconds, minutes and hours reject backward ranges.
    v_strict boolean := NOT p_six_fields OR p_field IN ('second', 'minute', 'hour');
    v_question_allowed boolean := p_six_fields AND p_field IN ('day of month', 'day of week');
    v_hash_allowed boolean := p_six_fields AND p_field = 'day of week';
    v_pieces text[];
    v_range text[];
    v_inner text;
BEGIN
    step := NULL;
    IF p_part !~ '[/-]' THEN
        IF strpos(p_part, '?') > 0 AND NOT v_question_allowed THEN
            PERFORM "${schema}"._cron_invalid(p_expression, format('no ? in the %s field', p_field));
        END IF;
        IF p_part = '*' THEN
            kind := 'always';
        ELSIF p_part = '?' THEN
            kind := 'question';
        ELSIF strpos(p_part, '#') > 0 THEN
            IF NOT v_hash_allowed THEN
                PERFORM "${schema}"._cron_invalid(p_expression, format('no # in the %s field', p_field));
            END IF;
            v_pieces := "${schema}"._cron_split(p_part, '#');
            IF cardinality(v_pieces) < 2 OR v_pieces[1] = '' THEN
                PERFORM "${schema}"._cron_invalid(p_expression, format('weekday#n in the %s field, not %s', p_field, quote_literal(p_part)));
            END IF;
            -- cron-utils reads the first two parts and ignores any further "#..."
            kind := 'hash';
            a := "${schema}"._cron_number(p_expression, v_pieces[1], p_field, true);
            b := "${schema}"._cron_number(p_expression, v_pieces[2], p_field, true);
        ELSE
            kind := 'on';
            a := "${schema}"._cron_number(p_expression, p_part, p_field, true);
        END IF;
    ELSE
        v_range := "${schema}"._cron_split(p_part, '-');
        IF strpos(p_part, '-') > 0 AND cardinality(v_range) <> 2 THEN
            PERFORM "${schema}"._cron_invalid(p_expression, format('a range a-b in the %s field, not %s', p_field, quote_literal(p_part)));
        END IF;
        IF cardinality(v_range) = 2 THEN
            IF v_range[1] = '' OR v_range[2] = '' THEN
                PERFORM "${schema}"._cron_invalid(p_expression, format('a range a-b in the %s field, not %s', p_field, quote_literal(p_part)));
            END IF;
            a := "${schema}"._cron_number(p_expression, v_range[1], p_field, false);
            IF strpos(v_range[2], '/') > 0 THEN
                v_pieces := "${schema}"._cron_split(v_range[2], '/');
                IF cardinality(v_pieces) < 2 THEN
                    PERFORM "${schema}"._cron_invalid(p_expression, format('a step after / in the %s field, not %s', p_field, quote_literal(p_part)));
                END IF;
                kind := 'every';
                b := "${schema}"._cron_number(p_expression, v_pieces[1], p_field, false);
                -- cron-utils reads a step after a range like a value (so 7 becomes 0 in the day of week)
                step := "${schema}"._cron_number(p_expression, v_pieces[2], p_field, true);
                v_inner := 'between';
            ELSE
                kind := 'between';
                b := "${schema}"._cron_number(p_expression, v_range[2], p_field, false);
            END IF;
        ELSE
            v_pieces := "${schema}"._cron_split(p_part, '/');
            IF cardinality(v_pieces) <> 2 THEN
                PERFORM "${schema}"._cron_invalid(p_expression, format('a step a/n in the %s field, not %s', p_field, quote_literal(p_part)));
            END IF;
            IF v_pieces[1] = '*' AND v_pieces[2] = '1' THEN
                kind := 'always';
            ELSE
                IF v_pieces[2] !~ '^\+?[0-9]+$' THEN
                    PERFORM "${schema}"._cron_invalid(p_expression, format('a number after / in the %s field, not %s', p_field, quote_literal(p_part)));
                END IF;
                kind := 'every';
                step := "${schema}"._cron_number(p_expression, v_pieces[2], 'step', false);
                IF v_pieces[1] IN ('*', '') THEN
                    v_inner := 'always';
                ELSE
                    v_inner := 'on';
                    a := "${schema}"._cron_number(p_expression, v_pieces[1], p_field, true);
                END IF;
            END IF;
        END IF;
    END IF;

    IF kind IN ('on', 'hash') OR v_inner = 'on' THEN
        IF a NOT BETWEEN v_low AND v_high THEN
            PERFORM "${schema}"._cron_invalid(p_expression, format('%s to %s in the %s field, not %s', v_low, v_high, p_field, a));
        END IF;
    END IF;
    IF kind = 'hash' AND b NOT BETWEEN v_low AND v_high THEN
        PERFORM "${schema}"._cron_invalid(p_expression, format('%s to %s after # in the %s field, not %s', v_low, v_high, p_field, b));
    END IF;
    IF kind = 'between' OR v_inner = 'between' THEN
        IF a NOT BETWEEN v_low AND v_high OR b NOT BETWEEN v_low AND v_high THEN
            PERFORM "${schema}"._cron_invalid(p_expression, format('%s to %s in the %s field, not %s', v_low, v_high, p_field, quote_literal(p_part)));
        END IF;
        IF v_strict AND a > b THEN
            PERFORM "${schema}"._cron_invalid(p_expression, format('a range from low to high in the %s field, not %s', p_field, quote_literal(p_part)));
        END IF;
    END IF;
    IF kind = 'every' THEN
        IF step <= 0 OR step > v_high - v_low + 1 OR step > v_high THEN
            PERFORM "${schema}"._cron_invalid(p_expression, format('a step from 1 to %s in the %s field, not %s', least(v_high, v_high - v_low + 1), p_field, step));
        END IF;
        -- the bounds cron-utils steps between (EveryFieldValueGenerator)
        IF v_inner = 'always' THEN
            a := v_low;
            b := v_high;
        ELSIF v_inner = 'on' THEN
            b := v_high;
        ELSE
            a := greatest(v_low, a);
            b := least(v_high, b);
        END IF;
    END IF;
END
$$;


-- One field parsed into the part of _cron_fields it fills: mask (the value set), wrapped_step_day, kind and
-- nth_week_days. The value sets follow cron-utils' value generators.
CREATE OR REPLACE FUNCTION "${schema}"._cron_parse_field(p_expression text, p_token text, p_field text, p_six_fields boolean,
        OUT mask bigint, OUT wrapped_step_day integer, OUT kind text, OUT nth_week_days integer[])
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_parts text[];
    v_list boolean;
    v_element record;
    v_low integer := CASE p_field WHEN 'day of month' THEN 1 WHEN 'month' THEN 1 ELSE 0 END;
    v_high integer := CASE p_field WHEN 'second' THEN 59 WHEN 'minute' THEN 59 WHEN 'hour' THEN 23
                                   WHEN 'day of month' THEN 31 WHEN 'month' THEN 12 ELSE 7 END;
    v_value integer;
    v_week_day_found boolean;
BEGIN
    mask := 0;
    kind := 'other';
    nth_week_days := '{}';
    IF p_token ~ '[/,-]' THEN
        v_parts := "${schema}"._cron_split(p_token, ',');
    END IF;
    v_list := cardinality(v_parts) > 1;
    IF NOT coalesce(v_list, false) THEN
        v_list := false;
        v_parts := ARRAY[p_token];
    END IF;
    FOR i IN 1 .. cardinality(v_parts) LOOP
        SELECT * INTO v_element FROM "${schema}"._cron_parse_element(p_expression, v_parts[i], p_field, p_six_fields);
        IF NOT v_list AND v_element.kind IN ('always', 'question') THEN
            kind := CASE v_element.kind WHEN 'always' THEN 'star' ELSE 'question' END;
        END IF;
        IF p_field = 'day of week' THEN
            -- Weekdays are 0 (Sunday) to 6, and 7 is Sunday again wherever cron-utils left it (range ends, steps).
            CASE v_element.kind
                WHEN 'always' THEN
                    mask := 127;
                WHEN 'on' THEN
                    mask := mask | (1 << (v_element.a % 7));
                WHEN 'between' THEN
                    -- a backward range wraps around the week (BetweenDayOfWeekValueGenerator)
                    FOR v_value IN v_element.a .. CASE WHEN v_element.a <= v_element.b THEN v_element.b ELSE v_element.b + 8 END LOOP
                        mask := mask | (1 << (v_value % 8 % 7));
                    END LOOP;
                WHEN 'every' THEN
                    v_week_day_found := false;
                    v_value := v_element.a;
                    WHILE v_value <= v_element.b LOOP
                        mask := mask | (1 << (v_value % 7));
                        v_week_day_found := true;
                        v_value := v_value + v_element.step;
                    END LOOP;
                    IF NOT v_week_day_found THEN
                        -- cron-utils accepts such a step over a backward range but fails on every use of it
                        PERFORM "${schema}"._cron_invalid(p_expression, format('a step over a range that holds a weekday, not %s', quote_literal(v_parts[i])));
                    END IF;
                WHEN 'hash' THEN
                    nth_week_days := nth_week_days || ARRAY[v_element.a % 7, v_element.b];
                ELSE
                    -- ? in a list of weekdays adds no day
                    NULL;
            END CASE;
        ELSE
            CASE v_element.kind
                WHEN 'always' THEN
                    FOR v_value IN v_low .. v_high LOOP
                        mask := mask | (1::bigint << v_value);
                    END LOOP;
                WHEN 'on' THEN
                    mask := mask | (1::bigint << v_element.a);
                WHEN 'between' THEN
                    IF v_element.a <= v_element.b THEN
                        FOR v_value IN v_element.a .. v_element.b LOOP
                            mask := mask | (1::bigint << v_value);
                        END LOOP;
                    ELSIF NOT v_list THEN
                        -- cron-utils' BetweenFieldValueGenerator yields only the start of a lone backward range
                        -- (and nothing for one in a list)
                        mask := mask | (1::bigint << v_element.a);
                    END IF;
                WHEN 'every' THEN
                    IF v_element.a <= v_element.b THEN
                        v_value := v_element.a;
                        WHILE v_value <= v_element.b LOOP
                            mask := mask | (1::bigint << v_value);
                            v_value := v_value + v_element.step;
                        END LOOP;
                    ELSIF NOT v_list THEN
                        -- EveryFieldValueGenerator yields only the start of a lone backward range with a step,
                        -- and only when it lies strictly between the first and last value of the field
                        IF p_field = 'day of month' THEN
                            wrapped_step_day := v_element.a;
                        ELSIF v_element.a > v_low AND v_element.a < v_high THEN
                            mask := mask | (1::bigint << v_element.a);
                        END IF;
                    END IF;
                ELSE
                    IF v_list THEN
                        -- cron-utils accepts ? in a list of days of month but fails on every use of it
                        PERFORM "${schema}"._cron_invalid(p_expression, format('no ? in a list in the %s field', p_field));
                    END IF;
            END CASE;
        END IF;
    END LOOP;
    IF p_field NOT IN ('day of month', 'day of week') AND mask = 0 THEN
        -- cron-utils builds no execution time for a field without values
        PERFORM "${schema}"._cron_invalid(p_expression, format('a %s field with at least one value, not %s', p_field, quote_literal(p_token)));
    END IF;
END
$$;


-- The first value after p_after up to p_high whose bit is set in p_mask, or null.
CREATE OR REPLACE FUNCTION "${schema}"._cron_next_value(p_mask bigint, p_after integer, p_high integer) RETURNS integer
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    FOR v_value IN p_after + 1 .. p_high LOOP
        IF (p_mask >> v_value) & 1 = 1 THEN
            RETURN v_value;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;


-- The days of a month on which the expression fires, as a mask of bits 1 to 31 (cron-utils' generateDays).
CREATE OR REPLACE FUNCTION "${schema}"._cron_month_days(p_fields "${schema}"._cron_fields, p_year integer, p_month integer)
RETURNS bigint LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_first date := make_date(p_year, p_month, 1);
    v_length integer := date_part('day', v_first + interval '1 month' - interval '1 day');
    v_first_weekday integer := date_part('dow', v_first);
    v_month_days bigint;
    v_week_days bigint := 0;
    v_day integer;
BEGIN
    v_month_days := p_fields.month_days & ((1::bigint << (v_length + 1)) - 2);
    IF p_fields.wrapped_step_day > 1 AND p_fields.wrapped_step_day < v_length THEN
        v_month_days := v_month_days | (1::bigint << p_fields.wrapped_step_day);
    END IF;
    FOR v_day IN 1 .. v_length LOOP
        IF (p_fields.week_days >> ((v_first_weekday + v_day - 1) % 7)) & 1 = 1 THEN
            v_week_days := v_week_days | (1::bigint << v_day);
        END IF;
    END LOOP;
    FOR v_pair IN 1 .. cardinality(p_fields.nth_week_days) / 2 LOOP
        v_day := (p_fields.nth_week_days[2 * v_pair] - 1) * 7 + 1
                 + (p_fields.nth_week_days[2 * v_pair - 1] - v_first_weekday + 7) % 7;
        IF v_day BETWEEN 1 AND v_length THEN
            v_week_days := v_week_days | (1::bigint << v_day);
        END IF;
    END LOOP;
    IF p_fields.month_day_kind = 'star' AND p_fields.week_day_kind = 'star' THEN
        RETURN v_month_days;
    ELSIF p_fields.both_days THEN
        RETURN CASE WHEN p_fields.month_day_kind = 'question' THEN v_week_days
                    WHEN p_fields.week_day_kind = 'question' THEN v_month_days
                    ELSE v_month_days & v_week_days END;
    ELSE
        -- Only a field written * counts as unrestricted here (cron-utils checks for its Always expression), so
        -- "0 0 */2 * 1" fires on odd days and on Mondays, unlike Vixie cron.
        RETURN CASE WHEN p_fields.month_day_kind = 'star' THEN v_week_days
                    WHEN p_fields.week_day_kind = 'star' THEN v_month_days
                    ELSE v_month_days | v_week_days END;
    END IF;
END
$$;


-- The instant of a local date-time in the time zone set for the session (or at a fixed offset), resolved as
-- java.time resolves a ZonedDateTime from a changed local date-time: in an overlap the preferred (previous)
-- offset when it is one of the two, else the earlier one, and in a gap the local time moved forward by the
-- length of the gap.
CREATE OR REPLACE FUNCTION "${schema}"._cron_resolve(p_local timestamp, p_preferred_offset integer, p_fixed_offset integer)
RETURNS timestamptz LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_as_utc timestamptz := p_local AT TIME ZONE 'UTC';
    v_before integer;
    v_after integer;
BEGIN
    IF p_fixed_offset IS NOT NULL THEN
        RETURN v_as_utc - p_fixed_offset * interval '1 second';
    END IF;
    v_before := date_part('timezone', v_as_utc - interval '1 day');
    v_after := date_part('timezone', v_as_utc + interval '1 day');
    IF v_before <> v_after
            AND date_part('timezone', v_as_utc - v_after * interval '1 second') = v_after
            AND (p_preferred_offset = v_after
                 OR date_part('timezone', v_as_utc - v_before * interval '1 second') <> v_before) THEN
        RETURN v_as_utc - v_after * interval '1 second';
    END IF;
    -- Valid with the offset before a transition, or inside a gap, where reading it with the offset before moves
    -- it forward by the length of the gap.
    RETURN v_as_utc - v_before * interval '1 second';
END
$$;


-- A ZonedDateTime operation of cron-utils on the instant p_time: the local date-time changed (p_change, with
-- p_value), then resolved with the offset p_time had.
CREATE OR REPLACE FUNCTION "${schema}"._cron_change(p_time timestamptz, p_fixed_offset integer, p_change text, p_value integer)
RETURNS timestamptz LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_offset integer := coalesce(p_fixed_offset, date_part('timezone', p_time)::integer);
    v_local timestamp := (p_time AT TIME ZONE 'UTC') + v_offset * interval '1 second';
BEGIN
    v_local := CASE p_change
        WHEN 'truncate to day' THEN date_trunc('day', v_local)
        WHEN 'truncate to second' THEN date_trunc('second', v_local)
        -- adding months keeps the day within the month, as LocalDateTime.withMonth and plusMonths do
        WHEN 'month' THEN v_local + (p_value - date_part('month', v_local)::integer) * interval '1 month'
        WHEN 'day' THEN v_local + (p_value - date_part('day', v_local)::integer) * interval '1 day'
        WHEN 'add months' THEN v_local + p_value * interval '1 month'
        WHEN 'add years' THEN v_local + p_value * interval '1 year'
        WHEN 'time of day' THEN date_trunc('day', v_local) + p_value * interval '1 second'
    END;
    RETURN "${schema}"._cron_resolve(v_local, v_offset, p_fixed_offset);
END
$$;


-- cron-utils' nextClosestMatch: p_from itself when it matches, else the first match after it, found field by
-- field from the month down to the second. Null when there is none within 100 years (cron-utils gives up there).
CREATE OR REPLACE FUNCTION "${schema}"._cron_closest(p_fields "${schema}"._cron_fields, p_fixed_offset integer, p_from timestamptz)
RETURNS timestamptz LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_time timestamptz := p_from;
    v_offset integer;
    v_local timestamp;
    v_start_year integer;
    v_year integer;
    v_month integer;
    v_day integer;
    v_next integer;
    v_days bigint;
    v_days_month integer := -1;
    v_lowest_time_of_day integer;
    v_unit text;
    v_mask bigint;
    v_step interval;
    v_candidate timestamptz;
    v_candidate_offset integer;
    v_candidate_local timestamp;
    v_found boolean;
BEGIN
    v_lowest_time_of_day := "${schema}"._cron_next_value(p_fields.hours, -1, 23) * 3600
                          + "${schema}"._cron_next_value(p_fields.minutes, -1, 59) * 60
                          + "${schema}"._cron_next_value(p_fields.seconds, -1, 59);
    FOR v_iteration IN 1 .. 100000 LOOP
        v_offset := coalesce(p_fixed_offset, date_part('timezone', v_time)::integer);
        v_local := (v_time AT TIME ZONE 'UTC') + v_offset * interval '1 second';
        v_year := date_part('year', v_local);
        IF v_iteration = 1 THEN
            v_start_year := v_year;
        ELSIF v_year - v_start_year > 100 THEN
            RETURN NULL;
        END IF;
        v_month := date_part('month', v_local);
        IF (p_fields.months >> v_month) & 1 = 0 THEN
            v_next := "${schema}"._cron_next_value(p_fields.months, v_month, 12);
            IF v_next IS NULL THEN
                v_time := "${schema}"._cron_change(v_time, p_fixed_offset, 'truncate to day', 0);
                v_time := "${schema}"._cron_change(v_time, p_fixed_offset, 'month', 1);
                v_time := "${schema}"._cron_change(v_time, p_fixed_offset, 'day', 1);
                v_time := "${schema}"._cron_change(v_time, p_fixed_offset, 'add years', 1);
            ELSE
                v_days := "${schema}"._cron_month_days(p_fields, v_year, v_next);
                IF v_days = 0 THEN
                    -- cron-utils moves to the month after the current one here, not after the one it found
                    v_time := "${schema}"._cron_change(v_time, p_fixed_offset, 'truncate to day', 0);
                    v_time := "${schema}"._cron_change(v_time, p_fixed_offset, 'add months', 1);
                    v_time := "${schema}"._cron_change(v_time, p_fixed_offset, 'day', 1);
                ELSE
                    v_time := "${schema}"._cron_change(v_time, p_fixed_offset, 'truncate to second', 0);
                    v_time := "${schema}"._cron_change(v_time, p_fixed_offset, 'month', v_next);
                    v_time := "${schema}"._cron_change(v_time, p_fixed_offset, 'day', "${schema}"._cron_next_value(v_days, 0, 31));
                    v_time := "${schema}"._cron_change(v_time, p_fixed_offset, 'time of day', v_lowest_time_of_day);
                END IF;
            END IF;
            CONTINUE;
        END IF;
        IF v_year * 12 + v_month <> v_days_month THEN
            v_days := "${schema}"._cron_month_days(p_fields, v_year, v_month);
            v_days_month := v_year * 12 + v_month;
        END IF;
        IF v_days = 0 THEN
            v_time := "${schema}"._cron_change(v_time, p_fixed_offset, 'truncate to day', 0);
            v_time := "${schema}"._cron_change(v_time, p_fixed_offset, 'add months', 1);
            v_time := "${schema}"._cron_change(v_time, p_fixed_offset, 'day', 1);
            CONTINUE;
        END IF;
        v_day := date_part('day', v_local);
        IF (v_days >> v_day) & 1 = 0 THEN
            v_next := "${schema}"._cron_next_value(v_days, v_day, 31);
            IF v_next IS NULL THEN
                v_time := "${schema}"._cron_change(v_time, p_fixed_offset, 'truncate to day', 0);
                v_time := "${schema}"._cron_change(v_time, p_fixed_offset, 'day', 1);
                v_time := "${schema}"._cron_change(v_time, p_fixed_offset, 'add months', 1);
            ELSE
                v_time := "${schema}"._cron_change(v_time, p_fixed_offset, 'truncate to second', 0);
                v_time := "${schema}"._cron_change(v_time, p_fixed_offset, 'day', v_next);
                v_time := "${schema}"._cron_change(v_time, p_fixed_offset, 'time of day', v_lowest_time_of_day);
            END IF;
            CONTINUE;
        END IF;
        IF (p_fields.hours >> date_part('hour', v_local)::integer) & 1 = 0 THEN
            v_unit := 'hour';
            v_mask := p_fields.hours;
        ELSIF (p_fields.minutes >> date_part('minute', v_local)::integer) & 1 = 0 THEN
            v_unit := 'minute';
            v_mask := p_fields.minutes;
        ELSIF (p_fields.seconds >> floor(date_part('second', v_local))::integer) & 1 = 0 THEN
            v_unit := 'second';
            v_mask := p_fields.seconds;
        ELSE
            RETURN v_time;
        END IF;
        -- getNextPotentialValue: one unit at a time in instants (so a clock change skips or repeats local
        -- values), for at most twice the range of the field, then truncated in local time.
        v_step := ('1 ' || v_unit)::interval;
        v_candidate := v_time;
        v_found := false;
        FOR v_attempt IN 1 .. CASE v_unit WHEN 'hour' THEN 46 ELSE 118 END LOOP
            v_candidate := v_candidate + v_step;
            v_candidate_offset := coalesce(p_fixed_offset, date_part('timezone', v_candidate)::integer);
            v_candidate_local := (v_candidate AT TIME ZONE 'UTC') + v_candidate_offset * interval '1 second';
            IF (v_mask >> floor(date_part(v_unit, v_candidate_local))::integer) & 1 = 1 THEN
                v_time := "${schema}"._cron_resolve(date_trunc(v_unit, v_candidate_local), v_candidate_offset, p_fixed_offset);
                v_found := true;
                EXIT;
            END IF;
        END LOOP;
        IF NOT v_found THEN
            RETURN NULL;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;


-- cron-utils' nextExecution: the first match strictly after p_after.
CREATE OR REPLACE FUNCTION "${schema}"._cron_next_execution(p_fields "${schema}"._cron_fields, p_fixed_offset integer, p_after timestamptz)
RETURNS timestamptz LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_match timestamptz := "${schema}"._cron_closest(p_fields, p_fixed_offset, p_after);
    v_following timestamptz;
BEGIN
    IF v_match = p_after THEN
        -- The search restarts a second later, keeping any fraction of a second of p_after.
        v_match := "${schema}"._cron_closest(p_fields, p_fixed_offset, p_after + interval '1 second');
        IF v_match IS NOT NULL AND p_fixed_offset IS NULL
                AND date_part('timezone', v_match) < date_part('timezone', p_after) THEN
            -- The clocks went back in between. cron-utils (its issue 446) skips the repeated hour when the
            -- expression fires less often than hourly, so such a time fires once.
            v_following := "${schema}"._cron_closest(p_fields, p_fixed_offset, v_match + interval '1 second');
            IF v_following >= v_match + interval '2 hours' THEN
                v_match := "${schema}"._cron_closest(p_fields, p_fixed_offset, p_after + interval '1 second' + interval '1 hour');
            END IF;
        END IF;
    END IF;
    RETURN v_match;
END
$$;


-- The time zone argument as java.time's ZoneId.of reads it: an offset ("Z", "+02:00", "-0530", ...), such an
-- offset after UTC, GMT or UT, one of those three alone, or a region of the time zone database
-- ("Europe/Berlin"). Returns the offset in seconds, or null for a region, which it sets as the session's time
-- zone (the caller's SET clause restores the previous one when it returns).
CREATE OR REPLACE FUNCTION "${schema}"._cron_time_zone(p_time_zone text) RETURNS integer
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_expected constant text := 'a time zone ID such as Europe/Berlin, UTC or +02:00';
    v_offset text;
    v_digits text;
    v_hours integer;
    v_minutes integer;
    v_seconds integer;
BEGIN
    IF p_time_zone IS NULL THEN
        PERFORM "${schema}"._rules_invalid('p_time_zone', v_expected, 'null');
    END IF;
    IF length(p_time_zone) <= 1 OR left(p_time_zone, 1) IN ('+', '-') THEN
        v_offset := p_time_zone;
    ELSIF p_time_zone IN ('UTC', 'GMT', 'UT') THEN
        RETURN 0;
    ELSIF p_time_zone ~ '^(UTC|GMT|UT)[+-]' THEN
        v_offset := substr(p_time_zone, CASE WHEN left(p_time_zone, 3) IN ('UTC', 'GMT') THEN 4 ELSE 3 END);
    ELSE
        IF p_time_zone !~ '^[A-Za-z][A-Za-z0-9~/._+-]+$' THEN
            PERFORM "${schema}"._rules_invalid('p_time_zone', v_expected, quote_literal(p_time_zone));
        END IF;
        BEGIN
            PERFORM set_config('TimeZone', p_time_zone, true);
        EXCEPTION WHEN invalid_parameter_value THEN
            PERFORM "${schema}"._rules_invalid('p_time_zone', v_expected, quote_literal(p_time_zone));
        END;
        -- PostgreSQL finds a zone whatever the case of its name and reads other text as a POSIX rule (such as
        -- "ABC5"), java.time accepts neither. Only names with digits can be POSIX rules, so only they need the
        -- slower look-up in the list of zones.
        IF current_setting('TimeZone') <> p_time_zone
                OR (p_time_zone ~ '[0-9]' AND NOT EXISTS (SELECT FROM pg_timezone_names WHERE name = p_time_zone)) THEN
            PERFORM "${schema}"._rules_invalid('p_time_zone', v_expected, quote_literal(p_time_zone));
        END IF;
        RETURN NULL;
    END IF;
    IF v_offset = 'Z' THEN
        RETURN 0;
    END IF;
    -- ZoneOffset.of: +h, +hh, +hhmm, +hh:mm, +hhmmss or +hh:mm:ss, at most 18 hours
    IF v_offset !~ '^[+-]([0-9]|[0-9]{2}|[0-9]{4}|[0-9]{2}:[0-9]{2}|[0-9]{6}|[0-9]{2}:[0-9]{2}:[0-9]{2})$' THEN
        PERFORM "${schema}"._rules_invalid('p_time_zone', v_expected, quote_literal(p_time_zone));
    END IF;
    v_digits := replace(substr(v_offset, 2), ':', '');
    IF length(v_digits) = 1 THEN
        v_digits := '0' || v_digits;
    END IF;
    v_hours := substr(v_digits, 1, 2)::integer;
    v_minutes := coalesce(nullif(substr(v_digits, 3, 2), ''), '0')::integer;
    v_seconds := coalesce(nullif(substr(v_digits, 5, 2), ''), '0')::integer;
    IF v_hours > 18 OR v_minutes > 59 OR v_seconds > 59 OR (v_hours = 18 AND v_minutes + v_seconds > 0) THEN
        PERFORM "${schema}"._rules_invalid('p_time_zone', v_expected, quote_literal(p_time_zone));
    END IF;
    RETURN (v_hours * 3600 + v_minutes * 60 + v_seconds) * CASE left(v_offset, 1) WHEN '-' THEN -1 ELSE 1 END;
END
$$;


-- The first fire time of a cron expression strictly after p_after, in the time zone p_time_zone, or null when it
-- has none: exactly what the Java side computes (DueTimes, through cron-utils). 5 fields are Unix cron (minute
-- hour day-of-month month day-of-week), 6 fields put seconds first. Raises QU001 for an invalid argument.
CREATE OR REPLACE FUNCTION "${schema}".cron_next_run(p_expression text, p_time_zone text, p_after timestamptz)
RETURNS timestamptz LANGUAGE plpgsql STABLE
-- restores the caller's time zone when the function returns, whatever it set in between
SET "TimeZone" = 'UTC'
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
DECLARE
    v_trimmed text;
    v_tokens text[];
    v_field_count integer;
    v_six_fields boolean;
    v_alternatives text[];
    v_alternative_count integer := 1;
    v_alternative_tokens text[];
    v_pieces text[];
    v_parsed "${schema}"._cron_fields;
    v_all_parsed "${schema}"._cron_fields[] := '{}'::"${schema}"._cron_fields[];
    v_first integer;
    v_field record;
    v_fixed_offset integer;
    v_next timestamptz;
    v_result timestamptz;
BEGIN
    IF p_expression IS NULL OR p_expression ~ '^\s*$' THEN
        PERFORM "${schema}"._cron_invalid(p_expression,
            'a cron expression of 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first)');
    END IF;
    -- the parse costs about 15 microseconds per list element
    IF length(p_expression) > 1000 THEN
        PERFORM "${schema}"._cron_invalid(p_expression,
            format('a cron expression of at most 1000 characters, but it has %s', length(p_expression)));
    END IF;
    -- Java's String.trim and split on whitespace, as DueTimes counts the fields
    v_trimmed := regexp_replace(p_expression, '^[\x01-\x20]+|[\x01-\x20]+$', '', 'g');
    v_tokens := regexp_split_to_array(v_trimmed, '\s+');
    v_field_count := cardinality(v_tokens);
    IF v_field_count NOT IN (5, 6) THEN
        PERFORM "${schema}"._cron_invalid(p_expression, format(
            '5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first), but it has %s', v_field_count));
    END IF;
    v_six_fields := v_field_count = 6;
    IF left(v_trimmed, 1) = '@' THEN
        PERFORM "${schema}"._cron_invalid(p_expression, 'fields, not a nickname such as @daily');
    END IF;
    IF strpos(v_trimmed, '||') > 0 THEN
        -- cron-utils would split the expression at || into expressions of fewer fields each
        PERFORM "${schema}"._cron_invalid(p_expression, 'no || (use | inside a field)');
    END IF;
    IF strpos(v_trimmed, '|') > 0 THEN
        -- cron-utils reads "0 9|17 * * *" as the two expressions "0 9 * * *" and "0 17 * * *": the n-th
        -- alternative of every field with alternatives, the other fields as they are.
        FOR v_index IN 1 .. v_field_count LOOP
            v_alternative_count := greatest(v_alternative_count, cardinality("${schema}"._cron_split(v_tokens[v_index], '|')));
        END LOOP;
        v_alternatives := '{}';
        FOR v_alternative IN 1 .. v_alternative_count LOOP
            v_alternative_tokens := '{}';
            FOR v_index IN 1 .. v_field_count LOOP
                IF strpos(v_tokens[v_index], '|') > 0 THEN
                    v_pieces := "${schema}"._cron_split(v_tokens[v_index], '|');
                    IF v_alternative > cardinality(v_pieces) THEN
                        PERFORM "${schema}"._cron_invalid(p_expression, 'the same number of alternatives in every field with |');
                    END IF;
                    v_alternative_tokens := v_alternative_tokens || v_pieces[v_alternative];
                ELSE
                    v_alternative_tokens := v_alternative_tokens || v_tokens[v_index];
                END IF;
            END LOOP;
            v_alternatives := v_alternatives || btrim(array_to_string(v_alternative_tokens, ' '));
        END LOOP;
    ELSE
        v_alternatives := ARRAY[v_trimmed];
    END IF;

    FOR v_alternative IN 1 .. cardinality(v_alternatives) LOOP
        IF left(v_alternatives[v_alternative], 1) = '@' THEN
            PERFORM "${schema}"._cron_invalid(p_expression, 'fields, not a nickname such as @daily');
        END IF;
        v_tokens := regexp_split_to_array(upper(v_alternatives[v_alternative]), '\s+');
        IF cardinality(v_tokens) <> v_field_count THEN
            PERFORM "${schema}"._cron_invalid(p_expression, format('%s fields in every alternative', v_field_count));
        END IF;
        FOR v_index IN 1 .. v_field_count LOOP
            IF right(v_tokens[v_index], 1) = ',' THEN
                PERFORM "${schema}"._cron_invalid(p_expression, 'no trailing comma in a field');
            END IF;
        END LOOP;
        v_first := CASE WHEN v_six_fields THEN 1 ELSE 0 END;
        v_parsed.both_days := v_six_fields;
        -- Unix cron fires at second 0.
        v_parsed.seconds := 1;
        IF v_six_fields THEN
            v_parsed.seconds := ("${schema}"._cron_parse_field(p_expression, v_tokens[1], 'second', true)).mask;
        END IF;
        v_parsed.minutes := ("${schema}"._cron_parse_field(p_expression, v_tokens[v_first + 1], 'minute', v_six_fields)).mask;
        v_parsed.hours := ("${schema}"._cron_parse_field(p_expression, v_tokens[v_first + 2], 'hour', v_six_fields)).mask;
        SELECT * INTO v_field FROM "${schema}"._cron_parse_field(p_expression, v_tokens[v_first + 3], 'day of month', v_six_fields);
        v_parsed.month_days := v_field.mask;
        v_parsed.wrapped_step_day := v_field.wrapped_step_day;
        v_parsed.month_day_kind := v_field.kind;
        v_parsed.months := ("${schema}"._cron_parse_field(p_expression, v_tokens[v_first + 4], 'month', v_six_fields)).mask;
        SELECT * INTO v_field FROM "${schema}"._cron_parse_field(p_expression, v_tokens[v_first + 5], 'day of week', v_six_fields);
        v_parsed.week_days := v_field.mask;
        v_parsed.nth_week_days := v_field.nth_week_days;
        v_parsed.week_day_kind := v_field.kind;
        v_all_parsed := v_all_parsed || v_parsed;
    END LOOP;

    v_fixed_offset := "${schema}"._cron_time_zone(p_time_zone);
    IF p_after IS NULL THEN
        PERFORM "${schema}"._rules_invalid('p_after', 'an instant', 'null');
    END IF;
    -- from year 1 rather than 1970: the schedules look back from their due times for missed runs
    IF p_after < timestamptz '0001-01-01 00:00:00+00' OR p_after > timestamptz '9999-12-31 23:59:59+00' THEN
        PERFORM "${schema}"._rules_invalid('p_after', 'an instant from year 1 to 9999', p_after::text);
    END IF;
    FOR v_alternative IN 1 .. cardinality(v_all_parsed) LOOP
        v_next := "${schema}"._cron_next_execution(v_all_parsed[v_alternative], v_fixed_offset, p_after);
        IF v_next < v_result OR v_result IS NULL THEN
            v_result := v_next;
        END IF;
    END LOOP;
    RETURN v_result;
END
$$;


-- The wait before the next attempt after attempt p_failed_attempt failed, exactly as BackoffSchedule.delayAfter
-- computes it: base * multiplier^(attempt - 1) capped at cap, then multiplied by 1 - jitter + 2 * jitter * random,
-- in microseconds as double precision numbers, truncated to whole microseconds. p_random is a draw from [0, 1),
-- such as random(). The limits are those of the Java API (InputRules.backoff). Raises QU001 for an invalid argument.
CREATE OR REPLACE FUNCTION "${schema}".backoff_delay(p_failed_attempt integer, p_base interval, p_cap interval,
        p_multiplier double precision, p_jitter double precision, p_random double precision)
RETURNS interval LANGUAGE plpgsql IMMUTABLE
SECURITY DEFINER SET search_path = pg_catalog, "${schema}", pg_temp
AS $$
DECLARE
    v_base_micros numeric;
    v_cap_micros numeric;
    v_exponent integer;
    v_power double precision;
    v_raw double precision;
    v_capped double precision;
    v_spread double precision;
BEGIN
    IF p_failed_attempt IS NULL OR p_failed_attempt < 0 THEN
        PERFORM "${schema}"._rules_invalid('p_failed_attempt', 'the number of the attempt that failed (0 or more)',
            coalesce(p_failed_attempt::text, 'null'));
    END IF;
    IF p_base IS NULL OR date_part('year', p_base) <> 0 OR date_part('month', p_base) <> 0 OR p_base < interval '0' THEN
        PERFORM "${schema}"._rules_invalid('p_base', 'an interval of 0 or more without months or years',
            coalesce(quote_literal(p_base), 'null'));
    END IF;
    IF p_cap IS NULL OR date_part('year', p_cap) <> 0 OR date_part('month', p_cap) <> 0 OR p_cap < p_base
            OR p_cap > interval '365 days' THEN
        PERFORM "${schema}"._rules_invalid('p_cap', 'an interval from p_base to 365 days without months or years',
            coalesce(quote_literal(p_cap), 'null'));
    END IF;
    -- PostgreSQL orders NaN above every number, so it is refused by name.
    IF p_multiplier IS NULL OR p_multiplier = 'NaN' OR p_multiplier < 1 OR p_multiplier > 100 THEN
        PERFORM "${schema}"._rules_invalid('p_multiplier', 'a multiplier from 1 to 100', coalesce(p_multiplier::text, 'null'));
    END IF;
    IF p_jitter IS NULL OR p_jitter = 'NaN' OR p_jitter < 0 OR p_jitter > 1 THEN
        PERFORM "${schema}"._rules_invalid('p_jitter', 'a jitter fraction from 0 to 1', coalesce(p_jitter::text, 'null'));
    END IF;
    IF p_random IS NULL OR p_random = 'NaN' OR p_random < 0 OR p_random >= 1 THEN
        PERFORM "${schema}"._rules_invalid('p_random', 'a random draw from 0 (included) to 1 (excluded)', coalesce(p_random::text, 'null'));
    END IF;

    v_base_micros := extract(epoch FROM p_base) * 1000000;
    v_cap_micros := extract(epoch FROM p_cap) * 1000000;
    v_exponent := greatest(0, p_failed_attempt - 1);
    -- Java's arithmetic overflows to infinity where PostgreSQL's raises an error, so an overflow is caught and
    -- made infinity. Below this bound neither the power nor the product can overflow.
    IF ln(p_multiplier) * v_exponent + ln(v_base_micros::double precision + 1) < 700 THEN
        v_raw := v_base_micros::double precision * power(p_multiplier, v_exponent);
    ELSE
        BEGIN
            v_power := power(p_multiplier, v_exponent);
        EXCEPTION WHEN numeric_value_out_of_range THEN
            v_power := 'Infinity';
        END;
        BEGIN
            -- 0 times infinity is NaN, in Java as here, and then the cap applies
            v_raw := v_base_micros::double precision * v_power;
        EXCEPTION WHEN numeric_value_out_of_range THEN
            v_raw := 'Infinity';
        END;
    END IF;
    v_capped := CASE WHEN v_raw IN ('Infinity', '-Infinity', 'NaN') THEN v_cap_micros::double precision
                     ELSE least(v_raw, v_cap_micros::double precision) END;
    -- the same operations in the same order as Java: (1 - jitter) + ((2 * jitter) * random)
    v_spread := CASE WHEN p_jitter = 0 THEN v_capped
                     ELSE v_capped * ((1::double precision - p_jitter) + 2::double precision * p_jitter * p_random) END;
    RETURN greatest(0, trunc(v_spread))::bigint * interval '1 microsecond';
END
$$;
