package dev.queue.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.queue.api.Delivery;
import dev.queue.api.InvalidInputException;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.MessageInfo;
import dev.queue.api.MessageState;
import dev.queue.api.Pull;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The Java side's actor in the audit trail, and the attempt history through inspect. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresAuditTrailTest {

    private final List<MigratedSchema> schemas = new ArrayList<>();
    /** The test's migrated schema (a database of its own), made by {@link #config()}. */
    private MigratedSchema migrated;

    @AfterAll
    void dropSchemas() {
        schemas.forEach(MigratedSchema::close);
    }

    /** A config for a migrated schema of the test's own. */
    private PostgresQueueConfig config() {
        migrated = PostgresTestServer.migratedSchema("audit");
        schemas.add(migrated);
        return PostgresQueueConfig.defaults().schema(migrated.schema()).listen(false);
    }

    private List<String> strings(String sql, Object... params) throws SQLException {
        try (Connection connection = migrated.dataSource().getConnection();
             PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                statement.setObject(i + 1, params[i]);
            }
            List<String> values = new ArrayList<>();
            try (ResultSet result = statement.executeQuery()) {
                while (result.next()) {
                    values.add(result.getString(1));
                }
            }
            return values;
        }
    }

    private void recordsTheActor(PostgresQueue queue, String schema, String actor) throws SQLException {
        MessageId id = queue.defaultNamespace().publish(Message.to("t").json("{}").maxAttempts(2)).id();
        Delivery first = queue.defaultNamespace().pullOne(Pull.from("t").worker("w1")).orElseThrow();
        queue.defaultNamespace().nack(first, "try again", java.time.Duration.ZERO);
        Delivery second = queue.defaultNamespace().pullOne(Pull.from("t").worker("w2")).orElseThrow();
        queue.defaultNamespace().fail(second, "no luck");

        assertThat(strings("SELECT published_by || ' ' || failed_by FROM \"" + schema + "\".dead_letters WHERE id = ?", id.value()))
                .containsExactly(actor + " " + actor);
        MessageInfo info = queue.defaultNamespace().inspect(id).orElseThrow();
        assertThat(info.state()).isEqualTo(MessageState.DEAD);
        assertThat(info.attemptHistory()).extracting(a -> a.attempt() + " " + a.error() + " " + a.worker())
                .containsExactly("1 try again w1", "2 no luck w2");
        assertThat(strings("SELECT actor FROM \"" + schema + "\".attempt_errors WHERE message_id = ? ORDER BY id", id.value()))
                .containsExactly(actor, actor);
    }

    @Test
    void theConfiguredActorIsRecordedOverTheApplicationsDataSource() throws SQLException {
        PostgresQueueConfig config = config().actor("billing-service");
        try (PostgresQueue queue = PostgresQueue.create(migrated.dataSource(), config)) {
            recordsTheActor(queue, config.schema(), "billing-service");
        }
    }

    @Test
    void theConfiguredActorIsRecordedOverTheQueuesOwnPool() throws SQLException {
        PostgresQueueConfig config = config().actor("it's ops").poolSize(2);
        try (PostgresQueue queue = PostgresQueue.connect(migrated.jdbcUrl(), null, null, config)) {
            recordsTheActor(queue, config.schema(), "it's ops");
        }
    }

    @Test
    void javaRedriveAndPurgeWriteTheAuditLogWithTheQueuesActor() throws SQLException {
        PostgresQueueConfig config = config().actor("ops-bot");
        try (PostgresQueue queue = PostgresQueue.create(migrated.dataSource(), config)) {
            var ns = queue.namespace("audited");
            List<MessageId> dead = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                dead.add(ns.publish(Message.to(i < 2 ? "a" : "b").json("{}").maxAttempts(1)).id());
                ns.fail(ns.pullOne(Pull.from(i < 2 ? "a" : "b").worker("w")).orElseThrow(), "boom");
            }
            assertThat(ns.deadLetters().redrive(dead.get(0))).isTrue();
            assertThat(ns.deadLetters().purge(dead.get(1))).isTrue();
            assertThat(ns.deadLetters().redriveAll("b")).isEqualTo(2);
            assertThat(ns.deadLetters().redrive(dead.get(0))).as("no longer dead: nothing to record").isFalse();
            assertThat(ns.deadLetters().purgeAll()).isZero();

            assertThat(strings("SELECT action || ' ' || actor || ' ' || coalesce(subject, '-') || ' ' || array_to_string(ids, ',') "
                    + "|| ' ' || count FROM \"" + config.schema() + "\".audit_log WHERE namespace = 'audited' ORDER BY id"))
                    .containsExactly(
                            "redrive_dead_letters ops-bot - " + dead.get(0).value() + " 1",
                            "purge_dead_letters ops-bot - " + dead.get(1).value() + " 1",
                            "redrive_dead_letters ops-bot b " + dead.get(2).value() + "," + dead.get(3).value() + " 2");
        }
    }

    @Test
    void theActorIsSetPerTransactionAndNeverLeftOnAPooledConnection() throws SQLException {
        PostgresQueueConfig config = config().actor("billing");
        // one connection: every statement of the queue runs on the session checked afterwards
        try (HikariDataSource pool = migrated.newPool("actor-leak", 1)) {
            Object backend;
            try (Connection connection = pool.getConnection(); PreparedStatement statement = connection.prepareStatement(
                    "SELECT pg_backend_pid(), set_config('queue.actor', 'mallory', false)"); ResultSet rs = statement.executeQuery()) {
                rs.next();
                backend = rs.getObject(1);
            }
            try (PostgresQueue queue = PostgresQueue.create(pool, config)) {
                assertThat(sessionActor(pool, backend)).as("another borrower's setting stays theirs").isEqualTo("mallory");
                resetActor(pool);
                MessageId id = queue.defaultNamespace().publish(Message.to("t").json("{}").maxAttempts(3)).id();
                Delivery delivery = queue.defaultNamespace().pullOne(Pull.from("t").worker("w1")).orElseThrow();
                queue.defaultNamespace().nack(delivery, "again", java.time.Duration.ZERO);
                queue.defaultNamespace().schedules().create(dev.queue.api.Schedule.every("s", java.time.Duration.ofHours(1))
                        .publishing(Message.to("t").json("{}")));
                queue.defaultNamespace().schedules().pause("s");
                assertThat(sessionActor(pool, backend)).as("the queue's actor is not left on the connection").isEmpty();

                assertThat(strings("SELECT actor FROM \"" + config.schema() + "\".attempt_errors WHERE message_id = ?", id.value()))
                        .containsExactly("billing");
                assertThat(strings("SELECT actor || ' ' || action FROM \"" + config.schema()
                        + "\".audit_log WHERE subject = 's' ORDER BY id"))
                        .containsExactly("billing schedule_created", "billing schedule_paused");
            }
        }
    }

    @Test
    void aQueueWithoutAnActorRecordsNoneEvenWhereAnotherBorrowerSetOne() throws SQLException {
        PostgresQueueConfig config = config();
        try (HikariDataSource pool = migrated.newPool("no-actor", 1);
             PostgresQueue queue = PostgresQueue.create(pool, config)) {
            try (Connection connection = pool.getConnection(); PreparedStatement statement = connection.prepareStatement(
                    "SELECT set_config('queue.actor', 'mallory', false)")) {
                statement.execute();
            }
            MessageId id = queue.defaultNamespace().publish(Message.to("t").json("{}").maxAttempts(3)).id();
            queue.defaultNamespace().nack(queue.defaultNamespace().pullOne(Pull.from("t").worker("w1")).orElseThrow(),
                    "again", java.time.Duration.ZERO);
            assertThat(strings("SELECT coalesce(nullif(actor, ''), 'none') FROM \"" + config.schema()
                    + "\".attempt_errors WHERE message_id = ?", id.value())).containsExactly("none");
            assertThat(strings("SELECT coalesce(published_by, 'none') FROM \"" + config.schema()
                    + "\".messages WHERE id = ?", id.value())).containsExactly("none");
        }
    }

    private static String sessionActor(HikariDataSource pool, Object backend) throws SQLException {
        try (Connection connection = pool.getConnection(); PreparedStatement statement = connection.prepareStatement(
                "SELECT pg_backend_pid(), coalesce(current_setting('queue.actor', true), '')"); ResultSet rs = statement.executeQuery()) {
            rs.next();
            assertThat(rs.getObject(1)).as("the pool's one connection").isEqualTo(backend);
            return rs.getString(2);
        }
    }

    private static void resetActor(HikariDataSource pool) throws SQLException {
        try (Connection connection = pool.getConnection(); PreparedStatement statement = connection.prepareStatement("RESET queue.actor")) {
            statement.execute();
        }
    }

    @Test
    void withoutAnActorNothingIsRecordedAndABadOneIsRefused() throws SQLException {
        PostgresQueueConfig config = config();
        try (PostgresQueue queue = PostgresQueue.create(migrated.dataSource(), config)) {
            MessageId id = queue.defaultNamespace().publish("t", "{}");
            assertThat(strings("SELECT coalesce(published_by, 'none') FROM \"" + config.schema() + "\".messages WHERE id = ?",
                    id.value())).containsExactly("none");
        }
        assertThatThrownBy(() -> config.actor("")).isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> config.actor("a\nb")).isInstanceOf(InvalidInputException.class);
    }
}
