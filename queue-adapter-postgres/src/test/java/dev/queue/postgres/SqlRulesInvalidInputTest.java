package dev.queue.postgres;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.postgresql.util.PSQLException;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * cron_next_run and backoff_delay refuse bad arguments with SQLSTATE QU001 and a message naming the argument and
 * the value, and leave the session's time zone as it was.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlRulesInvalidInputTest {

    private DataSource database;
    private String schema;

    @BeforeAll
    void migrate() {
        database = PostgresTestServer.dataSource();
        schema = PostgresTestServer.freshSchema("sql_rules");
        SchemaMigrator.migrate(MyBatisSupport.sessionFactory(database, schema), schema);
    }

    @AfterAll
    void dropSchema() {
        PostgresTestServer.dropSchema(schema);
    }

    @ParameterizedTest
    @CsvSource(delimiter = ';', value = {
            "* * * *                ; 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first), but it has 4",
            "* * * * * * *          ; but it has 7",
            "61 * * * *             ; 0 to 59 in the minute field, not 61",
            "*/0 * * * *            ; a step from 1 to 59 in the minute field, not 0",
            "0 0 ? * *              ; no ? in the day of month field",
            "0 0 L * *              ; a number in the day of month field, not 'L'",
            "0 0 * * MON#2          ; no # in the day of week field",
            "0 0 * * 5-1            ; a range from low to high in the day of week field, not '5-1'",
            "0 0 0 * * 5-1/2        ; a step over a range that holds a weekday, not '5-1/2'",
            "0 9|17|20 * * 1|2      ; the same number of alternatives in every field with |",
            "@daily * * * *         ; not a nickname such as @daily",
            "0 0 1, * *             ; no trailing comma in a field"})
    void anInvalidExpressionIsRefusedNamingItAndWhy(String expression, String reason) {
        assertThatThrownBy(() -> nextRun(expression, "UTC"))
                .isInstanceOfSatisfying(PSQLException.class, e -> {
                    assertThat(e.getSQLState()).isEqualTo("QU001");
                    assertThat(e.getServerErrorMessage().getMessage())
                            .startsWith("invalid p_expression: expected ")
                            .contains(reason)
                            .endsWith("got: '" + expression + "'");
                    assertThat(e.getServerErrorMessage().getColumn()).isEqualTo("p_expression");
                });
    }

    @Test
    void aBlankOrMissingExpressionIsRefused() {
        assertThatThrownBy(() -> nextRun("   ", "UTC")).isInstanceOfSatisfying(PSQLException.class,
                e -> assertThat(e.getSQLState()).isEqualTo("QU001"));
        assertThatThrownBy(() -> nextRun(null, "UTC")).isInstanceOfSatisfying(PSQLException.class, e -> {
            assertThat(e.getSQLState()).isEqualTo("QU001");
            assertThat(e.getServerErrorMessage().getMessage()).startsWith("invalid p_expression").endsWith("got: null");
        });
    }

    @ParameterizedTest
    @CsvSource({
            // not a zone at all
            "Mars/Olympus_Mons", "not a zone", "''",
            // PostgreSQL alone would take these: a POSIX rule, a name in the wrong case, an abbreviation
            "ABC5", "europe/berlin", "CEST",
            // offsets java.time refuses
            "+19:00", "+18:30", "+1:00", "UTC+25", "+01:60"})
    void anInvalidTimeZoneIsRefusedNamingIt(String zone) {
        assertThatThrownBy(() -> nextRun("0 9 * * *", zone)).isInstanceOfSatisfying(PSQLException.class, e -> {
            assertThat(e.getSQLState()).isEqualTo("QU001");
            assertThat(e.getServerErrorMessage().getMessage())
                    .isEqualTo("invalid p_time_zone: expected a time zone ID such as Europe/Berlin, UTC or +02:00, got: '" + zone + "'");
        });
    }

    @Test
    void zonesAreReadAsJavaTimeReadsThem() throws SQLException {
        // 09:00 local on 2030-07-01, read in each zone
        assertThat(nextRun("0 9 * * *", "Europe/Berlin")).isEqualTo("2030-07-01 07:00:00+00");
        assertThat(nextRun("0 9 * * *", "Z")).isEqualTo("2030-07-01 09:00:00+00");
        assertThat(nextRun("0 9 * * *", "+05:45")).isEqualTo("2030-07-01 03:15:00+00");
        assertThat(nextRun("0 9 * * *", "-0330")).isEqualTo("2030-07-01 12:30:00+00");
        assertThat(nextRun("0 9 * * *", "UTC+2")).isEqualTo("2030-07-01 07:00:00+00");
        assertThat(nextRun("0 9 * * *", "GMT-01:00:30")).isEqualTo("2030-07-01 10:00:30+00");
        // a zone name that is also an abbreviation in PostgreSQL is read as the zone, with its summer time
        assertThat(nextRun("0 9 * * *", "CET")).isEqualTo("2030-07-01 07:00:00+00");
        assertThat(nextRun("0 9 * * *", "Etc/GMT+5")).isEqualTo("2030-07-01 14:00:00+00");
    }

    @Test
    void theSessionKeepsItsTimeZone() throws SQLException {
        try (Connection connection = database.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute("SET TimeZone = 'America/Chicago'");
            statement.execute("SELECT \"" + schema + "\".cron_next_run('0 9 * * *', 'Australia/Lord_Howe', now())");
            try (ResultSet row = statement.executeQuery("SHOW TimeZone")) {
                row.next();
                assertThat(row.getString(1)).isEqualTo("America/Chicago");
            }
        }
    }

    @Test
    void aMissingInstantIsRefused() {
        assertThatThrownBy(() -> query("SELECT \"" + schema + "\".cron_next_run('0 9 * * *', 'UTC', null)::text"))
                .isInstanceOfSatisfying(PSQLException.class, e -> {
                    assertThat(e.getSQLState()).isEqualTo("QU001");
                    assertThat(e.getServerErrorMessage().getMessage()).isEqualTo("invalid p_after: expected an instant, got: null");
                });
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "-1, '1 second', '1 hour', 2, 0.2, 0.5          | p_failed_attempt",
            "1, '-1 second', '1 hour', 2, 0.2, 0.5          | p_base",
            "1, '1 month', '1 year', 2, 0.2, 0.5            | p_base",
            "1, '1 hour', '1 second', 2, 0.2, 0.5           | p_cap",
            "1, '1 second', '366 days', 2, 0.2, 0.5         | p_cap",
            "1, '1 second', '1 hour', 0.5, 0.2, 0.5         | p_multiplier",
            "1, '1 second', '1 hour', 'NaN', 0.2, 0.5       | p_multiplier",
            "1, '1 second', '1 hour', 101, 0.2, 0.5         | p_multiplier",
            "1, '1 second', '1 hour', 2, 1.5, 0.5           | p_jitter",
            "1, '1 second', '1 hour', 2, 0.2, 1             | p_random",
            "1, '1 second', '1 hour', 2, 0.2, null          | p_random"})
    void anInvalidBackoffArgumentIsRefusedNamingIt(String arguments, String argument) {
        assertThatThrownBy(() -> query("SELECT \"" + schema + "\".backoff_delay(" + arguments + ")::text"))
                .isInstanceOfSatisfying(PSQLException.class, e -> {
                    assertThat(e.getSQLState()).isEqualTo("QU001");
                    assertThat(e.getServerErrorMessage().getMessage()).startsWith("invalid " + argument + ": expected ");
                    assertThat(e.getServerErrorMessage().getColumn()).isEqualTo(argument);
                });
    }

    @Test
    void backoffDelayIsAnExactDurationWithoutDays() throws SQLException {
        // 1 s doubling from the third attempt: 4 s, then +-20% with the draw 0.75: 4.4 s
        assertThat(query("SELECT \"" + schema + "\".backoff_delay(3, '1 second', '1 hour', 2, 0.2, 0.75)::text")).isEqualTo("00:00:04.4");
        // capped: never a day part, which would follow the calendar across a clock change
        assertThat(query("SELECT \"" + schema + "\".backoff_delay(40, '1 hour', '300 days', 2, 0, 0)::text")).isEqualTo("7200:00:00");
    }

    private String nextRun(String expression, String zone) throws SQLException {
        try (Connection connection = database.getConnection();
             Statement setting = connection.createStatement();
             PreparedStatement statement = connection.prepareStatement("SELECT \"" + schema
                     + "\".cron_next_run(?, ?, '2030-07-01T00:00:00Z')::text")) {
            setting.execute("SET TimeZone = 'UTC'");
            statement.setString(1, expression);
            statement.setString(2, zone);
            try (ResultSet row = statement.executeQuery()) {
                row.next();
                return row.getString(1);
            }
        }
    }

    private String query(String sql) throws SQLException {
        try (Connection connection = database.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute("SET TimeZone = 'UTC'");
            try (ResultSet row = statement.executeQuery(sql)) {
                row.next();
                return row.getString(1);
            }
        }
    }
}
