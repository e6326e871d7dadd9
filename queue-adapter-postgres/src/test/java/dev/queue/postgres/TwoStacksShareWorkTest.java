package dev.queue.postgres;

import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.Namespace;
import dev.queue.api.NamespaceStats;
import dev.queue.api.PublishResult;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two replicas: two queues over the same schema, each with its own pool, listener and subscriber, share 20,000
 * messages. No message is handled by two handlers while its lease is held, none is handled twice at all (the
 * leases outlast the test), and none is lost.
 */
class TwoStacksShareWorkTest {

    private static final int MESSAGES = 20_000;

    @Test
    void twoIndependentSubscriberStacksShareTwentyThousandMessagesWithoutDoubleHandlingOrLoss() {
        String schema = PostgresTestServer.freshSchema("stacks");
        PostgresQueueConfig config = PostgresQueueConfig.defaults().schema(schema).poolSize(8)
                .queueOptions(QueueOptions.defaults().sweepInterval(Duration.ofMillis(200)));
        HandledOnce seen = new HandledOnce();
        Map<String, AtomicInteger> byReplica = new ConcurrentHashMap<>();

        try (PostgresQueue first = PostgresQueue.connect(PostgresTestServer.jdbcUrl(), null, null, config);
             PostgresQueue second = PostgresQueue.connect(PostgresTestServer.jdbcUrl(), null, null, config)) {
            List<Subscription> subscriptions = new ArrayList<>();
            for (PostgresQueue replica : List.of(first, second)) {
                String name = replica == first ? "replica-1" : "replica-2";
                subscriptions.add(replica.defaultNamespace().subscribe(Subscriber.on("work").concurrency(8)
                        .lease(Duration.ofMinutes(5)).worker(name)
                        .handleDelivery((delivery, ctx) -> {
                            seen.record(delivery, name);
                            byReplica.computeIfAbsent(name, n -> new AtomicInteger()).incrementAndGet();
                        })));
            }

            // publish through both replicas while both consume
            Namespace publisherA = first.defaultNamespace();
            Namespace publisherB = second.defaultNamespace();
            List<MessageId> published = new ArrayList<>(MESSAGES);
            for (int start = 0; start < MESSAGES; start += 1000) {
                List<Message> batch = new ArrayList<>(1000);
                for (int i = start; i < start + 1000; i++) {
                    batch.add(Message.to("work").json("{\"i\":" + i + "}"));
                }
                for (PublishResult result : ((start / 1000) % 2 == 0 ? publisherA : publisherB).publishAll(batch)) {
                    published.add(result.id());
                }
            }

            await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(100))
                    .until(() -> seen.total.get() >= MESSAGES || !seen.violations.isEmpty());
            subscriptions.forEach(Subscription::close);

            assertThat(seen.violations).isEmpty();
            assertThat(seen.handled.keySet()).containsExactlyInAnyOrderElementsOf(published);
            assertThat(seen.handled.values()).allSatisfy(count -> assertThat(count).hasValue(1));
            assertThat(byReplica.keySet()).as("both replicas took part").containsExactlyInAnyOrder("replica-1", "replica-2");
            NamespaceStats stats = first.defaultNamespace().stats();
            assertThat(stats.pending()).isZero();
            assertThat(stats.running()).isZero();
            assertThat(stats.completed()).isEqualTo(MESSAGES);
            assertThat(stats.dead()).isZero();
        } finally {
            PostgresTestServer.dropSchema(schema);
        }
    }
}
