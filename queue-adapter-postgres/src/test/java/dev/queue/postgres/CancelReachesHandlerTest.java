package dev.queue.postgres;

import dev.queue.api.MessageId;
import dev.queue.api.MessageState;
import dev.queue.api.Message;
import dev.queue.api.Subscriber;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A cancel made through one queue reaches the handler running in another at once, through the wake-up channel
 * (migration 19), not at the handler's next lease extension, which with a two-minute lease comes a minute later. A
 * forged notice only makes the worker check its lease.
 */
class CancelReachesHandlerTest {

    @Test
    void aCancelInOneProcessTellsTheHandlerRunningInAnotherWithinSeconds() throws Exception {
        String schema = PostgresTestServer.freshSchema("cancelnotify");
        PostgresQueueConfig config = PostgresQueueConfig.defaults().schema(schema).poolSize(2);
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch stopped = new CountDownLatch(1);
        AtomicBoolean sawCancel = new AtomicBoolean();
        try (PostgresQueue worker = PostgresQueue.connect(PostgresTestServer.jdbcUrl(), null, null, config);
             PostgresQueue operator = PostgresQueue.connect(PostgresTestServer.jdbcUrl(), null, null, config)) {
            worker.defaultNamespace().subscribe(Subscriber.on("long").lease(Duration.ofMinutes(2))
                    .handleDelivery((delivery, ctx) -> {
                        started.countDown();
                        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(50);
                        while (!ctx.isCancelled() && System.nanoTime() < giveUp) {
                            Thread.sleep(10);
                        }
                        sawCancel.set(ctx.isCancelled());
                        stopped.countDown();
                    }));
            MessageId id = operator.defaultNamespace().publish(Message.to("long").json("{}")).id();
            assertThat(started.await(30, TimeUnit.SECONDS)).as("the handler started").isTrue();

            // a forged notice (anyone who may LISTEN may NOTIFY) only makes the worker check its lease: it holds
            Instant leaseBefore = leaseUntil(schema, id);
            PostgresTestServer.execute("SELECT pg_notify('" + schema + "_wakeup', 'cancel:default/" + id.value() + "')");
            await().atMost(Duration.ofSeconds(10)).until(() -> leaseUntil(schema, id).isAfter(leaseBefore));
            assertThat(stopped.getCount()).as("the handler still runs").isEqualTo(1);

            assertThat(operator.defaultNamespace().flowControl().cancel(id)).contains(MessageState.RUNNING);

            assertThat(stopped.await(10, TimeUnit.SECONDS)).as("the handler stopped within 10 s of the cancel").isTrue();
            assertThat(sawCancel).isTrue();
        }
    }

    private static Instant leaseUntil(String schema, MessageId id) throws SQLException {
        try (Connection connection = PostgresTestServer.dataSource().getConnection();
             Statement statement = connection.createStatement();
             ResultSet row = statement.executeQuery("SELECT lease_until FROM \"" + schema + "\".messages WHERE id = " + id.value())) {
            assertThat(row.next()).as("message %s is in the hot table", id).isTrue();
            return row.getTimestamp(1).toInstant();
        }
    }
}
