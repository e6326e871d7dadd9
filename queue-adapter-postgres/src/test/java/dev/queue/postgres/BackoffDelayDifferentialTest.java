package dev.queue.postgres;

import dev.queue.api.Backoff;
import dev.queue.domain.rules.BackoffSchedule;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The SQL backoff ({@code backoff_delay}, migration 8) against the domain's ({@link BackoffSchedule#delayAfter}) on
 * seeded random backoffs, attempts and draws: the same wait to the microsecond.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BackoffDelayDifferentialTest {

    private static final long SEED = 7_340_117L;
    private static final int CASES = 12_000;
    private static final long MAX_CAP_MICROS = Duration.ofDays(365).toNanos() / 1000;

    private DataSource database;
    private String schema;

    @BeforeAll
    void migrate() {
        database = PostgresTestServer.dataSource();
        schema = PostgresTestServer.freshSchema("backoff_diff");
        SchemaMigrator.migrate(MyBatisSupport.sessionFactory(database, schema), schema);
    }

    @AfterAll
    void dropSchema() {
        PostgresTestServer.dropSchema(schema);
    }

    @Test
    void backoffDelayAgreesWithBackoffScheduleOnSeededRandomCases() throws SQLException {
        Random random = new Random(SEED);
        List<Integer> attempts = new ArrayList<>();
        List<Long> baseMicros = new ArrayList<>();
        List<Long> capMicros = new ArrayList<>();
        List<Double> multipliers = new ArrayList<>();
        List<Double> jitters = new ArrayList<>();
        List<Double> draws = new ArrayList<>();
        List<Long> expected = new ArrayList<>();
        int capped = 0;
        for (int i = 0; i < CASES; i++) {
            long base = switch (random.nextInt(4)) {
                case 0 -> 0;
                case 1 -> 1 + random.nextInt(1_000_000);
                case 2 -> (long) (random.nextDouble() * 3_600_000_000L);
                default -> (long) (random.nextDouble() * MAX_CAP_MICROS);
            };
            long cap = random.nextInt(5) == 0 ? base : base + (long) (random.nextDouble() * (MAX_CAP_MICROS - base));
            double multiplier = switch (random.nextInt(5)) {
                case 0 -> 1.0;
                case 1 -> 2.0;
                case 2 -> 100.0;
                default -> 1.0 + random.nextDouble() * (random.nextBoolean() ? 2.0 : 99.0);
            };
            double jitter = switch (random.nextInt(4)) {
                case 0 -> 0.0;
                case 1 -> 0.2;
                case 2 -> 1.0;
                default -> random.nextDouble();
            };
            int attempt = random.nextInt(10) == 0 ? random.nextInt(1001) : random.nextInt(40);
            double draw = random.nextInt(50) == 0 ? 0.0 : random.nextDouble();

            Backoff backoff = Backoff.exponential(Duration.ofNanos(base * 1000), Duration.ofNanos(cap * 1000))
                    .multiplier(multiplier).jitter(jitter);
            Duration delay = BackoffSchedule.delayAfter(backoff, attempt, () -> draw);
            attempts.add(attempt);
            baseMicros.add(base);
            capMicros.add(cap);
            multipliers.add(multiplier);
            jitters.add(jitter);
            draws.add(draw);
            expected.add(delay.toNanos() / 1000);
            if (delay.toNanos() / 1000 == cap && jitter == 0.0) {
                capped++;
            }
        }

        List<Long> actual = new ArrayList<>();
        try (Connection connection = database.getConnection();
             PreparedStatement statement = connection.prepareStatement("SELECT (extract(epoch FROM \"" + schema + "\".backoff_delay("
                     + "a, b * interval '1 microsecond', c * interval '1 microsecond', m, j, r)) * 1000000)::bigint"
                     + " FROM unnest(?::int[], ?::bigint[], ?::bigint[], ?::float8[], ?::float8[], ?::float8[])"
                     + " WITH ORDINALITY AS t(a, b, c, m, j, r, n) ORDER BY n")) {
            statement.setArray(1, connection.createArrayOf("int4", attempts.toArray()));
            statement.setArray(2, connection.createArrayOf("int8", baseMicros.toArray()));
            statement.setArray(3, connection.createArrayOf("int8", capMicros.toArray()));
            statement.setArray(4, connection.createArrayOf("float8", multipliers.toArray()));
            statement.setArray(5, connection.createArrayOf("float8", jitters.toArray()));
            statement.setArray(6, connection.createArrayOf("float8", draws.toArray()));
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    actual.add(rows.getLong(1));
                }
            }
        }

        List<String> differences = new ArrayList<>();
        for (int i = 0; i < CASES; i++) {
            if (!expected.get(i).equals(actual.get(i))) {
                differences.add("backoff_delay(" + attempts.get(i) + ", " + baseMicros.get(i) + " us, " + capMicros.get(i) + " us, "
                        + multipliers.get(i) + ", " + jitters.get(i) + ", " + draws.get(i) + "): java " + expected.get(i)
                        + " us, database " + actual.get(i) + " us");
            }
        }
        assertThat(actual).hasSize(CASES);
        assertThat(differences).as("%s of %s cases differ, the first ones:%n%s", differences.size(), CASES,
                String.join("\n", differences.subList(0, Math.min(25, differences.size())))).isEmpty();
        // both sides of the cap are compared, not only capped waits
        assertThat(capped).isBetween(CASES / 10, CASES * 9 / 10);
    }
}
