package dev.queue.postgres;

import dev.queue.api.Delivery;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.Pull;
import dev.queue.api.StoreUnavailableException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Keyed messages published in the caller's transaction take their place when it commits, and a transaction above
 * READ COMMITTED is refused (QU006) with nothing stored: its snapshot could not see the key's other writers.
 */
class OrderingKeyCallerTransactionTest {

    private final String schema = PostgresTestServer.freshSchema("keyedtx");
    private final PostgresQueue queue = PostgresQueue.create(PostgresTestServer.dataSource(),
            PostgresQueueConfig.defaults().schema(schema));

    @AfterEach
    void close() {
        queue.close();
        PostgresTestServer.dropSchema(schema);
    }

    @Test
    void aKeyedPublishInTheCallersTransactionJoinsItsKeyAtCommit() throws Exception {
        MessageId first = queue.defaultNamespace().publish(Message.to("t").orderingKey("k").json("{}")).id();
        MessageId second;
        try (Connection connection = PostgresTestServer.dataSource().getConnection()) {
            connection.setAutoCommit(false);
            second = queue.defaultNamespace().publish(connection, Message.to("t").orderingKey("k").json("{}")).id();
            connection.commit();
        }
        assertThat(queue.defaultNamespace().inspect(second).orElseThrow().waitingForKey()).isTrue();
        Delivery head = queue.defaultNamespace().pullOne(Pull.from("t")).orElseThrow();
        assertThat(head.id()).isEqualTo(first);
        assertThat(queue.defaultNamespace().pull(Pull.from("t").limit(10))).isEmpty();
        queue.defaultNamespace().ack(head);
        assertThat(queue.defaultNamespace().pullOne(Pull.from("t")).orElseThrow().id()).isEqualTo(second);
    }

    @Test
    void aKeyedPublishInARepeatableReadTransactionIsRefused() throws Exception {
        try (Connection connection = PostgresTestServer.dataSource().getConnection()) {
            connection.setAutoCommit(false);
            connection.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            assertThatThrownBy(() -> queue.defaultNamespace().publish(connection,
                    Message.to("t").orderingKey("k").json("{}")))
                    .isInstanceOf(StoreUnavailableException.class)
                    .hasMessageContaining("QU006").hasMessageContaining("REPEATABLE READ");
            connection.rollback();
        }
        assertThat(queue.defaultNamespace().stats().pending()).isZero();
        // the key was left free: the next publish of it is its head
        MessageId next = queue.defaultNamespace().publish(Message.to("t").orderingKey("k").json("{}")).id();
        assertThat(queue.defaultNamespace().inspect(next).orElseThrow().waitingForKey()).isFalse();
    }
}
