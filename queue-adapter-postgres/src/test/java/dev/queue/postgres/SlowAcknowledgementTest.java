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
        try (LockedAcknowledgements run = new LockedAcknowledgements("slowack", MESSAGES)) {
            try (Subscription subscription = run.subscribe()) {
                try {
                    run.awaitLocked();
                    // The bound fills up: every acknowledgement after the locked one waits behind it.
                    await().atMost(Duration.ofSeconds(30)).until(() -> run.handled.size() >= UNRECORDED_BOUND);
                    // And claiming stops there, give or take the handlers that were running and the last claim.
                    await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5))
                            .until(() -> run.handled.size() <= UNRECORDED_BOUND + 2 * CONCURRENCY);
                    assertThat(run.ns.stats().pending()).isGreaterThanOrEqualTo(MESSAGES - UNRECORDED_BOUND - 2 * CONCURRENCY);
                } finally {
                    run.releaseLock();
                }
                await().atMost(Duration.ofSeconds(60)).until(() -> run.handled.size() == MESSAGES);
                await().atMost(Duration.ofSeconds(30)).until(() -> run.ns.stats().pending() == 0 && run.ns.stats().running() == 0);
                assertThat(subscription.isRunning()).isTrue();
            }
            assertThat(run.twice).isEmpty();
        }
    }

    /**
     * The connection recording acknowledgements is cut in the middle of a statement (here: while it waits behind a
     * row lock, terminated by the server). The failed call must be retried, not dropped: dropped, its messages
     * would stay running until their two-minute leases expired and then run a second time.
     */
    @Test
    void anAcknowledgementCallThatFailsIsRetriedInsteadOfDropped() throws Exception {
        int messages = 2_000;
        try (LockedAcknowledgements run = new LockedAcknowledgements("cutack", messages)) {
            try (Subscription subscription = run.subscribe()) {
                try {
                    run.awaitLocked();
                    AtomicReference<Integer> blocked = new AtomicReference<>();
                    await().atMost(Duration.ofSeconds(30)).until(() -> {
                        blocked.set(completionWaitingOnALock(run.schema));
                        return blocked.get() != null;
                    });
                    PostgresTestServer.execute("SELECT pg_terminate_backend(" + blocked.get() + ")");
                } finally {
                    run.releaseLock();
                }
                // Well inside the two-minute lease: only a retried acknowledgement can have completed these.
                await().atMost(Duration.ofSeconds(30)).until(() -> run.handled.size() == messages);
                await().atMost(Duration.ofSeconds(30)).until(() -> run.ns.stats().pending() == 0 && run.ns.stats().running() == 0);
                assertThat(run.ns.stats().completed()).isEqualTo(messages);
                assertThat(subscription.isRunning()).isTrue();
            }
            assertThat(run.twice).isEmpty();
        }
    }

    /**
     * A queue on a schema of its own with {@code messages} published, whose subscriber's first handler locks its
     * own message's row in a transaction left open, so the statement completing it waits until
     * {@link #releaseLock()}. Counts what the handlers saw, and what they saw twice.
     */
    private static final class LockedAcknowledgements implements AutoCloseable {

        final String schema;
        final Namespace ns;
        final Set<Long> handled = ConcurrentHashMap.newKeySet();
        final Set<Long> twice = ConcurrentHashMap.newKeySet();
        private final PostgresQueue queue;
        private final AtomicReference<Connection> rowLock = new AtomicReference<>();
        private final CountDownLatch locked = new CountDownLatch(1);

        LockedAcknowledgements(String name, int messages) {
            schema = PostgresTestServer.freshSchema(name);
            QueueOptions options = QueueOptions.defaults().scheduleTickInterval(Duration.ZERO);
            PostgresQueueConfig config = PostgresQueueConfig.defaults().schema(schema).queueOptions(options).poolSize(4);
            queue = PostgresQueue.connect(PostgresTestServer.jdbcUrl(), null, null, config);
            ns = queue.namespace(name);
            List<Message> batch = new ArrayList<>();
            for (int i = 0; i < messages; i++) {
                batch.add(Message.to("t").json("{\"i\":" + i + "}"));
                if (batch.size() == 500) {
                    ns.publishAll(batch);
                    batch.clear();
                }
            }
        }

        Subscription subscribe() {
            return ns.subscribe(Subscriber.on("t").concurrency(CONCURRENCY).lease(Duration.ofMinutes(2))
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
                    }));
        }

        void awaitLocked() throws InterruptedException {
            assertThat(locked.await(30, TimeUnit.SECONDS)).isTrue();
        }

        /** Call it also when an assertion failed: closing the subscription flushes, which would wait on the lock. */
        void releaseLock() throws SQLException {
            if (rowLock.get() != null) {
                rowLock.get().rollback();
            }
        }

        @Override
        public void close() throws SQLException {
            try {
                queue.close();
            } finally {
                Connection connection = rowLock.get();
                if (connection != null) {
                    connection.close();
                }
                PostgresTestServer.dropSchema(schema);
            }
        }
    }

    /** The server process of a statement completing messages of the schema while it waits for a lock, or null. */
    private static Integer completionWaitingOnALock(String schema) {
        try (Connection connection = PostgresTestServer.dataSource().getConnection();
             PreparedStatement statement = connection.prepareStatement(
                     "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE ? LIMIT 1")) {
            statement.setString(1, "%\"" + schema + "\"._engine_complete(%");
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
