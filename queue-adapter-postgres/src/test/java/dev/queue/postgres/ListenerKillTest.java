package dev.queue.postgres;

import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.Namespace;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The server kills the listener's backend while messages keep coming. The sweep interval is long (30 s), so
 * everything delivered within seconds was delivered by a wake-up or by the sweep the listener runs when it is
 * back: no message is lost, and messages published after the reconnection are handled promptly again.
 */
class ListenerKillTest {

    private static final Duration PROMPTLY = Duration.ofSeconds(5);

    @Test
    void killingTheListenersBackendLosesNoMessageAndWakeUpsRecover() throws Exception {
        String schema = PostgresTestServer.freshSchema("kill");
        PostgresQueueConfig config = PostgresQueueConfig.defaults().schema(schema).poolSize(4)
                .queueOptions(QueueOptions.defaults().sweepInterval(Duration.ofSeconds(30)));
        Map<MessageId, AtomicInteger> handled = new ConcurrentHashMap<>();
        ExecutorService publisher = Executors.newSingleThreadExecutor();
        try (PostgresQueue queue = PostgresQueue.connect(PostgresTestServer.jdbcUrl(), null, null, config);
             Subscription subscription = queue.defaultNamespace().subscribe(Subscriber.on("t").concurrency(4)
                     .handleDelivery((d, ctx) -> handled.computeIfAbsent(d.id(), id -> new AtomicInteger()).incrementAndGet()))) {
            assertThat(subscription.isRunning()).isTrue();
            Namespace ns = queue.defaultNamespace();
            String listener = "queue " + schema + " listener";

            MessageId before = ns.publish(Message.to("t").json("{\"phase\":\"before\"}")).id();
            await().atMost(PROMPTLY).until(() -> handled.containsKey(before));

            // a stream of messages across the kill and the reconnection
            Future<List<MessageId>> stream = publisher.submit(() -> {
                List<MessageId> ids = new ArrayList<>();
                for (int i = 0; i < 200; i++) {
                    ids.add(ns.publish(Message.to("t").json("{\"phase\":\"during\",\"i\":" + i + "}")).id());
                }
                return ids;
            });
            await().atMost(PROMPTLY).until(() -> listenerPids(listener).size() == 1);
            Object killedPid = listenerPids(listener).get(0);
            PostgresTestServer.execute("SELECT pg_terminate_backend(" + killedPid + ")");
            List<MessageId> during = stream.get(30, TimeUnit.SECONDS);
            await().atMost(PROMPTLY).until(() -> handled.keySet().containsAll(during));

            // Reconnected: a new listener session, and (the sweep being 30 s) the prompt deliveries below show it listens.
            await().atMost(PROMPTLY).until(() -> listenerPids(listener).size() == 1 && !listenerPids(listener).contains(killedPid));
            for (int i = 0; i < 3; i++) {
                MessageId after = ns.publish(Message.to("t").json("{\"phase\":\"after\"}")).id();
                await().atMost(PROMPTLY).until(() -> handled.containsKey(after));
            }

            assertThat(handled).hasSize(204);
            assertThat(handled.values()).allSatisfy(count -> assertThat(count).hasValue(1));
        } finally {
            publisher.shutdownNow();
            PostgresTestServer.dropSchema(schema);
        }
    }

    private static List<Object> listenerPids(String applicationName) {
        return StoreFixture.firstColumn(PostgresTestServer.dataSource(),
                "SELECT pid FROM pg_stat_activity WHERE application_name = '" + applicationName + "'");
    }
}
