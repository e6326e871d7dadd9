package dev.queue.postgres;

import dev.queue.api.Message;
import dev.queue.api.Namespace;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Single-message publishes from many threads take the fast path, where the limiter holds most wake-ups back.
 * With a sweep of a minute, only the wake-ups (first of a window, or trailing after commit) can deliver them in
 * time: every message must still be handled promptly, none lost and none twice.
 */
class FastPublishWakeUpTest {

    @Test
    void heldBackWakeUpsAreCoveredByTrailingOnes() throws Exception {
        String schema = PostgresTestServer.freshSchema("fastwake");
        QueueOptions options = QueueOptions.defaults().sweepInterval(Duration.ofMinutes(1)).scheduleTickInterval(Duration.ZERO);
        PostgresQueueConfig config = PostgresQueueConfig.defaults().schema(schema).queueOptions(options).notifyWindow(Duration.ofMillis(20));
        try (PostgresQueue publisher = PostgresQueue.connect(PostgresTestServer.jdbcUrl(), null, null, config.poolSize(8));
             PostgresQueue consumer = PostgresQueue.connect(PostgresTestServer.jdbcUrl(), null, null, config.poolSize(4))) {
            Namespace out = publisher.namespace("fast");
            Set<Long> handled = ConcurrentHashMap.newKeySet();
            Set<Long> twice = ConcurrentHashMap.newKeySet();
            // A first publish registers the topic, so the rest take the fast path.
            out.publish(Message.to("t").json("{\"warm\":true}"));
            try (Subscription s = consumer.namespace("fast").subscribe(Subscriber.on("t").concurrency(8)
                    .handleDelivery((delivery, ctx) -> {
                        if (!handled.add(delivery.id().value())) {
                            twice.add(delivery.id().value());
                        }
                    }))) {
                await().atMost(Duration.ofSeconds(10)).until(() -> handled.size() == 1);
                ExecutorService producers = Executors.newFixedThreadPool(8);
                List<Future<?>> done = new ArrayList<>();
                for (int p = 0; p < 8; p++) {
                    int producer = p;
                    done.add(producers.submit(() -> {
                        for (int i = 0; i < 100; i++) {
                            out.publish(Message.to("t").json("{\"p\":" + producer + ",\"i\":" + i + "}"));
                        }
                    }));
                }
                for (Future<?> f : done) {
                    f.get(60, TimeUnit.SECONDS);
                }
                producers.shutdown();
                // Well under the one-minute sweep: only wake-ups can have delivered these.
                await().atMost(Duration.ofSeconds(15)).until(() -> handled.size() == 801);
            }
            assertThat(twice).isEmpty();
            assertThat(out.stats().pending()).isZero();
        } finally {
            PostgresTestServer.dropSchema(schema);
        }
    }
}
