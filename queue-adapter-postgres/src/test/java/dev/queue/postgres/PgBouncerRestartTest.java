package dev.queue.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.queue.api.Backoff;
import dev.queue.api.Namespace;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import dev.queue.api.TopicStats;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * PgBouncer (transaction mode, no direct URL) is killed while a producer publishes and a subscriber works, and
 * started again on the same port: every client connection breaks at once, as when the pooler's host restarts it.
 * Nothing in the application is restarted. Every publish that returned is handled; duplicates are allowed (a
 * claim or acknowledgement cut off mid-flight) and printed.
 */
@Tag("slow")
class PgBouncerRestartTest {

    private static final String TOPIC = "order.paid";
    private static final Duration RECOVERY = Duration.ofSeconds(90);

    @Test
    void aSubscriberKeepsHandlingThroughAPgBouncerRestartAndLosesNothing() throws Exception {
        LocalPostgresCluster.assumeAvailable();
        LocalPgBouncer.assumeAvailable();
        MessageLedger ledger = new MessageLedger();
        try (LocalPostgresCluster server = LocalPostgresCluster.startNew();
             LocalPgBouncer bouncer = LocalPgBouncer.startInFrontOf(server, 10);
             HikariDataSource pool = PgBouncerQueueFactory.poolThrough(bouncer, "bouncer-restart", 8)) {
            pool.setConnectionTimeout(1_000);
            PostgresQueueConfig config = PostgresQueueConfig.defaults().schema("restart")
                    .queueOptions(QueueOptions.defaults().sweepInterval(Duration.ofMillis(500)));
            try (PostgresQueue queue = PostgresQueue.create(pool, pool, config)) {
                Namespace ns = queue.defaultNamespace();
                Subscription subscription = ns.subscribe(Subscriber.on(TOPIC).concurrency(4)
                        .lease(Duration.ofSeconds(3)).retry(Backoff.fixed(Duration.ofMillis(100)))
                        .handleDelivery((delivery, ctx) -> {
                            ledger.handled(delivery.id());
                            Thread.sleep(2);
                        }));
                ledger.produce(ns, TOPIC, 2);
                await().atMost(RECOVERY).until(() -> ledger.handled() >= 300);

                bouncer.kill();
                await().atMost(RECOVERY).until(() -> ledger.publishFailures() >= 2);
                int publishedAtRestart = ledger.published();
                bouncer.start();

                await().atMost(RECOVERY).until(() -> ledger.published() >= publishedAtRestart + 300);
                ledger.stopProducing();
                await().atMost(RECOVERY).until(() -> ledger.lost() == 0);
                await().atMost(RECOVERY).until(() -> {
                    TopicStats stats = ns.stats().topic(TOPIC);
                    return stats.pending() == 0 && stats.running() == 0;
                });
                System.out.printf("PgBouncer restart: published %d, handled %d, lost %d, duplicates %d, "
                                + "failed publishes %d%n", ledger.published(), ledger.handled(), ledger.lost(),
                        ledger.duplicates(), ledger.publishFailures());
                assertThat(ledger.lost()).isZero();
                assertThat(ns.stats().topic(TOPIC).dead()).isZero();
                assertThat(ledger.unexpected()).isEmpty();
                assertThat(subscription.isRunning()).isTrue();
                subscription.close(Duration.ofSeconds(10));
            } finally {
                ledger.stopProducing();
            }
        }
    }
}
