package dev.queue.postgres;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What {@link HostileInputTest} passes to the SQL functions: per parameter type the hostile values, and per
 * parameter name (else per type) a valid baseline for the arguments not under attack. Values are SQL expressions
 * the server evaluates itself, so a 2 MB text or a 100,000-element array costs no transfer. Baselines may name the
 * fixture's objects through placeholders ({@link #LEASED_ID}, ...), filled in per call.
 */
final class HostileValues {

    /** A message of 'acme' leased by the fixture (running), and its lease token. */
    static final String LEASED_ID = "${leased_id}";
    static final String LEASE_TOKEN = "${lease_token}";
    /** A dead letter of 'acme'. */
    static final String DEAD_ID = "${dead_id}";
    /** A tenant login granted 'acme'. */
    static final String TENANT_LOGIN = "${tenant_login}";

    /** One value under test: a short label for reports and the SQL expression (cast to the parameter's type). */
    record Value(String label, String sql) {
    }

    private static final String TWO_MB = "repeat('x', 2097152)";
    /** In the label of every value of 100,000 elements, keys or items. */
    static final String HUGE_COUNT_LABEL = "100,000";
    private static final String HUGE = HUGE_COUNT_LABEL + " elements";
    private static final int HUGE_COUNT = 100_000;

    private HostileValues() {
    }

    /**
     * Optional parameters of which the function needs one (exactly one, or at least one): the first is part of the
     * baselines, unless another of the group is under attack, which then stands alone.
     */
    private static final Map<String, List<String>> ONE_OF = Map.of(
            "create_schedule", List.of("p_every_interval", "p_cron_expression"),
            "find_messages", List.of("p_unique_key", "p_header_name"),
            "snooze", List.of("p_delay", "p_run_at"),
            "set_queue_limits", List.of("p_max_running", "p_max_running_per_partition", "p_rate_limit",
                    "p_partition_rate_limit"));

    /**
     * Whether a parameter not under attack gets its baseline: every required one, and of the optional ones only the
     * first of a {@link #ONE_OF} group when no other of the group is under attack (the others keep their defaults).
     */
    static boolean inBaseline(String function, String parameter, String attacked, boolean optional) {
        if (!optional) {
            return true;
        }
        List<String> group = ONE_OF.getOrDefault(function, List.of());
        return !group.isEmpty() && group.get(0).equals(parameter) && (attacked == null || !group.contains(attacked));
    }

    /** The baseline of a parameter: by its name (and for ids, the function), else by its type; null when unknown. */
    static String baseline(String function, String parameter, String type) {
        boolean deadLetters = function.contains("dead") || function.contains("redrive") || function.contains("purge");
        if (deadLetters && parameter.equals("p_id") && type.equals("bigint")) {
            return DEAD_ID;
        }
        if (deadLetters && parameter.equals("p_ids")) {
            return "ARRAY[" + DEAD_ID + "]";
        }
        String byName = BY_NAME.get(parameter + " " + type);
        if (byName == null) {
            byName = BY_NAME.get(parameter);
        }
        return byName != null ? byName : BY_TYPE.get(type);
    }

    /**
     * Baselines by name ("name type" where one name has several types). NULL where the engine functions take NULL
     * for "none" (no ordering key, no run-at, no cursor).
     */
    private static final Map<String, String> BY_NAME = Map.ofEntries(
            Map.entry("p_namespace", "'acme'"),
            Map.entry("p_namespaces", "ARRAY['acme']"),
            Map.entry("p_queue", "'email'"),
            Map.entry("p_topic", "'email'"),
            Map.entry("p_queues", "ARRAY['email']"),
            Map.entry("p_topics", "ARRAY['email']"),
            Map.entry("p_id bigint", LEASED_ID),
            Map.entry("p_id text", "'worker-1'"),
            Map.entry("p_ids", "ARRAY[" + LEASED_ID + "]"),
            Map.entry("p_lease_token", LEASE_TOKEN),
            Map.entry("p_tokens", "ARRAY[" + LEASE_TOKEN + "]"),
            Map.entry("p_lease_tokens", "ARRAY[" + LEASE_TOKEN + "]"),
            Map.entry("p_worker", "'worker-1'"),
            Map.entry("p_worker_id", "'worker-1'"),
            Map.entry("p_failed_by", "'worker-1'"),
            Map.entry("p_name", "'nightly'"),
            Map.entry("p_role", TENANT_LOGIN),
            Map.entry("p_payload", "'{\"k\":1}'"),
            Map.entry("p_payloads", "ARRAY['{\"k\":1}']"),
            Map.entry("p_headers", "'{}'"),
            Map.entry("p_headers text[]", "ARRAY['{}']"),
            Map.entry("p_priority", "0"),
            Map.entry("p_priorities", "ARRAY[0]"),
            Map.entry("p_max_attempts", "3"),
            Map.entry("p_max_attempts integer[]", "ARRAY[3]"),
            Map.entry("p_unique_key", "'uk-1'"),
            Map.entry("p_unique_keys", "ARRAY[NULL]"),
            Map.entry("p_ordering_key", "NULL"),
            Map.entry("p_ordering_keys", "ARRAY[NULL]"),
            Map.entry("p_run_at_us", "NULL"),
            Map.entry("p_run_at_us bigint[]", "ARRAY[NULL]"),
            Map.entry("p_delay_us", "0"),
            Map.entry("p_delay_us bigint[]", "ARRAY[0]"),
            Map.entry("p_notify_key", "NULL"),
            Map.entry("p_notify_keys", "ARRAY[]::text[]"),
            Map.entry("p_now", "now()"),
            Map.entry("p_notify", "false"),
            Map.entry("p_async", "false"),
            Map.entry("p_archive", "false"),
            Map.entry("p_archive_completed", "false"),
            Map.entry("p_paused", "false"),
            Map.entry("p_local", "false"),
            Map.entry("p_actor", "'hostile-test'"),
            Map.entry("p_error", "'boom'"),
            Map.entry("p_limit", "10"),
            Map.entry("p_after_id", "0"),
            Map.entry("p_lease_micros", "30000000"),
            Map.entry("p_delay_micros", "0"),
            Map.entry("p_gap_micros", "1000000"),
            Map.entry("p_after_priorities", "NULL"),
            Map.entry("p_after_run_at_micros", "NULL"),
            Map.entry("p_after_ids", "NULL"),
            Map.entry("p_behind", "NULL"),
            Map.entry("p_expired_since", "NULL"),
            Map.entry("p_behind_dead_letter", "'wait'"),
            Map.entry("p_cron", "'0 * * * *'"),
            Map.entry("p_cron_expression", "'0 * * * *'"),
            Map.entry("p_expression", "'0 * * * *'"),
            Map.entry("p_interval_micros", "NULL"),
            Map.entry("p_time_zone", "'UTC'"),
            Map.entry("p_timezone", "'UTC'"),
            Map.entry("p_after", "now()"),
            Map.entry("p_missed_policy", "'FIRE_ONCE'"),
            Map.entry("p_missed_bound", "1"),
            Map.entry("p_missed_grace", "interval '1 minute'"),
            Map.entry("p_missed_grace_micros", "60000000"),
            Map.entry("p_start_at", "NULL"),
            Map.entry("p_end_at", "NULL"),
            Map.entry("p_last_run_at", "NULL"),
            Map.entry("p_next_run_at", "now() + interval '1 hour'"),
            Map.entry("p_created_at", "now()"),
            Map.entry("p_updated_at", "now()"),
            Map.entry("p_max_running", "5"),
            Map.entry("p_partition_kind", "NULL"),
            Map.entry("p_partition_name", "NULL"),
            Map.entry("p_partition_header", "NULL"),
            Map.entry("p_max_running_per_partition", "NULL"),
            Map.entry("p_rate_starts", "NULL"),
            Map.entry("p_rate_period_micros", "NULL"),
            Map.entry("p_partition_rate_starts", "NULL"),
            Map.entry("p_partition_rate_period_micros", "NULL"),
            Map.entry("p_published", "ARRAY[1]"),
            Map.entry("p_host", "'host-1'"),
            Map.entry("p_pid", "4242"),
            Map.entry("p_started_at", "now()"),
            Map.entry("p_subscriptions", "'[]'"),
            Map.entry("p_interval", "interval '5 seconds'"),
            Map.entry("p_every_interval", "interval '1 hour'"),
            Map.entry("p_extension", "interval '1 minute'"),
            Map.entry("p_retention", "interval '30 days'"),
            Map.entry("p_failed_attempt", "1"),
            Map.entry("p_base", "interval '1 second'"),
            Map.entry("p_cap", "interval '1 minute'"),
            Map.entry("p_multiplier", "2"),
            Map.entry("p_jitter", "0"),
            Map.entry("p_random", "0.5"));

    /** Baselines by type, for a parameter no name above covers. */
    private static final Map<String, String> BY_TYPE = Map.ofEntries(
            Map.entry("text", "'hostile-1'"),
            Map.entry("text[]", "ARRAY['email']"),
            Map.entry("bigint", "1"),
            Map.entry("integer", "1"),
            Map.entry("smallint", "1"),
            Map.entry("numeric", "1"),
            Map.entry("bigint[]", "ARRAY[1]"),
            Map.entry("integer[]", "ARRAY[1]"),
            Map.entry("boolean", "false"),
            Map.entry("boolean[]", "ARRAY[false]"),
            Map.entry("double precision", "1"),
            Map.entry("interval", "interval '1 minute'"),
            Map.entry("timestamp with time zone", "now()"),
            Map.entry("json", "'{}'"),
            Map.entry("jsonb", "'{}'"),
            Map.entry("json[]", "ARRAY['{}']"),
            Map.entry("jsonb[]", "ARRAY['{}']"));

    /**
     * The hostile values of a type; {@code baseline} (the parameter's valid value, may be null) seeds the array
     * cases, so that a NULL-holding or two-dimensional array still names an existing message or queue. Only NULL for
     * a type this table does not know ({@link #knows}).
     */
    static List<Value> hostile(String type, String baseline) {
        List<Value> values = new ArrayList<>();
        values.add(new Value("NULL", "NULL"));
        switch (type) {
            case "text" -> values.addAll(texts());
            case "bigint" -> values.addAll(numbers("-9223372036854775808", "9223372036854775807", "2147483648"));
            case "integer" -> values.addAll(numbers("-2147483648", "2147483647", "32768"));
            case "smallint" -> values.addAll(numbers("-32768", "32767", "1000"));
            case "numeric" -> values.addAll(List.of(new Value("NaN", "'NaN'"), new Value("1e1000", "1e1000"),
                    new Value("-1", "-1"), new Value("0", "0")));
            case "double precision" -> values.addAll(List.of(new Value("NaN", "'NaN'"), new Value("Infinity", "'Infinity'"),
                    new Value("-Infinity", "'-Infinity'"), new Value("0", "0"), new Value("-1", "-1"),
                    new Value("1e308", "1e308"), new Value("-1e308", "-1e308")));
            case "boolean" -> {
                // true and false are both valid: NULL is the only hostile boolean
            }
            case "interval" -> values.addAll(List.of(new Value("-1 s", "'-1 s'"), new Value("0", "'0'"),
                    new Value("1 microsecond", "'1 microsecond'"), new Value("178000000 years", "'178000000 years'"),
                    new Value("-178000000 years", "'-178000000 years'"), new Value("1 month -30 days", "'1 month -30 days'"),
                    new Value("2147483647 days", "'2147483647 days'"), new Value("infinity", "'infinity'"),
                    new Value("-infinity", "'-infinity'")));
            case "timestamp with time zone" -> values.addAll(List.of(new Value("infinity", "'infinity'"),
                    new Value("-infinity", "'-infinity'"), new Value("year 294276", "'294276-12-31 23:59:59+00'"),
                    new Value("4713 BC", "'4713-11-24 00:00:00+00 BC'"), new Value("epoch", "'epoch'"),
                    new Value("1969-12-31", "'1969-12-31 23:59:59+00'"), new Value("year 10000", "'10000-01-01 00:00:00+00'")));
            case "json", "jsonb" -> values.addAll(json());
            case "text[]", "bigint[]", "integer[]", "smallint[]", "boolean[]", "json[]", "jsonb[]" ->
                    values.addAll(arrays(type, baseline));
            default -> {
                // a type without hostile values: NULL only, and the run reports the type (see knows)
            }
        }
        return values;
    }

    /** Parameters that hold one name (namespace, queue or topic, schedule) under the name rule of docs/sql.md. */
    private static final Set<String> NAMES = Set.of("p_namespace", "p_queue", "p_topic", "p_name");

    /**
     * Whether the value is a non-NULL text that the name rule refuses, given to a name parameter ('*', which the
     * queue policies take for "every queue", and NULL, which several functions take for "all", aside).
     */
    static boolean breaksNameRule(String parameter, Value value) {
        return NAMES.contains(parameter) && value != null && !value.label().equals("NULL") && !value.label().equals("*")
                && texts().contains(value);
    }

    /** Whether {@link #hostile} has values beyond NULL for the type. */
    static boolean knows(String type) {
        return KNOWN_TYPES.contains(type);
    }

    private static final Set<String> KNOWN_TYPES = Set.of("text", "bigint", "integer", "smallint",
            "numeric", "double precision", "boolean", "interval", "timestamp with time zone", "json", "jsonb", "text[]",
            "bigint[]", "integer[]", "smallint[]", "boolean[]", "json[]", "jsonb[]");

    private static List<Value> texts() {
        return List.of(
                new Value("empty", "''"),
                new Value("blank", "' '"),
                new Value("2 MB", TWO_MB),
                new Value("65 chars", "repeat('a', 65)"),
                new Value("RTL override", literal("acme\u202Eemail")),
                new Value("combining marks", literal("e\u0301\u0308\u0323")),
                new Value("emoji", literal("\uD83D\uDE00")),
                new Value("U+FFFF", literal("\uFFFF")),
                new Value("lone \u0130", literal("\u0130")),
                new Value("control characters", "E'a\\tb\\nc\\u0001'"),
                new Value("'; DROP TABLE x; --", literal("'; DROP TABLE x; --")),
                new Value("acme' OR '1'='1", literal("acme' OR '1'='1")),
                new Value("%", "'%'"),
                new Value("*", "'*'"),
                new Value("..", "'..'"));
    }

    private static List<Value> numbers(String min, String max, String pastNarrower) {
        return List.of(new Value("0", "0"), new Value("-1", "-1"), new Value(min, min), new Value(max, max),
                new Value(pastNarrower, pastNarrower));
    }

    private static List<Value> json() {
        return List.of(
                new Value("JSON null", "'null'"),
                new Value("empty string", "'\"\"'"),
                new Value("number", "'42'"),
                new Value("array", "'[1,2]'"),
                new Value("object of wrong types", "'{\"a\":{\"b\":[1,true,null]},\"c\":1.5e300}'"),
                new Value("nested 1000 deep", "repeat('[', 1000) || repeat(']', 1000)"),
                new Value("2 MB", "'{\"a\":\"' || " + TWO_MB + " || '\"}'"),
                new Value(HUGE_COUNT_LABEL + " keys", "(SELECT json_object_agg('k' || g, g) FROM generate_series(1, " + HUGE_COUNT + ") g)::text"),
                new Value("\\u0000 escape", "'{\"a\":\"\\u0000\"}'"),
                new Value("emoji and RTL", literal("{\"\uD83D\uDE00\":\"\u202E\"}")));
    }

    private static List<Value> arrays(String type, String baseline) {
        String element = type.substring(0, type.length() - 2);
        String seed = baseline == null || baseline.equals("NULL") ? elementSample(element) : null;
        String one = seed == null ? "(" + baseline + ")::" + type : "ARRAY[" + seed + "]::" + type;
        List<Value> values = new ArrayList<>();
        values.add(new Value("empty", "'{}'"));
        values.add(new Value("{NULL}", "ARRAY[NULL]::" + type));
        values.add(new Value("baseline || NULL", one + " || ARRAY[NULL]::" + type));
        values.add(new Value("two-dimensional", "ARRAY[" + one + ", " + one + "]"));
        values.add(new Value("lower bound 0", "'[0:0]={" + elementLiteral(element) + "}'"));
        values.add(new Value(HUGE, "(SELECT array_agg(" + hugeElement(element) + ") FROM generate_series(1, " + HUGE_COUNT + ") g)"));
        switch (element) {
            case "text" -> {
                values.add(new Value("{2 MB}", "ARRAY[" + TWO_MB + "]"));
                values.add(new Value("{''}", "ARRAY['']"));
                values.add(new Value("{'; DROP TABLE x; --}", "ARRAY[" + literal("'; DROP TABLE x; --") + "]"));
            }
            case "bigint" -> values.add(new Value("{min, max}", "ARRAY[-9223372036854775808, 9223372036854775807]"));
            case "integer" -> values.add(new Value("{min, max}", "ARRAY[-2147483648, 2147483647]"));
            case "json", "jsonb" -> values.add(new Value("{2 MB}", "ARRAY['{\"a\":\"' || " + TWO_MB + " || '\"}']"));
            default -> {
            }
        }
        return values;
    }

    private static String elementSample(String element) {
        return switch (element) {
            case "text" -> "'email'";
            case "boolean" -> "false";
            case "json", "jsonb" -> "'{}'";
            default -> "1";
        };
    }

    private static String elementLiteral(String element) {
        return switch (element) {
            case "text" -> "email";
            case "boolean" -> "false";
            case "json", "jsonb" -> "\"{}\"";
            default -> "1";
        };
    }

    /** Distinct valid names for text (each one a queue to lock), ids for numbers. */
    private static String hugeElement(String element) {
        return switch (element) {
            case "text" -> "'q' || g";
            case "boolean" -> "false";
            case "json", "jsonb" -> "'{}'::" + element;
            default -> "g";
        };
    }

    /** A string as an SQL literal (standard_conforming_strings is on in every supported version). */
    static String literal(String value) {
        return "'" + value.replace("'", "''") + "'";
    }
}
