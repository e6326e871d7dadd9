package dev.queue.postgres;

import dev.queue.api.Message;
import dev.queue.api.Namespace;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Acknowledgements when the database does not record them: slowly, or with a failed call.
 *
 * <p>A database that records acknowledgements slower than handlers finish must slow the claiming down, not let the
 * unrecorded acknowledgements pile up until they outlive their leases. Here the database stops recording them
 * altogether: another transaction holds a row lock on the first handled message, so the statement completing it
 * (and every one queued behind it) waits. The subscriber has to stop claiming near its bound of unrecorded
 * acknowledgements, and once the lock goes, finish everything, each message once.
 */
class SlowAcknowledgementTest {

    private static final int MESSAGES = 4_000;
    /** The runtime's bound of unrecorded acknowledgements (two statements of 500). */
    private static final int UNRECORDED_BOUND = 1_000;
    private static final int CONCURRENCY = 20;

    @Test
    void claimingPausesWhileAcknowledgementsWaitAndResumesWhenTheyAreRecorded() throws Exception {
        String schema = PostgresTestServer.freshSchema("slowack");
        QueueOptions options = QueueOptions.defaults().scheduleTickInterval(Duration.ZERO);
        PostgresQueueConfig config = PostgresQueueConfig.defaults().schema(schema).queueOptions(options).poolSize(4);
        AtomicReference<Connection> rowLock = new AtomicReference<>();
        CountDownLatch locked = new CountDownLatch(1);
        try (PostgresQueue queue = PostgresQueue.connect(PostgresTestServer.jdbcUrl(), null, null, config)) {
            Namespace ns = queue.namespace("slowack");
            List<Message> batch = new ArrayList<>();
            for (int i = 0; i < MESSAGES; i++) {
                batch.add(Message.to("t").json("{\"i\":" + i + "}"));
                if (batch.size() == 500) {
                    ns.publishAll(batch);
                    batch.clear();
                }
            }
            Set<Long> handled = ConcurrentHashMap.newKeySet();
            Set<Long> twice = ConcurrentHashMap.newKeySet();
            try (Subscription subscription = ns.subscribe(Subscriber.on("t").concurrency(CONCURRENCY).lease(Duration.ofMinutes(2))
                    .handleDelivery((delivery, ctx) -> {
                        if (rowLock.get() == null && handled.isEmpty()) {
                            synchronized (rowLock) {
                                if (rowLock.get() == null) {
                                    rowLock.set(lockRow(schema, delivery.id().value()));
                                    locked.countDown();
                                }
                            }
                        }
                        if (!handled.add(delivery.id().value())) {
                            twice.add(delivery.id().value());
                        }
                    }))) {
                try {
                    assertThat(locked.await(30, TimeUnit.SECONDS)).isTrue();
                    // The bound fills up: every acknowledgement after the locked one waits behind it.
                    await().atMost(Duration.ofSeconds(30)).until(() -> handled.size() >= UNRECORDED_BOUND);
                    // And claiming stops there, give or take the handlers that were running and the last claim.
                    await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5))
                            .until(() -> handled.size() <= UNRECORDED_BOUND + 2 * CONCURRENCY);
                    assertThat(ns.stats().pending()).isGreaterThanOrEqualTo(MESSAGES - UNRECORDED_BOUND - 2 * CONCURRENCY);
                } finally {
                    // Also when an assertion failed: closing the subscription flushes, which would wait on the lock.
                    if (rowLock.get() != null) {
                        rowLock.get().rollback();
                    }
                }
                await().atMost(Duration.ofSeconds(60)).until(() -> handled.size() == MESSAGES);
                await().atMost(Duration.ofSeconds(30)).until(() -> ns.stats().pending() == 0 && ns.stats().running() == 0);
                assertThat(subscription.isRunning()).isTrue();
            }
            assertThat(twice).isEmpty();
        } finally {
            Connection connection = rowLock.get();
            if (connection != null) {
                connection.close();
            }
            PostgresTestServer.dropSchema(schema);
        }
    }

    /**
     * The connection recording acknowledgements is cut in the middle of a statement (here: while it waits behind a
     * row lock, terminated by the server). The failed call must be retried, not dropped: dropped, its messages
     * would stay running until their two-minute leases expired and then run a second time.
     */
    @Test
    void anAcknowledgementCallThatFailsIsRetriedInsteadOfDropped() throws Exception {
        String schema = PostgresTestServer.freshSchema("cutack");
        QueueOptions options = QueueOptions.defaults().scheduleTickInterval(Duration.ZERO);
        PostgresQueueConfig config = PostgresQueueConfig.defaults().schema(schema).queueOptions(options).poolSize(4);
        int messages = 2_000;
        AtomicReference<Connection> rowLock = new AtomicReference<>();
        CountDownLatch locked = new CountDownLatch(1);
        try (PostgresQueue queue = PostgresQueue.connect(PostgresTestServer.jdbcUrl(), null, null, config)) {
            Namespace ns = queue.namespace("cutack");
            List<Message> batch = new ArrayList<>();
            for (int i = 0; i < messages; i++) {
                batch.add(Message.to("t").json("{\"i\":" + i + "}"));
                if (batch.size() == 500) {
                    ns.publishAll(batch);
                    batch.clear();
                }
            }
            Set<Long> handled = ConcurrentHashMap.newKeySet();
            Set<Long> twice = ConcurrentHashMap.newKeySet();
            try (Subscription subscription = ns.subscribe(Subscriber.on("t").concurrency(CONCURRENCY).lease(Duration.ofMinutes(2))
                    .handleDelivery((delivery, ctx) -> {
                        synchronized (rowLock) {
                            if (rowLock.get() == null) {
                                rowLock.set(lockRow(schema, delivery.id().value()));
                                locked.countDown();
                            }
                        }
                        if (!handled.add(delivery.id().value())) {
                            twice.add(delivery.id().value());
                        }
                    }))) {
                try {
                    assertThat(locked.await(30, TimeUnit.SECONDS)).isTrue();
                    AtomicReference<Integer> blocked = new AtomicReference<>();
                    await().atMost(Duration.ofSeconds(30)).until(() -> {
                        blocked.set(completionWaitingOnALock(schema));
                        return blocked.get() != null;
                    });
                    PostgresTestServer.execute("SELECT pg_terminate_backend(" + blocked.get() + ")");
                } finally {
                    if (rowLock.get() != null) {
                        rowLock.get().rollback();
                    }
                }
                // Well inside the two-minute lease: only a retried acknowledgement can have completed these.
                await().atMost(Duration.ofSeconds(30)).until(() -> handled.size() == messages);
                await().atMost(Duration.ofSeconds(30)).until(() -> ns.stats().pending() == 0 && ns.stats().running() == 0);
                assertThat(ns.stats().completed()).isEqualTo(messages);
                assertThat(subscription.isRunning()).isTrue();
            }
            assertThat(twice).isEmpty();
        } finally {
            Connection connection = rowLock.get();
            if (connection != null) {
                connection.close();
            }
            PostgresTestServer.dropSchema(schema);
        }
    }

    /** The server process of a statement completing messages of the schema while it waits for a lock, or null. */
    private static Integer completionWaitingOnALock(String schema) {
        try (Connection connection = PostgresTestServer.dataSource().getConnection();
             PreparedStatement statement = connection.prepareStatement(
                     "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE ? LIMIT 1")) {
            statement.setString(1, "%DELETE FROM \"" + schema + "\".messages%");
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next() ? rows.getInt(1) : null;
            }
        } catch (SQLException e) {
            throw new IllegalStateException("could not read pg_stat_activity", e);
        }
    }

    /** Locks one message's row in a transaction left open, so that any statement deleting it waits. */
    private static Connection lockRow(String schema, long id) {
        try {
            Connection connection = PostgresTestServer.dataSource().getConnection();
            connection.setAutoCommit(false);
            try (PreparedStatement statement = connection.prepareStatement(
                    "SELECT id FROM \"" + schema + "\".messages WHERE id = ? FOR UPDATE")) {
                statement.setLong(1, id);
                try (ResultSet rows = statement.executeQuery()) {
                    assertThat(rows.next()).as("row of message %d", id).isTrue();
                }
            }
            return connection;
        } catch (SQLException e) {
            throw new IllegalStateException("could not lock the row of message " + id, e);
        }
    }
}
