package dev.queue.postgres.sql;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.sql.Connection;
import java.sql.Savepoint;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The users' quick start, statement by statement as they wrote it, in one psql-like session on a fresh database,
 * each checked against what their description shows. Their ack, nack and fail of job 1 are alternatives ("success",
 * "failure", "permanent failure"), so each runs from the same running job, rolled back to a savepoint in between.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlQuickStartTest {

    private SqlTestDatabase db;

    @BeforeAll
    void createDatabase() {
        db = SqlTestDatabase.create("sqlquick");
    }

    @AfterAll
    void dropDatabase() {
        db.close();
    }

    private static List<Map<String, Object>> run(Connection session, String sql) throws Exception {
        return SqlTestDatabase.rows(session, sql);
    }

    private static Object single(Connection session, String sql) throws Exception {
        List<Map<String, Object>> rows = run(session, sql);
        assertThat(rows).as(sql).hasSize(1);
        assertThat(rows.get(0)).as(sql).hasSize(1);
        return rows.get(0).values().iterator().next();
    }

    @Test
    void everyStatementOfTheQuickStartRunsAndReturnsWhatTheDescriptionShows() throws Exception {
        try (Connection session = db.connect()) {
            run(session, "SELECT queue.set_tenant('acme');");

            assertThat(single(session, "SELECT queue.push('acme', 'email', '{\"to\": \"alice@example.com\", \"subject\": \"Welcome\"}');"))
                    .isEqualTo(1L);

            List<Map<String, Object>> pulled = run(session, "SELECT * FROM queue.pull('acme', 'email', p_worker_id := 'worker-1');");
            assertThat(pulled).singleElement().satisfies(job -> {
                assertThat(job).containsEntry("id", 1L).containsEntry("queue", "email").containsEntry("attempts", 1);
                assertThat(job.get("payload").toString()).isEqualTo("{\"to\": \"alice@example.com\", \"subject\": \"Welcome\"}");
            });

            session.setAutoCommit(false);
            Savepoint running = session.setSavepoint();
            assertThat(single(session, "SELECT queue.ack('acme', 1);")).isEqualTo(true);
            assertThat(run(session, "SELECT * FROM queue.inspect('acme', 1)")).isEmpty();
            session.rollback(running);

            assertThat(single(session, "SELECT queue.nack('acme', 1, p_error := 'SMTP timeout');")).isEqualTo(true);
            assertThat(run(session, "SELECT state, last_error, run_at > statement_timestamp() AS backing_off FROM queue.inspect('acme', 1)"))
                    .extracting(r -> r.values().toString()).containsExactly("[pending, SMTP timeout, true]");
            session.rollback(running);

            assertThat(single(session, "SELECT queue.fail('acme', 1, p_error := 'invalid recipient');")).isEqualTo(true);
            assertThat(run(session, "SELECT state, last_error FROM queue.inspect('acme', 1)"))
                    .extracting(r -> r.values().toString()).containsExactly("[dead, invalid recipient]");
            session.commit();
            session.setAutoCommit(true);

            assertThat(single(session, """
                    SELECT queue.create_schedule(
                        'acme', 'cleanup', 'maintenance',
                        '{"action": "expire_sessions"}',
                        p_cron_expression := '*/5 * * * *'
                    );""")).isEqualTo("created");
            assertThat(single(session, """
                    SELECT queue.create_schedule(
                        'acme', 'sync', 'data',
                        '{"source": "upstream"}',
                        p_every_interval := '2 hours'
                    );""")).isEqualTo("created");

            String tick = "SELECT * FROM queue.tick_schedules('acme');";
            assertThat(run(session, tick)).as("nothing is due yet").isEmpty();
            // as if both had been created one period earlier, so each has a due time behind it
            run(session, "UPDATE queue.schedules SET next_run_at = next_run_at - interval '5 minutes' WHERE name = 'cleanup'");
            run(session, "UPDATE queue.schedules SET next_run_at = next_run_at - interval '2 hours',"
                    + " created_at = created_at - interval '2 hours' WHERE name = 'sync'");
            List<Map<String, Object>> fired = run(session, tick);
            assertThat(fired).extracting(r -> r.get("schedule_name")).containsExactlyInAnyOrder("cleanup", "sync");
            assertThat(fired).allSatisfy(r -> {
                assertThat(r).containsKeys("schedule_name", "job_id", "next_run_at");
                assertThat(r.get("job_id")).isNotNull();
                assertThat((OffsetDateTime) r.get("next_run_at")).isAfter(OffsetDateTime.now().minusMinutes(1));
            });
            OffsetDateTime cleanupNext = (OffsetDateTime) fired.stream().filter(r -> r.get("schedule_name").equals("cleanup"))
                    .findFirst().orElseThrow().get("next_run_at");
            assertThat(cleanupNext.getMinute() % 5).isZero();
            assertThat(cleanupNext.getSecond()).isZero();

            assertThat(single(session, "SELECT queue.pause_schedule('acme', 'cleanup');")).isEqualTo(true);
            assertThat(single(session, "SELECT queue.resume_schedule('acme', 'cleanup');")).isEqualTo(true);

            // the description's numbering has jobs 2 to 4 published between its sections: the ids continue from there
            run(session, "SELECT setval('queue.message_ids', 4)");
            assertThat(single(session, "SELECT queue.push('acme', 'sync', '{\"user\": 42}', p_unique_key := 'sync:user:42');"))
                    .isEqualTo(5L);
            assertThat(single(session, "SELECT queue.push('acme', 'sync', '{\"user\": 42}', p_unique_key := 'sync:user:42');"))
                    .isNull();

            assertThat(run(session, "SELECT * FROM queue.pull_any('acme', ARRAY['critical', 'default', 'bulk']);")).isEmpty();
            run(session, "SELECT queue.push('acme', 'email', '{}')");
            assertThat(run(session, "SELECT * FROM queue.pull_batch('acme', 'email', p_limit := 10);")).hasSize(1);
            assertThat(run(session, "SELECT queue.ack_batch('acme', ARRAY[1, 2, 3]);")).hasSize(3);
            assertThat(single(session, "SELECT queue.extend_visibility('acme', 1, '10 minutes');")).isEqualTo(false);

            List<Map<String, Object>> stats = run(session, "SELECT * FROM queue.get_stats('acme');");
            assertThat(stats).singleElement().satisfies(row -> assertThat(row.keySet())
                    .containsExactly("total_jobs", "pending", "running", "completed", "dead", "total_queues"));
            assertThat(stats.get(0).values().toString()).isEqualTo("[5, 3, 1, 0, 1, 4]");

            run(session, "SELECT queue.clear_actor()");
        }
    }
}
