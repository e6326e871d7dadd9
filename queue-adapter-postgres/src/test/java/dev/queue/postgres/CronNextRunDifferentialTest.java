package dev.queue.postgres;

import dev.queue.domain.schedule.DueTimes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import javax.sql.DataSource;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The SQL cron evaluator ({@code cron_next_run}, migration 8) against the Java side's (DueTimes over cron-utils) on
 * seeded random expressions, time zones and instants, many of them near clock changes: both must give the same
 * next run, both none, or both refuse the input.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CronNextRunDifferentialTest {

    private static final long SEED = 20240521L;
    private static final int RANDOM_CASES = 10_500;
    /** Zones with clock changes of an hour, of 30 minutes (Lord Howe), at midnight (Havana, Santiago), fixed offsets. */
    private static final List<String> ZONES = List.of("UTC", "Z", "Europe/Berlin", "America/New_York",
            "Australia/Lord_Howe", "Europe/London", "America/Havana", "America/Santiago", "Pacific/Chatham",
            "Asia/Kolkata", "+05:45", "-03:30", "UTC+01:00");
    private static final Instant EARLIEST = Instant.parse("2000-01-01T00:00:00Z");
    private static final Instant LATEST = Instant.parse("2040-01-01T00:00:00Z");

    private static final DateTimeFormatter MICROS_UTC = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS").withZone(ZoneOffset.UTC);

    private DataSource database;
    private String schema;

    @BeforeAll
    void migrate() {
        database = PostgresTestServer.dataSource();
        schema = PostgresTestServer.freshSchema("cron_diff");
        SchemaMigrator.migrate(MyBatisSupport.sessionFactory(database, schema), schema);
    }

    @AfterAll
    void dropSchema() {
        PostgresTestServer.dropSchema(schema);
    }

    @Test
    void theDatabaseAndTheJavaSideAgreeOnTheTimeZoneRulesUsed() throws SQLException {
        // Both sides bring their own copy of the time zone database. If the copies disagree on a clock change in
        // the instants this class draws from, a difference below says nothing about the evaluators.
        List<String> zones = new ArrayList<>();
        List<String> instants = new ArrayList<>();
        List<Integer> javaOffsets = new ArrayList<>();
        for (String zone : ZONES) {
            ZoneRules rules = ZoneId.of(zone).getRules();
            for (ZoneOffsetTransition transition : transitions(zone)) {
                for (long delta : new long[] {-1, 0}) {
                    Instant at = transition.getInstant().plusSeconds(delta);
                    zones.add(zone);
                    instants.add(at.toString());
                    javaOffsets.add(rules.getOffset(at).getTotalSeconds());
                }
            }
        }
        assertThat(instants).as("clock changes in the zones drawn from").hasSizeGreaterThan(500);
        List<String> databaseOffsets;
        try (Connection connection = database.getConnection()) {
            try (Statement statement = connection.createStatement()) {
                statement.execute("CREATE FUNCTION pg_temp.offset_at(z text, t timestamptz) RETURNS integer LANGUAGE plpgsql"
                        + " SET \"TimeZone\" = 'UTC' AS $$ BEGIN PERFORM set_config('TimeZone', z, true);"
                        + " RETURN extract(timezone FROM t)::integer; END $$");
            }
            databaseOffsets = query(connection, "SELECT pg_temp.offset_at(z, t::timestamptz)"
                    + " FROM unnest(?::text[], ?::text[]) WITH ORDINALITY AS c(z, t, n) ORDER BY n", 1, zones, instants);
        }
        List<String> differences = new ArrayList<>();
        for (int i = 0; i < instants.size(); i++) {
            if (!databaseOffsets.get(i).equals(String.valueOf(javaOffsets.get(i)))) {
                differences.add(zones.get(i) + " at " + instants.get(i) + ": java " + javaOffsets.get(i) + " s, database " + databaseOffsets.get(i) + " s");
            }
        }
        assertThat(differences).as("offsets that differ").isEmpty();
    }

    @Test
    void cronNextRunAgreesWithDueTimesOnSeededRandomCases() throws SQLException {
        Random random = new Random(SEED);
        List<Case> cases = new ArrayList<>();
        while (cases.size() < RANDOM_CASES) {
            String expression = CronExpressions.random(random);
            String zone = ZONES.get(random.nextInt(ZONES.size()));
            Case drawn = new Case(expression, zone, randomInstant(random, zone));
            cases.add(drawn);
            // The instant of a fire time itself, and just around it: "strictly after" and the restart a second later.
            if (drawn.nextRun != null && random.nextBoolean()) {
                Instant fire = drawn.nextRun;
                cases.add(new Case(expression, zone, fire));
                cases.add(new Case(expression, zone, fire.plus(random.nextInt(999_999) + 1, ChronoUnit.MICROS)));
                cases.add(new Case(expression, zone, fire.minus(1, ChronoUnit.MICROS)));
            }
        }

        List<String> actual = evaluate(cases);

        List<String> differences = new ArrayList<>();
        Map<String, Integer> outcomes = new TreeMap<>();
        for (int i = 0; i < cases.size(); i++) {
            Case c = cases.get(i);
            outcomes.merge(c.expected.startsWith("at ") ? "a next run" : c.expected, 1, Integer::sum);
            if (!c.expected.equals(actual.get(i))) {
                differences.add(c + ": java " + c.expected + ", database " + actual.get(i));
            }
        }
        assertThat(differences).as("%s of %s cases differ, the first ones:%n%s", differences.size(), cases.size(),
                String.join("\n", differences.subList(0, Math.min(25, differences.size())))).isEmpty();
        // a comparison of nothing but refusals would prove little
        assertThat(outcomes.get("a next run")).as("cases with a next run, of %s", outcomes).isGreaterThan(RANDOM_CASES * 3 / 4);
        assertThat(outcomes).containsKeys("none", "invalid");
    }

    /** cron_next_run on every case in one statement; a refusal is "invalid" when its SQLSTATE is QU001. */
    private List<String> evaluate(List<Case> cases) throws SQLException {
        List<String> expressions = cases.stream().map(c -> c.expression).toList();
        List<String> zones = cases.stream().map(c -> c.zone).toList();
        List<String> instants = cases.stream().map(c -> c.after.toString()).toList();
        try (Connection connection = database.getConnection()) {
            try (Statement statement = connection.createStatement()) {
                statement.execute("CREATE FUNCTION pg_temp.next_run_or_error(e text, z text, t timestamptz) RETURNS text"
                        + " LANGUAGE plpgsql AS $$ DECLARE v timestamptz; BEGIN"
                        + " v := \"" + schema + "\".cron_next_run(e, z, t);"
                        + " RETURN CASE WHEN v IS NULL THEN 'none' ELSE 'at ' || to_char(v AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US') END;"
                        + " EXCEPTION WHEN OTHERS THEN RETURN CASE SQLSTATE WHEN 'QU001' THEN 'invalid' ELSE 'error ' || SQLSTATE || ': ' || SQLERRM END;"
                        + " END $$");
            }
            return query(connection, "SELECT pg_temp.next_run_or_error(e, z, t::timestamptz)"
                    + " FROM unnest(?::text[], ?::text[], ?::text[]) WITH ORDINALITY AS c(e, z, t, n) ORDER BY n", 1, expressions, zones, instants);
        }
    }

    private static List<String> query(Connection connection, String sql, int column, List<?>... arrays) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < arrays.length; i++) {
                Array array = connection.createArrayOf("text", arrays[i].stream().map(String::valueOf).toArray(String[]::new));
                statement.setArray(i + 1, array);
            }
            List<String> values = new ArrayList<>();
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    values.add(rows.getString(column));
                }
            }
            return values;
        }
    }

    private static Instant randomInstant(Random random, String zone) {
        Instant instant;
        List<ZoneOffsetTransition> transitions = transitions(zone);
        int kind = random.nextInt(10);
        if (kind < 5 && !transitions.isEmpty()) {
            // within a day of a clock change
            Instant change = transitions.get(random.nextInt(transitions.size())).getInstant();
            instant = change.plusSeconds(random.nextInt(2 * 26 * 3600) - 26 * 3600);
        } else {
            instant = EARLIEST.plusSeconds((long) (random.nextDouble() * (LATEST.getEpochSecond() - EARLIEST.getEpochSecond())));
        }
        return switch (random.nextInt(4)) {
            case 0 -> instant.truncatedTo(ChronoUnit.HOURS);
            case 1 -> instant.truncatedTo(ChronoUnit.MINUTES);
            case 2 -> instant;
            default -> instant.plus(random.nextInt(1_000_000), ChronoUnit.MICROS);
        };
    }

    private static List<ZoneOffsetTransition> transitions(String zone) {
        ZoneRules rules = ZoneId.of(zone).getRules();
        List<ZoneOffsetTransition> transitions = new ArrayList<>();
        ZoneOffsetTransition next = rules.nextTransition(EARLIEST.minusSeconds(86_400 * 2));
        while (next != null && next.getInstant().isBefore(LATEST.plusSeconds(86_400 * 2))) {
            transitions.add(next);
            next = rules.nextTransition(next.getInstant());
        }
        return transitions;
    }

    /** One comparison; {@code expected} is what the Java side answers: "at" the instant, "none" or "invalid". */
    private static final class Case {
        final String expression;
        final String zone;
        final Instant after;
        final Instant nextRun;
        final String expected;

        Case(String expression, String zone, Instant after) {
            this.expression = expression;
            this.zone = zone;
            this.after = after;
            Instant next = null;
            String answer;
            try {
                next = DueTimes.cron(expression, ZoneId.of(zone), null, null).firstAfter(after);
                answer = next == null ? "none" : "at " + MICROS_UTC.format(next);
            } catch (RuntimeException refused) {
                // the Java side refuses the expression, on parsing or (for a few forms cron-utils accepts) on use
                answer = "invalid";
            }
            this.nextRun = next;
            this.expected = answer;
        }

        @Override
        public String toString() {
            return "cron_next_run('" + expression + "', '" + zone + "', '" + after + "')";
        }
    }
}
