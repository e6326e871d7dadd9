package dev.queue.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.queue.api.Namespace;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Behind PgBouncer in transaction mode with no direct URL, LISTEN delivers nothing; the wake marks still bring a
 * publish to a subscriber long before its full poll. The sweep interval here is a minute, so a message handled within
 * seconds was found through a changed mark, and with the marks off it waits for the poll.
 */
@Tag("slow")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PgBouncerWakeMarksTest {

    private static final Duration SWEEP = Duration.ofMinutes(1);

    private LocalPostgresCluster server;
    private LocalPgBouncer bouncer;
    private HikariDataSource pool;

    @BeforeAll
    void start() {
        LocalPostgresCluster.assumeAvailable();
        LocalPgBouncer.assumeAvailable();
        server = LocalPostgresCluster.startNew();
        bouncer = LocalPgBouncer.startInFrontOf(server, 10);
        pool = PgBouncerQueueFactory.poolThrough(bouncer, "bouncer-marks", 8);
    }

    @AfterAll
    void stop() {
        if (pool != null) {
            pool.close();
        }
        if (bouncer != null) {
            bouncer.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @Test
    void aPublishWakesAPollingSubscriberThroughItsNamespacesMark() {
        PostgresQueueConfig config = PostgresQueueConfig.defaults().schema("marks_on")
                .queueOptions(QueueOptions.defaults().sweepInterval(SWEEP));
        assertThat(config.markPollInterval()).isEqualTo(PostgresQueueConfig.DEFAULT_MARK_POLL_INTERVAL);
        try (PostgresQueue queue = PostgresQueue.create(pool, pool, config)) {
            Namespace ns = queue.namespace("acme");
            AtomicInteger handled = new AtomicInteger();
            Subscription subscription = ns.subscribe(Subscriber.on("email")
                    .handleDelivery((delivery, ctx) -> handled.incrementAndGet()));
            await().atMost(Duration.ofSeconds(10)).until(() -> queue.listenerState() == ListenerState.POLLING);
            // the subscriber's first claims (at start, and the poll's first round) are over
            await().pollDelay(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5)).until(() -> true);

            for (int i = 1; i <= 3; i++) {
                ns.publish("email", "{}");
                int expected = i;
                await().atMost(Duration.ofSeconds(10)).until(() -> handled.get() == expected);
            }
            // another namespace's publish changes only that namespace's mark
            queue.namespace("globex").publish("email", "{}");
            assertThat(StoreFixture.firstColumn(pool,
                    "SELECT count(DISTINCT namespace)::int FROM marks_on.wake_marks")).containsExactly(2);
            subscription.close(Duration.ofSeconds(5));
        }
    }

    @Test
    void withTheMarksOffAPublishWaitsForTheFullPoll() throws Exception {
        PostgresQueueConfig config = PostgresQueueConfig.defaults().schema("marks_off")
                .markPollInterval(Duration.ZERO)
                .queueOptions(QueueOptions.defaults().sweepInterval(SWEEP));
        try (PostgresQueue queue = PostgresQueue.create(pool, pool, config)) {
            Namespace ns = queue.namespace("acme");
            AtomicInteger handled = new AtomicInteger();
            Subscription subscription = ns.subscribe(Subscriber.on("email")
                    .handleDelivery((delivery, ctx) -> handled.incrementAndGet()));
            await().atMost(Duration.ofSeconds(10)).until(() -> queue.listenerState() == ListenerState.POLLING);
            Thread.sleep(300);
            ns.publish("email", "{}");
            Thread.sleep(2_000);
            assertThat(handled.get()).as("handled before the full poll, with the marks off").isZero();
            subscription.close(Duration.ofSeconds(5));
        }
    }
}
