package dev.queue.postgres;

import dev.queue.api.Backoff;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.Namespace;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A statement recording a handler's failure that fails itself (its backend killed) is tried again, as
 * acknowledgements are: the message runs again after its backoff, not after its lease, its attempt counted once.
 */
class SettleRetryTest {

    /** Far longer than the test waits: a message that waited for its lease would fail it. */
    private static final Duration LEASE = Duration.ofMinutes(2);

    private final List<String> schemas = new ArrayList<>();

    @AfterEach
    void dropSchemas() {
        schemas.forEach(PostgresTestServer::dropSchema);
    }

    @Test
    void aRetryStatementWhoseBackendIsKilledIsTriedAgainAndTheMessageRunsAfterItsBackoff() throws Exception {
        String schema = PostgresTestServer.freshSchema("settle");
        schemas.add(schema);
        List<Integer> attempts = new CopyOnWriteArrayList<>();
        CountDownLatch firstAttemptRunning = new CountDownLatch(1);
        CountDownLatch rowLocked = new CountDownLatch(1);
        try (PostgresQueue queue = PostgresQueue.connect(PostgresTestServer.jdbcUrl(), null, null, PostgresQueueConfig.defaults()
                .schema(schema).poolSize(4).queueOptions(QueueOptions.defaults().sweepInterval(Duration.ofMillis(200))));
             Connection locker = PostgresTestServer.dataSource().getConnection()) {
            Namespace ns = queue.defaultNamespace();
            ns.subscribe(Subscriber.on("t").lease(LEASE).retry(Backoff.fixed(Duration.ofSeconds(1))).handleDelivery((delivery, ctx) -> {
                attempts.add(ctx.attempt());
                if (ctx.attempt() == 1) {
                    firstAttemptRunning.countDown();
                    assertThat(rowLocked.await(10, TimeUnit.SECONDS)).isTrue();
                    throw new IllegalStateException("first attempt fails");
                }
            }));
            MessageId id = ns.publish(Message.to("t").maxAttempts(5)).id();
            assertThat(firstAttemptRunning.await(10, TimeUnit.SECONDS)).isTrue();

            // Hold the message's row, so the statement recording the failure waits on it; then kill that statement.
            locker.setAutoCommit(false);
            try (PreparedStatement lock = locker.prepareStatement("SELECT id FROM \"" + schema + "\".messages WHERE id = ? FOR UPDATE")) {
                lock.setLong(1, id.value());
                lock.executeQuery().close();
            }
            rowLocked.countDown();
            await().atMost(Duration.ofSeconds(10)).until(() -> !waitingBackends(schema).isEmpty());
            for (Object pid : waitingBackends(schema)) {
                PostgresTestServer.execute("SELECT pg_terminate_backend(" + pid + ")");
            }
            locker.rollback();

            await().atMost(Duration.ofSeconds(20)).until(() -> attempts.size() == 2 && ns.inspect(id).isEmpty());
            assertThat(attempts).containsExactly(1, 2);
        }
    }

    private static List<Object> waitingBackends(String schema) {
        return StoreFixture.firstColumn(PostgresTestServer.dataSource(), "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                + " AND query LIKE '%" + schema + "%' AND pid <> pg_backend_pid()");
    }
}
