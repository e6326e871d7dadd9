package dev.queue.postgres.sql;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.postgresql.util.PSQLException;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** The attempt history of migration 18 from SQL: start, end, outcome and worker of each attempt, as a tenant sees it. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlAttemptHistoryTest {

    /** Each attempt of inspect's history: number, outcome, worker, whether it has ended and started no later. */
    private static final String HISTORY = """
            SELECT (e->>'attempt')::int AS attempt, e->>'outcome' AS outcome, e->>'worker' AS worker, e->>'error' AS error,
                   (e->>'started_at')::timestamptz <= (e->>'ended_at')::timestamptz AS ordered, i.attempts_not_kept
            FROM queue.inspect(?, ?) i CROSS JOIN LATERAL jsonb_array_elements(i.attempt_history) e""";

    private SqlTenantRoles roles;
    private SqlTestDatabase db;
    private String acme;
    private String globex;

    @BeforeAll
    void createTenants() {
        roles = SqlTenantRoles.create("sqlattempts");
        db = roles.db;
        acme = roles.login("acme");
        globex = roles.login("globex");
        db.value("SELECT queue.grant_tenant('acme', ?)", acme);
        db.value("SELECT queue.grant_tenant('globex', ?)", globex);
    }

    @AfterAll
    void dropTenants() {
        roles.close();
    }

    @Test
    void aTenantSeesEachAttemptsStartEndOutcomeAndWorkerThroughDeadLetteringAndRedrive() throws SQLException {
        try (Connection tenant = roles.connectAs(acme)) {
            long id = ((Number) one(tenant, "SELECT queue.push('acme', 'email', '{}', p_max_attempts := 3)")).longValue();
            SqlTestDatabase.rows(tenant, "SELECT * FROM queue.pull('acme', 'email', 'w1')");
            one(tenant, "SELECT queue.nack('acme', ?, 'first', interval '0')", id);
            SqlTestDatabase.rows(tenant, "SELECT * FROM queue.pull('acme', 'email', 'w2')");
            assertThat(SqlTestDatabase.rows(tenant, HISTORY, "acme", id))
                    .extracting(r -> r.get("attempt") + " " + r.get("outcome") + " " + r.get("worker") + " " + r.get("ordered"))
                    .containsExactly("1 retry w1 true", "2 running w2 null");

            db.rows("UPDATE queue.messages SET lease_until = now() - interval '1 second' WHERE id = ?", id);
            SqlTestDatabase.rows(tenant, "SELECT * FROM queue.rescue_expired('acme')");
            SqlTestDatabase.rows(tenant, "SELECT * FROM queue.pull('acme', 'email', 'w3')");
            one(tenant, "SELECT queue.fail('acme', ?, 'third')", id);

            List<String> ended = List.of("1 retry w1 first true 0", "2 lease_expired w2 lease expired true 0",
                    "3 dead w3 third true 0");
            assertThat(SqlTestDatabase.rows(tenant, HISTORY, "acme", id))
                    .extracting(r -> r.get("attempt") + " " + r.get("outcome") + " " + r.get("worker") + " "
                            + r.get("error") + " " + r.get("ordered") + " " + r.get("attempts_not_kept"))
                    .containsExactlyElementsOf(ended);

            SqlTestDatabase.rows(tenant, "SELECT * FROM queue.redrive_dead_letters('acme', p_ids := ARRAY[?]::bigint[])", id);
            assertThat(SqlTestDatabase.rows(tenant, "SELECT attempt, outcome, worker_id, started_at <= ended_at AS ordered "
                    + "FROM queue.inspect_attempts('acme', ?)", id))
                    .extracting(r -> r.get("attempt") + " " + r.get("outcome") + " " + r.get("worker_id") + " " + r.get("ordered"))
                    .containsExactly("1 retry w1 true", "2 lease_expired w2 true", "3 dead w3 true");
            assertThat(one(tenant, "SELECT jsonb_array_length(attempt_history) FROM queue.explain('acme', ?)", id))
                    .isEqualTo(3);
        }
    }

    @Test
    void anotherTenantSeesNoneOfTheAttempts() throws SQLException {
        long id = ((Number) db.value("SELECT queue.push('acme', 'secret', '{}')")).longValue();
        db.rows("SELECT * FROM queue.pull('acme', 'secret', 'w1')");
        db.value("SELECT queue.nack('acme', ?, 'secret error', interval '0')", id);
        assertThat(db.rows("SELECT * FROM queue.inspect_attempts('acme', ?)", id)).hasSize(1);

        try (Connection other = roles.connectAs(globex)) {
            for (String sql : List.of("SELECT * FROM queue.inspect_attempts('acme', ?)", "SELECT * FROM queue.inspect('acme', ?)",
                    "SELECT * FROM queue.explain('acme', ?)", "SELECT * FROM queue.engine_attempts('acme', ?)")) {
                PSQLException error = catchThrowableOfType(() -> SqlTestDatabase.rows(other, sql, id), PSQLException.class);
                assertThat((Object) error).as(sql).isNotNull();
                assertThat(error.getSQLState()).as(sql).isEqualTo("QU005");
            }
            // its own namespace with the other's id: nothing, not even the running or failed attempts
            assertThat(SqlTestDatabase.rows(other, "SELECT * FROM queue.inspect_attempts('globex', ?)", id)).isEmpty();
            assertThat(SqlTestDatabase.rows(other, "SELECT * FROM queue.engine_attempts('globex', ?)", id)).isEmpty();
            assertThat(one(other, "SELECT attempt_history IS NULL FROM queue.explain('globex', ?)", id)).isEqualTo(true);
        }
    }

    @Test
    void twentyFiveFailuresKeepTheLastTwentyAndCountFive() {
        long id = ((Number) db.value("SELECT queue.push('acme', 'bulk', '{}', p_max_attempts := 30)")).longValue();
        for (int i = 1; i <= 25; i++) {
            db.rows("SELECT * FROM queue.pull('acme', 'bulk', 'w')");
            db.value("SELECT queue.nack('acme', ?, ?, interval '0')", id, "failure " + i);
        }

        Map<String, Object> row = db.rows("SELECT jsonb_array_length(attempt_history) AS kept, attempts_not_kept, "
                + "attempt_history->0->>'error' AS oldest FROM queue.inspect('acme', ?)", id).get(0);
        assertThat(row).containsEntry("kept", 20).containsEntry("attempts_not_kept", 5).containsEntry("oldest", "failure 6");
        assertThat(db.value("SELECT min(ordinal) FROM queue.inspect_attempts('acme', ?)", id)).isEqualTo(6);
        assertThat(db.value("SELECT attempts_not_kept FROM queue.explain('acme', ?)", id)).isEqualTo(5);
    }

    @Test
    void anArchivedCompletionShowsItsAttemptAsCompleted() {
        db.rows("SELECT queue.set_queue_policy('acme', 'archived', p_archive_completed := true)");
        long id = ((Number) db.value("SELECT queue.push('acme', 'archived', '{}')")).longValue();
        db.rows("SELECT * FROM queue.pull('acme', 'archived', 'w1')");
        db.value("SELECT queue.ack('acme', ?)", id);

        assertThat(db.rows("SELECT e->>'outcome' AS outcome, e->>'worker' AS worker, "
                + "(e->>'started_at')::timestamptz <= (e->>'ended_at')::timestamptz AS ordered "
                + "FROM queue.explain('acme', ?) x CROSS JOIN LATERAL jsonb_array_elements(x.attempt_history) e", id))
                .extracting(r -> r.get("outcome") + " " + r.get("worker") + " " + r.get("ordered"))
                .containsExactly("completed w1 true");
    }

    private static Object one(Connection connection, String sql, Object... params) throws SQLException {
        List<Map<String, Object>> rows = SqlTestDatabase.rows(connection, sql, params);
        assertThat(rows).as(sql).hasSize(1);
        return rows.get(0).values().iterator().next();
    }
}
