package dev.queue.postgres;

import dev.queue.api.Message;
import dev.queue.api.Namespace;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import dev.queue.api.TopicStats;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An application process is killed (SIGKILL: no shutdown hook, no close, no last acknowledgement) in the middle
 * of its work, and another process carries on. The messages the dead process held are running under leases
 * nobody extends any more; once those expire they run again elsewhere, with their attempt counted, and its
 * acknowledgements still waiting to be recorded are lost, so those messages run again too (at least once). In
 * the end every message is completed exactly once in the table's books and none is pending, running or dead.
 */
@Tag("slow")
class ProcessCrashTest {

    private static final String TOPIC = "invoice.send";
    private static final int MESSAGES = 3_000;
    /** After these, the worker's handlers hang until it is killed. */
    private static final int COMPLETED_BY_THE_WORKER = MESSAGES / 4;
    private static final Duration RECOVERY = Duration.ofSeconds(60);

    @Test
    void messagesHeldByAKilledProcessRunAgainElsewhereAndNoneIsLost() throws Exception {
        String schema = PostgresTestServer.freshSchema("proccrash");
        PostgresQueueConfig config = PostgresQueueConfig.defaults().schema(schema).poolSize(4)
                .queueOptions(QueueOptions.defaults().sweepInterval(Duration.ofMillis(500)));
        Set<Long> handledByChild = ConcurrentHashMap.newKeySet();
        Map<Long, Integer> handledHereAttempt = new ConcurrentHashMap<>();
        List<String> childOutput = new java.util.concurrent.CopyOnWriteArrayList<>();
        Process child = null;
        try (PostgresQueue queue = PostgresQueue.connect(PostgresTestServer.jdbcUrl(), null, null, config)) {
            Namespace ns = queue.defaultNamespace();
            Set<Long> published = new HashSet<>();
            List<Message> batch = new ArrayList<>();
            for (int i = 0; i < MESSAGES; i++) {
                batch.add(Message.to(TOPIC).json("{\"invoice\":" + i + "}"));
                if (batch.size() == 500) {
                    ns.publishAll(batch).forEach(r -> published.add(r.id().value()));
                    batch.clear();
                }
            }
            assertThat(published).hasSize(MESSAGES);

            child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", System.getProperty("java.class.path"), CrashingWorker.class.getName(),
                    PostgresTestServer.jdbcUrl(), schema, TOPIC, String.valueOf(COMPLETED_BY_THE_WORKER))
                    .redirectErrorStream(true).start();
            Process running = child;
            Thread reader = new Thread(() -> readChild(running, handledByChild, childOutput), "crash-test-child-output");
            reader.setDaemon(true);
            reader.start();
            await().atMost(RECOVERY).until(() -> {
                if (!running.isAlive()) {
                    throw new AssertionError("the worker process exited before it was killed: " + childOutput);
                }
                return handledByChild.size() >= COMPLETED_BY_THE_WORKER;
            });

            child.destroyForcibly();
            assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
            reader.join(TimeUnit.SECONDS.toMillis(10));
            // What the dead process held when it died: claimed, possibly started, never settled.
            List<Long> runningAtKill = StoreFixture.firstColumn(PostgresTestServer.dataSource(),
                    "SELECT id FROM \"" + schema + "\".messages WHERE state = 'running'").stream().map(id -> ((Number) id).longValue()).toList();
            assertThat(runningAtKill).as("messages the killed process held").isNotEmpty();

            AtomicInteger handledHere = new AtomicInteger();
            try (Subscription subscription = ns.subscribe(Subscriber.on(TOPIC).concurrency(8).lease(Duration.ofSeconds(5))
                    .handleDelivery((delivery, ctx) -> {
                        handledHereAttempt.merge(delivery.id().value(), delivery.attempt(), Math::max);
                        handledHere.incrementAndGet();
                    }))) {
                await().atMost(RECOVERY).until(() -> {
                    TopicStats stats = ns.stats().topic(TOPIC);
                    return stats.pending() == 0 && stats.running() == 0;
                });
                assertThat(subscription.isRunning()).isTrue();
            }

            Set<Long> handledAnywhere = new HashSet<>(handledByChild);
            handledAnywhere.addAll(handledHereAttempt.keySet());
            List<Long> neverHandled = published.stream().filter(id -> !handledAnywhere.contains(id)).sorted().limit(20).toList();
            assertThat(neverHandled)
                    .as("published but never handled (the first 20); topic stats %s; dead letters among them %s; the worker's other output %s",
                            ns.stats().topic(TOPIC), neverHandled.isEmpty() ? List.of() : StoreFixture.firstColumn(PostgresTestServer.dataSource(),
                                    "SELECT id FROM \"" + schema + "\".dead_letters WHERE id IN (" + neverHandled.stream().map(String::valueOf)
                                            .collect(java.util.stream.Collectors.joining(",")) + ")"), childOutput)
                    .isEmpty();
            for (long held : runningAtKill) {
                assertThat(handledHereAttempt.get(held)).as("attempt of message %d here, held by the killed process", held)
                        .isNotNull().isGreaterThanOrEqualTo(2);
            }
            TopicStats stats = ns.stats().topic(TOPIC);
            assertThat(stats.completed()).isEqualTo(MESSAGES);
            assertThat(stats.dead()).isZero();
            assertThat(handledByChild.size() + handledHere.get()).isGreaterThanOrEqualTo(MESSAGES);
        } finally {
            if (child != null) {
                child.destroyForcibly();
            }
            PostgresTestServer.dropSchema(schema);
        }
    }

    /** Reads what the worker prints: its handled messages into {@code handled}, everything else into {@code other}. */
    private static void readChild(Process child, Set<Long> handled, List<String> other) {
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                if (line.startsWith("handled ")) {
                    handled.add(Long.parseLong(line.substring("handled ".length())));
                } else if (other.size() < 200) {
                    other.add(line);
                }
            }
        } catch (java.io.IOException e) {
            // the process was killed; what it printed before is in the set
        }
    }
}
