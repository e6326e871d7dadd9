package dev.queue.postgres;

import dev.queue.api.Message;
import dev.queue.api.Namespace;
import dev.queue.api.PublishResult;
import dev.queue.api.Pull;
import dev.queue.api.QueueClosedException;
import dev.queue.api.QueueOptions;
import dev.queue.api.StoreUnavailableException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Closing a queue while publishers and consumers are busy: calls already running finish before the pool closes,
 * later ones are refused with {@link QueueClosedException} before they touch the database, so a publisher knows
 * exactly which of its publishes were stored.
 */
class CloseUnderLoadTest {

    private static final int PUBLISHERS = 4;
    private static final int CONSUMERS = 2;
    private static final int BATCH = 500;

    private final List<String> schemas = new ArrayList<>();

    @AfterEach
    void dropSchemas() {
        schemas.forEach(PostgresTestServer::dropSchema);
    }

    @Test
    void callsInFlightFinishAndLaterOnesAreRefusedSoStoredRowsMatchReturnedPublishes() throws Exception {
        String schema = PostgresTestServer.freshSchema("close");
        schemas.add(schema);
        PostgresQueue queue = PostgresQueue.connect(PostgresTestServer.jdbcUrl(), null, null, PostgresQueueConfig.defaults()
                .schema(schema).poolSize(8).completedRetention(CompletedRetention.ARCHIVE)
                .queueOptions(QueueOptions.defaults().closeTimeout(Duration.ofSeconds(20))));
        Namespace ns = queue.defaultNamespace();
        Set<Long> returned = ConcurrentHashMap.newKeySet();
        AtomicInteger batches = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        List<Throwable> unexpected = new CopyOnWriteArrayList<>();
        ExecutorService threads = Executors.newFixedThreadPool(PUBLISHERS + CONSUMERS);
        List<Future<?>> running = new ArrayList<>();
        for (int p = 0; p < PUBLISHERS; p++) {
            int publisher = p;
            AtomicInteger batch = new AtomicInteger();
            running.add(threads.submit(() -> untilClosed(refused, unexpected, () -> {
                List<Message> messages = new ArrayList<>(BATCH);
                for (int i = 0; i < BATCH; i++) {
                    messages.add(Message.to("t").json("{\"p\":" + publisher + ",\"b\":" + batch.get() + ",\"i\":" + i + "}"));
                }
                for (PublishResult result : ns.publishAll(messages)) {
                    returned.add(result.id().value());
                }
                batch.incrementAndGet();
                batches.incrementAndGet();
            })));
        }
        for (int c = 0; c < CONSUMERS; c++) {
            running.add(threads.submit(() -> untilClosed(refused, unexpected,
                    () -> ns.ackAll(ns.pull(Pull.from("t").worker("consumer").limit(100))))));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> batches.get() >= 2 * PUBLISHERS || !unexpected.isEmpty());

        queue.close();

        for (Future<?> thread : running) {
            thread.get(30, TimeUnit.SECONDS);
        }
        threads.shutdown();
        assertThat(unexpected).as("failures other than QueueClosedException").isEmpty();
        assertThat(refused.get()).as("threads that met the closed queue").isEqualTo(PUBLISHERS + CONSUMERS);
        Set<Long> stored = new HashSet<>();
        for (Object id : StoreFixture.firstColumn(PostgresTestServer.dataSource(), "SELECT id FROM \"" + schema
                + "\".messages UNION ALL SELECT id FROM \"" + schema + "\".completed_messages")) {
            stored.add(((Number) id).longValue());
        }
        assertThat(returned).hasSize(batches.get() * BATCH);
        assertThat(stored).as("rows stored against the publishes that returned").isEqualTo(returned);
    }

    @Test
    void aCallStillRunningWhenTheCloseStopsWaitingFailsSayingTheQueueClosed() throws Exception {
        String schema = PostgresTestServer.freshSchema("close");
        schemas.add(schema);
        PostgresQueue queue = PostgresQueue.connect(PostgresTestServer.jdbcUrl(), null, null, PostgresQueueConfig.defaults()
                .schema(schema).poolSize(2).queueOptions(QueueOptions.defaults().closeTimeout(Duration.ofMillis(200))));
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try (Connection holder = PostgresTestServer.dataSource().getConnection()) {
            // An uncommitted publish holds the unique key, so a second publish of it waits for this transaction.
            holder.setAutoCommit(false);
            queue.defaultNamespace().publish(holder, Message.to("t").uniqueKey("k"));
            Future<PublishResult> blocked = thread.submit(() -> queue.defaultNamespace().publish(Message.to("t").uniqueKey("k")));
            await().atMost(Duration.ofSeconds(10)).until(() -> waitingOnALock(schema));

            queue.close();

            assertThatThrownBy(() -> blocked.get(20, TimeUnit.SECONDS)).cause()
                    .isInstanceOf(QueueClosedException.class).hasMessageContaining("unknown")
                    .hasCauseInstanceOf(StoreUnavailableException.class);
            holder.rollback();
        } finally {
            thread.shutdownNow();
        }
    }

    /** Repeats a step until the queue refuses it as closed (counted), or it fails otherwise (kept). */
    private static void untilClosed(AtomicInteger refused, List<Throwable> unexpected, Runnable step) {
        while (true) {
            try {
                step.run();
            } catch (QueueClosedException e) {
                refused.incrementAndGet();
                return;
            } catch (RuntimeException e) {
                unexpected.add(e);
                return;
            }
        }
    }

    private static boolean waitingOnALock(String schema) {
        return !StoreFixture.firstColumn(PostgresTestServer.dataSource(), "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                + " AND query LIKE '%" + schema + "%'").isEmpty();
    }
}
