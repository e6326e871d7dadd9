package dev.queue.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.queue.api.Backoff;
import dev.queue.api.Namespace;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import dev.queue.api.TopicStats;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A primary with a synchronous streaming standby: publishers and a subscriber on a multi-host URL
 * ({@code targetServerType=primary}) keep going while the primary stops as in a crash ({@code -m immediate}) and
 * the standby is promoted. Nothing in the application is restarted. With synchronous replication every publish
 * that returned was on the standby before it returned, so nothing published is lost; claims and
 * acknowledgements (which do not wait for their flush by default) may be undone, so some messages run twice.
 * Prints the time from the stop to the first publish that returned on the promoted server, and the duplicates.
 */
@Tag("slow")
class FailoverTest {

    private static final String TOPIC = "order.paid";
    private static final Duration RECOVERY = Duration.ofSeconds(90);

    @Test
    void publishersAndSubscribersFollowAPromotedStandbyAndLoseNothing() throws Exception {
        LocalPostgresCluster.assumeAvailable();
        MessageLedger ledger = new MessageLedger();
        try (LocalPostgresCluster primary = LocalPostgresCluster.startNew();
             LocalPostgresCluster standby = LocalPostgresCluster.builder().standbyOf(primary).start()) {
            primary.requireSynchronousStandby();
            await().atMost(RECOVERY).until(() -> synchronousStandbys(primary) == 1);
            assertThat(standby.inRecovery()).isTrue();

            HikariConfig hikari = new HikariConfig();
            // hostRecheckSeconds: the driver remembers which host was the standby; re-asking soon finds it promoted
            hikari.setJdbcUrl(LocalPostgresCluster.multiHostUrl(List.of(primary, standby), "postgres")
                    + "&hostRecheckSeconds=1&connectTimeout=2");
            hikari.setMaximumPoolSize(8);
            hikari.setPoolName("failover");
            hikari.setConnectionTimeout(1_000);
            try (HikariDataSource pool = new HikariDataSource(hikari);
                 PostgresQueue queue = PostgresQueue.create(pool, PostgresQueueConfig.defaults().schema("failover")
                         .queueOptions(QueueOptions.defaults().sweepInterval(Duration.ofMillis(500))))) {
                Namespace ns = queue.defaultNamespace();
                Subscription subscription = ns.subscribe(Subscriber.on(TOPIC).concurrency(4)
                        .lease(Duration.ofSeconds(3)).retry(Backoff.fixed(Duration.ofMillis(100)))
                        .handleDelivery((delivery, ctx) -> {
                            ledger.handled(delivery.id());
                            Thread.sleep(2);
                        }));
                try {
                    ledger.produce(ns, TOPIC, 2);
                    ledger.produce(ns, TOPIC, 2);
                    await().atMost(RECOVERY).until(() -> ledger.handled() >= 300);

                    long stopped = System.nanoTime();
                    primary.stopImmediately();
                    standby.promote();
                    await().atMost(RECOVERY).until(() -> ledger.lastPublishNanos() > stopped);
                    long resumeMillis = (ledger.lastPublishNanos() - stopped) / 1_000_000;
                    int publishedAtResume = ledger.published();
                    assertThat(standby.inRecovery()).isFalse();

                    await().atMost(RECOVERY).until(() -> ledger.published() >= publishedAtResume + 300);
                    ledger.stopProducing();
                    await().atMost(RECOVERY).until(() -> ledger.lost() == 0);
                    await().atMost(RECOVERY).until(() -> {
                        TopicStats stats = ns.stats().topic(TOPIC);
                        return stats.pending() == 0 && stats.running() == 0;
                    });
                    System.out.printf("Failover: writes resumed %d ms after the stop; published %d, handled %d, "
                                    + "lost %d, duplicates %d, failed publishes %d%n", resumeMillis, ledger.published(),
                            ledger.handled(), ledger.lost(), ledger.duplicates(), ledger.publishFailures());
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

    private static int synchronousStandbys(LocalPostgresCluster primary) throws Exception {
        try (Connection connection = DriverManager.getConnection(primary.jdbcUrl());
             Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery(
                     "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync' AND state = 'streaming'")) {
            rows.next();
            return rows.getInt(1);
        }
    }
}
