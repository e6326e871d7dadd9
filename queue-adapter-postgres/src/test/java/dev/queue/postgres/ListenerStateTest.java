package dev.queue.postgres;

import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** {@link PostgresQueue#listenerState()} follows the listener through its life, as health checks read it. */
class ListenerStateTest {

    private final List<String> schemas = new ArrayList<>();

    @AfterEach
    void dropSchemas() {
        schemas.forEach(PostgresTestServer::dropSchema);
    }

    @Test
    void theListenerStartsWithTheFirstSubscriptionAndEndsWithTheQueue() {
        PostgresQueue queue = PostgresQueue.create(PostgresTestServer.dataSource(), config());
        try {
            assertThat(queue.listenerState()).isEqualTo(ListenerState.NOT_STARTED);

            Subscription subscription = queue.defaultNamespace()
                    .subscribe(Subscriber.on("state.topic").handle(String.class, (payload, context) -> { }));
            await().atMost(Duration.ofSeconds(20)).until(() -> queue.listenerState() == ListenerState.LISTENING);
            subscription.close();
        } finally {
            queue.close();
        }
        assertThat(queue.listenerState()).isEqualTo(ListenerState.CLOSED);
        assertThat(queue.isOpen()).isFalse();
    }

    @Test
    void aQueueThatDoesNotListenSaysSo() {
        try (PostgresQueue queue = PostgresQueue.create(PostgresTestServer.dataSource(), config().listen(false))) {
            queue.defaultNamespace().subscribe(Subscriber.on("state.topic").handle(String.class, (payload, context) -> { }));
            assertThat(queue.listenerState()).isEqualTo(ListenerState.OFF);
            assertThat(queue.isOpen()).isTrue();
        }
    }

    private PostgresQueueConfig config() {
        String schema = PostgresTestServer.freshSchema("listener_state");
        schemas.add(schema);
        return PostgresQueueConfig.defaults().schema(schema);
    }
}
