package dev.queue.postgres;

import dev.queue.api.Delivery;
import dev.queue.api.InvalidInputException;
import dev.queue.api.ManualClock;
import dev.queue.api.Message;
import dev.queue.api.MessageContext;
import dev.queue.api.MessageId;
import dev.queue.api.Pull;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.codec.jackson.JacksonPayloadCodec;
import dev.queue.testkit.NullArgumentSweep;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The PostgreSQL adapter's public members reject null like any other bad input, and options are checked before
 * anything is built, so a null inside them is named rather than met as a NullPointerException on start.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresNullArgumentsTest {

    private static final Instant START = Instant.parse("2030-01-01T00:00:00Z");
    private final List<String> schemas = new ArrayList<>();
    private final List<MigratedSchema> migrated = new ArrayList<>();
    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterAll
    void cleanUp() throws Exception {
        for (AutoCloseable closeable : opened) {
            closeable.close();
        }
        schemas.forEach(PostgresTestServer::dropSchema);
        migrated.forEach(MigratedSchema::close);
    }

    @Test
    void nullOptionsInsideTheConfigAreRefusedByNameBeforeConnecting() {
        PostgresQueueConfig config = config().queueOptions(QueueOptions.defaults().sweepInterval(null));

        assertThatThrownBy(() -> PostgresQueue.connect(PostgresTestServer.jdbcUrl(), null, null, config))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("sweepInterval");
        assertThatThrownBy(() -> PostgresQueue.create(PostgresTestServer.dataSource(), config))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("sweepInterval");
        assertThatThrownBy(() -> PostgresQueue.create(PostgresTestServer.dataSource(),
                config().queueOptions(QueueOptions.defaults().defaultBackoff(null))))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("defaultBackoff");
    }

    @Test
    void everyPublicMemberRejectsNullWithATypedError() {
        JacksonPayloadCodec codec = new JacksonPayloadCodec();
        NullArgumentSweep sweep = new NullArgumentSweep()
                .sample(String.class, () -> "t")
                .sample(Duration.class, () -> Duration.ofMillis(5))
                .sample(QueueOptions.class, QueueOptions::defaults)
                .sample(PostgresQueueConfig.class, this::config)
                .sample(ManualClock.class, () -> new ManualClock(START))
                .sample(DataSource.class, PostgresTestServer::dataSource)
                .sample(Connection.class, this::connection)
                .sample(Message.class, () -> Message.to("t"))
                .sampleByGenericType(List.class, generic -> List.of(Message.to("t")))
                .sample(Delivery.class, () -> delivery(codec))
                .sample(MessageContext.class, () -> context(delivery(codec)))
                .sample(Object.class, () -> "x")
                .sample(Collection.class, List::of)
                .sample(MessageId.class, () -> MessageId.of(1))
                .sample(Pull.class, () -> Pull.from("t"))
                .sample(Subscriber.class, () -> Subscriber.on("t").handleDelivery((d, c) -> { }))
                .instance(PostgresQueue.class, this::queue)
                .instance(PostgresNamespace.class, () -> queue().defaultNamespace());

        List<String> failures = sweep.failuresIn(List.of(PostgresQueueConfig.class, PostgresQueue.class, PostgresNamespace.class,
                CompletedRetention.class));

        assertThat(failures).isEmpty();
    }

    private PostgresQueueConfig config() {
        String schema = PostgresTestServer.freshSchema("nulls");
        schemas.add(schema);
        return PostgresQueueConfig.defaults().schema(schema).poolSize(2);
    }

    /** A queue started on a migrated schema of its own (the sweep calls each member on a new one). */
    private PostgresQueue queue() {
        MigratedSchema schema = PostgresTestServer.migratedSchema("nulls");
        migrated.add(schema);
        PostgresQueue queue = PostgresQueue.connect(schema.jdbcUrl(), null, null,
                PostgresQueueConfig.defaults().schema(schema.schema()).poolSize(2));
        opened.add(queue);
        return queue;
    }

    private Connection connection() {
        try {
            Connection connection = PostgresTestServer.dataSource().getConnection();
            opened.add(connection);
            return connection;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Delivery delivery(JacksonPayloadCodec codec) {
        return new Delivery(MessageId.of(1), "n", "t", "{}", Map.of(), 0, 1, 3, 7L, "w", START, START, codec);
    }

    private static MessageContext context(Delivery delivery) {
        return new MessageContext() {
            @Override
            public Delivery delivery() {
                return delivery;
            }

            @Override
            public void retryIn(Duration delay, String reason) {
            }

            @Override
            public void fail(String reason) {
            }
        };
    }
}
