package dev.queue.postgres;

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

    private final List<String> schemas = new ArrayList<>();

    @AfterAll
    void dropSchemas() {
        schemas.forEach(PostgresTestServer::dropSchema);
    }

    private PostgresQueueConfig config() {
        String schema = PostgresTestServer.freshSchema("audit");
        schemas.add(schema);
        return PostgresQueueConfig.defaults().schema(schema).listen(false);
    }

    private static List<String> strings(String sql, Object... params) throws SQLException {
        try (Connection connection = PostgresTestServer.dataSource().getConnection();
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
        try (PostgresQueue queue = PostgresQueue.create(PostgresTestServer.dataSource(), config)) {
            recordsTheActor(queue, config.schema(), "billing-service");
        }
    }

    @Test
    void theConfiguredActorIsRecordedOverTheQueuesOwnPool() throws SQLException {
        PostgresQueueConfig config = config().actor("it's ops").poolSize(2);
        try (PostgresQueue queue = PostgresQueue.connect(PostgresTestServer.jdbcUrl(), null, null, config)) {
            recordsTheActor(queue, config.schema(), "it's ops");
        }
    }

    @Test
    void withoutAnActorNothingIsRecordedAndABadOneIsRefused() throws SQLException {
        PostgresQueueConfig config = config();
        try (PostgresQueue queue = PostgresQueue.create(PostgresTestServer.dataSource(), config)) {
            MessageId id = queue.defaultNamespace().publish("t", "{}");
            assertThat(strings("SELECT coalesce(published_by, 'none') FROM \"" + config.schema() + "\".messages WHERE id = ?",
                    id.value())).containsExactly("none");
        }
        assertThatThrownBy(() -> config().actor("")).isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> config().actor("a\nb")).isInstanceOf(InvalidInputException.class);
    }
}
