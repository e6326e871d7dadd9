package dev.queue.postgres.sql;

import dev.queue.api.Message;
import dev.queue.api.Schedule;
import dev.queue.api.ScheduleInfo;
import dev.queue.domain.schedule.SchedulePlanner;
import dev.queue.postgres.PostgresQueue;
import dev.queue.postgres.PostgresQueueConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Interval schedules through SQL: create is idempotent on the name, ticks fire by the missed-runs policies, pause
 * and resume, and a schedule created from Java fires from SQL with the Java headers and unique key. A schedule is
 * made due by moving its stored times back, never by waiting.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlScheduleTest {

    private SqlTestDatabase db;

    @BeforeAll
    void createDatabase() {
        db = SqlTestDatabase.create("sqlsched");
    }

    @AfterAll
    void dropDatabase() {
        db.close();
    }

    /** Moves a schedule back in time: created that long ago, next run as stored then. */
    private void age(String namespace, String name, String createdAgo, String nextRunAfterCreation) {
        db.rows("UPDATE queue.schedules SET created_at = now() - ?::interval, next_run_at = now() - ?::interval + ?::interval"
                + " WHERE namespace = ? AND name = ?", createdAgo, createdAgo, nextRunAfterCreation, namespace, name);
    }

    @Test
    void createIsIdempotentOnTheNameAndAChangedDefinitionIsAnUpdate() {
        String create = "SELECT queue.create_schedule('idem', 'sync', 'data', ?::json, p_every_interval := '2 hours')";
        assertThat(db.value(create, "{\"source\": \"upstream\"}")).isEqualTo("created");
        Map<String, Object> first = db.rows("SELECT * FROM queue.list_schedules('idem')").get(0);
        assertThat((OffsetDateTime) first.get("next_run_at")).isEqualTo(((OffsetDateTime) first.get("created_at")).plusHours(2));
        assertThat(db.value(create, "{\"source\": \"upstream\"}")).isEqualTo("unchanged");
        assertThat(db.value(create, "{\"source\": \"mirror\"}")).isEqualTo("updated");
        assertThat(db.value("SELECT queue.update_schedule('idem', 'sync', p_priority := 3)")).isEqualTo("updated");
        assertThat(db.value("SELECT queue.update_schedule('idem', 'sync', p_priority := 3)")).isEqualTo("unchanged");

        Map<String, Object> row = db.rows("SELECT * FROM queue.list_schedules('idem')").get(0);
        assertThat(row.get("created_at")).isEqualTo(first.get("created_at"));
        assertThat(row.get("payload").toString()).isEqualTo("{\"source\": \"mirror\"}");
        assertThat(row.get("priority")).isEqualTo(3);
        assertThat(row.get("every_interval").toString()).contains("2 hours");
        assertThat(db.value("SELECT queue.delete_schedule('idem', 'sync')")).isEqualTo(true);
        assertThat(db.value("SELECT queue.delete_schedule('idem', 'sync')")).isEqualTo(false);
        assertThat(db.rows("SELECT * FROM queue.list_schedules('idem')")).isEmpty();
    }

    @Test
    void aDueScheduleFiresOnceWithTheJavaHeadersAndUniqueKeyAndMovesToItsNextRun() {
        db.value("SELECT queue.create_schedule('fire', 'sync', 'data', '{\"source\": \"upstream\"}', p_every_interval := '2 hours')");
        assertThat(db.rows("SELECT * FROM queue.tick_schedules('fire')")).isEmpty();
        age("fire", "sync", "2 hours 1 minute", "2 hours");
        OffsetDateTime created = (OffsetDateTime) db.value("SELECT created_at FROM queue.list_schedules('fire')");

        List<Map<String, Object>> fired = db.rows("SELECT * FROM queue.tick_schedules('fire')");

        OffsetDateTime due = created.plusHours(2);
        assertThat(fired).singleElement().satisfies(row -> {
            assertThat(row.get("schedule_name")).isEqualTo("sync");
            assertThat(row.get("due_at")).isEqualTo(due);
            assertThat(row.get("next_run_at")).isEqualTo(created.plusHours(4));
        });
        long jobId = (Long) fired.get(0).get("job_id");
        Map<String, Object> message = db.rows("SELECT * FROM queue.inspect('fire', ?)", jobId).get(0);
        assertThat(message.get("queue")).isEqualTo("data");
        assertThat(message.get("payload").toString()).isEqualTo("{\"source\": \"upstream\"}");
        assertThat(message.get("unique_key")).isEqualTo(SchedulePlanner.uniqueKey("sync", due.toInstant()));
        assertThat(message.get("headers").toString())
                .isEqualTo("{\"queue-due-at\": \"" + due.toInstant() + "\", \"queue-schedule\": \"sync\"}");
        assertThat(db.value("SELECT last_run_at FROM queue.list_schedules('fire')")).isEqualTo(due);
        assertThat(db.rows("SELECT * FROM queue.tick_schedules('fire')")).isEmpty();
    }

    @Test
    void fireEachFiresTheLatestMissedRunsOldestFirstAndSkipDropsThoseOlderThanItsGrace() {
        db.value("SELECT queue.create_schedule('missed', 'each', 'q', '{}', p_every_interval := '1 minute',"
                + " p_missed_policy := 'fire_each', p_missed_bound := 3)");
        db.value("SELECT queue.create_schedule('missed', 'skip', 'q', '{}', p_every_interval := '1 hour',"
                + " p_missed_policy := 'SKIP', p_missed_grace := '1 minute')");
        age("missed", "each", "10 minutes 30 seconds", "1 minute");
        age("missed", "skip", "1 hour 5 minutes", "1 hour");
        OffsetDateTime created = (OffsetDateTime) db.value("SELECT created_at FROM queue.list_schedules('missed') WHERE name = 'each'");

        List<Map<String, Object>> fired = db.rows("SELECT * FROM queue.tick_schedules('missed')");

        assertThat(fired).extracting(r -> r.get("schedule_name") + " " + r.get("due_at"))
                .containsExactly("each " + created.plusMinutes(8), "each " + created.plusMinutes(9), "each " + created.plusMinutes(10));
        assertThat(db.rows("SELECT name, next_run_at > now() AS ahead FROM queue.list_schedules('missed')"))
                .extracting(r -> r.values().toString()).containsExactly("[each, true]", "[skip, true]");
    }

    @Test
    void aPausedScheduleFiresNothingAndResumesAtItsNextDueTimeAfterNow() {
        db.value("SELECT queue.create_schedule('pause', 'cleanup', 'maintenance', '{}', p_every_interval := '5 minutes')");
        assertThat(db.value("SELECT queue.pause_schedule('pause', 'cleanup')")).isEqualTo(true);
        assertThat(db.value("SELECT queue.pause_schedule('pause', 'cleanup')")).isEqualTo(false);
        age("pause", "cleanup", "1 hour", "5 minutes");

        assertThat(db.rows("SELECT * FROM queue.tick_schedules('pause')")).isEmpty();
        assertThat(db.value("SELECT queue.resume_schedule('pause', 'cleanup')")).isEqualTo(true);
        assertThat(db.value("SELECT queue.resume_schedule('pause', 'cleanup')")).isEqualTo(false);

        assertThat(db.rows("SELECT paused, next_run_at > now() AS ahead, next_run_at <= now() + interval '5 minutes' AS soon"
                + " FROM queue.list_schedules('pause')")).extracting(r -> r.values().toString()).containsExactly("[false, true, true]");
        assertThat(db.rows("SELECT * FROM queue.tick_schedules('pause')")).isEmpty();
    }

    @Test
    void aScheduleCreatedFromJavaFiresFromSqlAsTheJavaTickerWould() {
        PostgresQueueConfig config = PostgresQueueConfig.defaults().schema(SqlTestDatabase.SCHEMA).listen(false);
        try (PostgresQueue queue = PostgresQueue.create(db.dataSource, config)) {
            queue.namespace("java").schedules().create(Schedule.every("report", Duration.ofMinutes(10))
                    .publishing(Message.to("reports").json("{\"kind\":\"daily\"}").priority(2)));
        }
        age("java", "report", "10 minutes 5 seconds", "10 minutes");

        List<Map<String, Object>> fired = db.rows("SELECT * FROM queue.tick_schedules()");

        assertThat(fired).singleElement().satisfies(row -> assertThat(row.get("namespace")).isEqualTo("java"));
        Map<String, Object> message = db.rows("SELECT * FROM queue.inspect('java', ?)", fired.get(0).get("job_id")).get(0);
        assertThat(message.get("payload").toString()).isEqualTo("{\"kind\":\"daily\"}");
        assertThat(message.get("priority")).isEqualTo(2);
        try (PostgresQueue queue = PostgresQueue.create(db.dataSource, config)) {
            ScheduleInfo info = queue.namespace("java").schedules().get("report").orElseThrow();
            assertThat(info.lastRunAt()).isEqualTo(((OffsetDateTime) fired.get(0).get("due_at")).toInstant());
            assertThat(info.nextRunAt()).isEqualTo(((OffsetDateTime) fired.get(0).get("next_run_at")).toInstant());
        }
    }

    @Test
    void aCronScheduleFiresItsLatestDueTimeInItsZoneAndRejectsAnExpressionThatNeverMatches() {
        assertThat(db.value("SELECT queue.create_schedule('cron', 'report', 'reports', '{}', p_cron_expression := '0 9 * * *',"
                + " p_timezone := 'Europe/Paris')")).isEqualTo("created");
        OffsetDateTime next = (OffsetDateTime) db.value("SELECT next_run_at FROM queue.list_schedules('cron')");
        assertThat(next.atZoneSameInstant(java.time.ZoneId.of("Europe/Paris")).toLocalTime()).isEqualTo(java.time.LocalTime.of(9, 0));
        db.rows("UPDATE queue.schedules SET next_run_at = next_run_at - interval '3 days' WHERE namespace = 'cron'");

        List<Map<String, Object>> fired = db.rows("SELECT * FROM queue.tick_schedules('cron')");

        assertThat(fired).singleElement().satisfies(row -> {
            assertThat(row.get("due_at")).isEqualTo(next.minusDays(1));
            assertThat(row.get("next_run_at")).isEqualTo(next);
        });
        assertThat(db.error("SELECT queue.create_schedule('cron', 'never', 'q', '{}', p_cron_expression := '0 0 31 2 *')")
                .getServerErrorMessage().getMessage())
                .isEqualTo("invalid p_cron_expression: expected an expression that matches at least one time, but it never does,"
                        + " got: \"0 0 31 2 *\"");
        assertThat(db.error("SELECT queue.create_schedule('cron', 'short', 'q', '{}', p_cron_expression := '*/5 * * *')").getSQLState())
                .isEqualTo("QU001");
        assertThat(db.count("SELECT count(*) FROM queue.schedules WHERE namespace = 'cron'")).isEqualTo(1);
    }
}
