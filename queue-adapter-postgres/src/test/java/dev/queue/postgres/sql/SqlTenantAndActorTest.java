package dev.queue.postgres.sql;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.util.PSQLException;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** The tenant and actor context: refusal of other namespaces, what the actor is recorded on, and pool hygiene. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlTenantAndActorTest {

    private SqlTestDatabase db;

    @BeforeAll
    void createDatabase() {
        db = SqlTestDatabase.create("sqltenant");
        db.value("SELECT queue.push('globex', 'email', '{}')");
    }

    @AfterAll
    void dropDatabase() {
        db.close();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {
            "SELECT queue.push('globex', 'email', '{}')",
            "SELECT * FROM queue.push_batch('globex', 'email', ARRAY['{}']::json[])",
            "SELECT * FROM queue.pull('globex', 'email')",
            "SELECT * FROM queue.pull_batch('globex', 'email')",
            "SELECT * FROM queue.pull_any('globex', ARRAY['email'])",
            "SELECT queue.ack('globex', 1)",
            "SELECT * FROM queue.ack_batch('globex', ARRAY[1])",
            "SELECT queue.nack('globex', 1)",
            "SELECT queue.fail('globex', 1)",
            "SELECT queue.extend_visibility('globex', 1, '1 minute')",
            "SELECT * FROM queue.get_stats('globex')",
            "SELECT * FROM queue.get_queue_stats('globex')",
            "SELECT * FROM queue.inspect('globex', 1)",
            "SELECT * FROM queue.list_dead_letters('globex')",
            "SELECT * FROM queue.redrive_dead_letters('globex', p_queue := 'email')",
            "SELECT queue.purge_dead_letters('globex')",
            "SELECT * FROM queue.rescue_expired('globex')",
            "SELECT * FROM queue.rescue_expired()",
            "SELECT queue.create_schedule('globex', 's', 'q', '{}', p_every_interval := '1 hour')",
            "SELECT queue.update_schedule('globex', 's', p_priority := 1)",
            "SELECT queue.delete_schedule('globex', 's')",
            "SELECT * FROM queue.list_schedules('globex')",
            "SELECT queue.pause_schedule('globex', 's')",
            "SELECT queue.resume_schedule('globex', 's')",
            "SELECT * FROM queue.tick_schedules('globex')",
            "SELECT * FROM queue.tick_schedules()",
            "SELECT * FROM queue.set_queue_policy('globex', 'email', p_max_attempts := 3)",
            "SELECT * FROM queue.set_queue_policy('*', '*', p_max_attempts := 3)",
            "SELECT queue.delete_queue_policy('globex', 'email')",
    })
    void withATenantSetEveryFunctionRefusesAnotherNamespaceNamingBoth(String sql) throws SQLException {
        Map<String, String> before = db.footprint();
        try (Connection connection = db.connect()) {
            SqlTestDatabase.rows(connection, "SELECT queue.set_tenant('acme')");

            PSQLException error = catchThrowableOfType(() -> SqlTestDatabase.rows(connection, sql), PSQLException.class);

            assertThat((Object) error).as("the error of " + sql).isNotNull();
            assertThat(error.getSQLState()).isEqualTo("QU002");
            assertThat(error.getServerErrorMessage().getMessage()).contains("\"acme\"")
                    .containsAnyOf("\"globex\"", "\"*\"", "null");
        }
        assertThat(db.footprint()).isEqualTo(before);
    }

    @Test
    void withATenantSetItsOwnNamespaceWorksAndClearingTheTenantLiftsTheCheck() throws SQLException {
        try (Connection connection = db.connect()) {
            assertThat(SqlTestDatabase.rows(connection, "SELECT queue.set_tenant('acme') AS t")).extracting(r -> r.get("t")).containsExactly("acme");
            assertThat(SqlTestDatabase.rows(connection, "SELECT queue.push('acme', 'email', '{}') AS id").get(0).get("id")).isNotNull();
            assertThat(SqlTestDatabase.rows(connection, "SELECT queue.current_tenant() AS t").get(0).get("t")).isEqualTo("acme");
            SqlTestDatabase.rows(connection, "SELECT queue.clear_tenant()");
            assertThat(SqlTestDatabase.rows(connection, "SELECT queue.current_tenant() AS t").get(0).get("t")).isNull();
            assertThat(SqlTestDatabase.rows(connection, "SELECT queue.push('globex', 'email', '{}') AS id").get(0).get("id")).isNotNull();
        }
    }

    @Test
    void theActorIsRecordedOnWhatItDoes() throws SQLException {
        try (Connection alice = db.connect(); Connection bob = db.connect()) {
            SqlTestDatabase.rows(alice, "SELECT queue.set_actor('alice')");
            SqlTestDatabase.rows(bob, "SELECT queue.set_actor('bob')");
            long id = (Long) SqlTestDatabase.rows(alice, "SELECT queue.push('audit', 'q', '{}') AS id").get(0).get("id");
            assertThat(SqlTestDatabase.rows(bob, "SELECT published_by FROM queue.pull('audit', 'q')"))
                    .extracting(r -> r.get("published_by")).containsExactly("alice");
            SqlTestDatabase.rows(bob, "SELECT queue.fail('audit', ?, 'no')", id);
            assertThat(db.rows("SELECT published_by, failed_by FROM queue.list_dead_letters('audit')"))
                    .extracting(r -> r.values().toString()).containsExactly("[alice, bob]");

            SqlTestDatabase.rows(alice, "SELECT * FROM queue.redrive_dead_letters('audit', p_queue := 'q')");
            assertThat(db.rows("SELECT published_by, redriven_by FROM queue.messages WHERE id = ?", id))
                    .extracting(r -> r.values().toString()).containsExactly("[alice, alice]");
            SqlTestDatabase.rows(bob, "SELECT * FROM queue.pull('audit', 'q')");
            SqlTestDatabase.rows(bob, "SELECT queue.fail('audit', ?)", id);
            SqlTestDatabase.rows(bob, "SELECT queue.purge_dead_letters('audit')");
            assertThat(db.rows("SELECT action, actor, ids FROM queue.audit_log WHERE namespace = 'audit' ORDER BY id"))
                    .extracting(r -> r.get("action") + " " + r.get("actor") + " " + r.get("ids"))
                    .containsExactly("redrive_dead_letters alice {" + id + "}", "purge_dead_letters bob {" + id + "}");

            SqlTestDatabase.rows(alice, "SELECT queue.create_schedule('audit', 'nightly', 'q', '{}', p_every_interval := '1 day')");
            SqlTestDatabase.rows(bob, "SELECT queue.pause_schedule('audit', 'nightly')");
            assertThat(db.rows("SELECT paused, paused_by, updated_by FROM queue.list_schedules('audit')"))
                    .extracting(r -> r.values().toString()).containsExactly("[true, bob, alice]");

            SqlTestDatabase.rows(alice, "SELECT queue.clear_actor()");
            long anonymous = (Long) SqlTestDatabase.rows(alice, "SELECT queue.push('audit', 'q', '{}') AS id").get(0).get("id");
            assertThat(db.value("SELECT published_by FROM queue.inspect('audit', ?)", anonymous)).isNull();
        }
    }

    /**
     * A pool of one connection, so the second request gets the physical connection of the first. Context set
     * transaction-locally (as the Java adapter sets it) ends with the first request's transaction.
     */
    @Test
    void aPooledConnectionReusedByASecondRequestDoesNotKeepATransactionLocalTenantOrActor() throws SQLException {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(db.jdbcUrl);
        config.setMaximumPoolSize(1);
        config.setMinimumIdle(1);
        config.setPoolName("sql-context");
        try (HikariDataSource pool = new HikariDataSource(config)) {
            Object firstBackend;
            try (Connection first = pool.getConnection()) {
                first.setAutoCommit(false);
                SqlTestDatabase.rows(first, "SELECT queue.set_tenant('tenant-one', p_local := true)");
                SqlTestDatabase.rows(first, "SELECT queue.set_actor('alice', p_local := true)");
                SqlTestDatabase.rows(first, "SELECT queue.push('tenant-one', 'q', '{}')");
                firstBackend = SqlTestDatabase.rows(first, "SELECT pg_backend_pid() AS pid").get(0).get("pid");
                first.commit();
            }
            try (Connection second = pool.getConnection()) {
                assertThat(SqlTestDatabase.rows(second, "SELECT pg_backend_pid() AS pid").get(0).get("pid")).isEqualTo(firstBackend);
                assertThat(SqlTestDatabase.rows(second, "SELECT queue.current_tenant() AS t, queue.current_actor() AS a"))
                        .extracting(r -> r.values().toString()).containsExactly("[null, null]");
                long id = (Long) SqlTestDatabase.rows(second, "SELECT queue.push('tenant-two', 'q', '{}') AS id").get(0).get("id");
                assertThat(SqlTestDatabase.rows(second, "SELECT published_by FROM queue.inspect('tenant-two', ?)", id))
                        .extracting(r -> r.get("published_by")).containsExactly((Object) null);
            }
            assertThat(db.rows("SELECT published_by FROM queue.messages WHERE namespace = 'tenant-one'"))
                    .extracting(r -> r.get("published_by")).containsExactly("alice");

            // session-level context does outlive the request, which is why pooled callers set it locally
            try (Connection third = pool.getConnection()) {
                SqlTestDatabase.rows(third, "SELECT queue.set_actor('carol')");
            }
            try (Connection fourth = pool.getConnection()) {
                List<Map<String, Object>> actor = SqlTestDatabase.rows(fourth, "SELECT queue.current_actor() AS a");
                assertThat(actor).extracting(r -> r.get("a")).containsExactly("carol");
                SqlTestDatabase.rows(fourth, "SELECT queue.clear_actor()");
            }
        }
    }
}
