package dev.queue.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.queue.api.Backoff;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.Namespace;
import dev.queue.api.Page;
import dev.queue.api.QueueOptions;
import dev.queue.api.StoreUnavailableException;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import dev.queue.api.TopicStats;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The database server crashes while a producer publishes and a subscriber works, and comes back on the same data
 * directory and port. The crash is PostgreSQL's immediate shutdown (every backend killed at once, no checkpoint,
 * recovery from the WAL at the next start), on a server of its own with durable commits as in production
 * (fsync and synchronous_commit on). Nothing in the application is restarted: the pool, the listener and the
 * dispatcher must find the new server themselves.
 * <p>
 * What the guarantees promise (docs/guarantees.md): every publish that returned survives the crash and is
 * handled; a publish that could not reach the server fails with a {@link StoreUnavailableException}; claims and
 * acknowledgements the crash undid make their messages run again (at least once), and in the end no message is
 * left pending, running or dead. The machine itself does not crash, so what PostgreSQL had written to the
 * operating system survives either way: this test shows the recovery of the application, not that publishes
 * wait for the flush (BookkeepingCommitTest reads the commit mode of each statement for that).
 */
@Tag("slow")
class ServerCrashTest {

    private static final String TOPIC = "order.paid";
    private static final Duration RECOVERY = Duration.ofSeconds(90);

    @Test
    void aServerCrashMidRunLosesNoPublishedMessage(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        int port = freePort();
        EmbeddedPostgres server = start(data, port);
        HikariDataSource pool = null;
        PostgresQueue queue = null;
        Thread producer = null;
        AtomicBoolean producing = new AtomicBoolean(true);
        Set<MessageId> published = ConcurrentHashMap.newKeySet();
        AtomicInteger publishFailures = new AtomicInteger();
        List<Throwable> unexpectedFailures = new CopyOnWriteArrayList<>();
        Set<MessageId> handled = ConcurrentHashMap.newKeySet();
        try {
            String url = server.getJdbcUrl("postgres", "postgres");
            HikariConfig hikari = new HikariConfig();
            hikari.setJdbcUrl(url);
            hikari.setMaximumPoolSize(6);
            hikari.setPoolName("crash-test");
            // While the server is down a publish fails after this wait instead of Hikari's default 30 s.
            hikari.setConnectionTimeout(1_000);
            pool = new HikariDataSource(hikari);
            PostgresQueueConfig config = PostgresQueueConfig.defaults().schema("crash")
                    .queueOptions(QueueOptions.defaults().sweepInterval(Duration.ofMillis(500)));
            queue = PostgresQueue.create(pool, config);
            Namespace ns = queue.defaultNamespace();
            // A short lease: a message whose acknowledgement the crash undid is running again within seconds.
            Subscription subscription = ns.subscribe(Subscriber.on(TOPIC).concurrency(8).lease(Duration.ofSeconds(3))
                    .retry(Backoff.fixed(Duration.ofMillis(100)))
                    .handleDelivery((delivery, ctx) -> handled.add(delivery.id())));
            assertThat(subscription.isRunning()).isTrue();

            producer = new Thread(() -> {
                int i = 0;
                while (producing.get()) {
                    try {
                        published.add(ns.publish(Message.to(TOPIC).json("{\"order\":" + i++ + "}")).id());
                    } catch (StoreUnavailableException e) {
                        publishFailures.incrementAndGet();
                    } catch (RuntimeException e) {
                        unexpectedFailures.add(e);
                    }
                }
            }, "crash-test-producer");
            producer.start();
            await().atMost(RECOVERY).until(() -> handled.size() >= 300);

            long postmaster = postmasterPid(data);
            crash(postmaster);
            int publishedAtCrash = published.size();
            await().atMost(RECOVERY).until(() -> publishFailures.get() >= 3);
            server.close(); // the postmaster is gone: this only releases the data directory's lock
            server = start(data, port);

            await().atMost(RECOVERY).until(() -> published.size() >= publishedAtCrash + 300);
            producing.set(false);
            producer.join(TimeUnit.SECONDS.toMillis(30));
            assertThat(producer.isAlive()).isFalse();

            await().atMost(RECOVERY).untilAsserted(() -> assertThat(published.stream().filter(id -> !handled.contains(id)).limit(20))
                    .as("published before, during or after the crash but never handled (the first 20)").isEmpty());
            await().atMost(RECOVERY).until(() -> {
                TopicStats stats = ns.stats().topic(TOPIC);
                return stats.pending() == 0 && stats.running() == 0;
            });
            assertThat(ns.stats().topic(TOPIC).dead()).isZero();
            assertThat(ns.deadLetters().list(Page.first(10))).isEmpty();
            assertThat(unexpectedFailures).isEmpty();
            assertThat(publishFailures.get()).isPositive();
            assertThat(subscription.isRunning()).isTrue();
            subscription.close(Duration.ofSeconds(10));
        } finally {
            producing.set(false);
            if (producer != null) {
                producer.join(TimeUnit.SECONDS.toMillis(30));
            }
            if (queue != null) {
                queue.close();
            }
            if (pool != null) {
                pool.close();
            }
            server.close();
        }
    }

    /** A server of this test's own on {@code data}, created on the first start and recovered on the next. */
    private static EmbeddedPostgres start(Path data, int port) throws IOException {
        return EmbeddedPostgres.builder()
                .setDataDirectory(data)
                .setCleanDataDirectory(false)
                .setPort(port)
                .setServerConfig("fsync", "on")
                .setServerConfig("synchronous_commit", "on")
                .setServerConfig("max_connections", "50")
                .start();
    }

    private static long postmasterPid(Path data) throws IOException {
        // postmaster.pid: the first line is the postmaster's process id
        return Long.parseLong(Files.readAllLines(data.resolve("postmaster.pid")).get(0).strip());
    }

    /**
     * PostgreSQL's immediate shutdown, which its documentation describes as the equivalent of a crash: the
     * postmaster kills every backend at once and exits without a checkpoint, and the next start replays the WAL.
     */
    private static void crash(long postmasterPid) throws Exception {
        Process kill = new ProcessBuilder("kill", "-QUIT", Long.toString(postmasterPid)).inheritIO().start();
        assertThat(kill.waitFor()).as("kill -QUIT %d", postmasterPid).isZero();
        Optional<ProcessHandle> postmaster = ProcessHandle.of(postmasterPid);
        await().atMost(Duration.ofSeconds(30)).until(() -> postmaster.map(p -> !p.isAlive()).orElse(true));
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
