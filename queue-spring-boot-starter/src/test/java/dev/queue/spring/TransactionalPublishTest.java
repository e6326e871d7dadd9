package dev.queue.spring;

import dev.queue.api.MessageId;
import dev.queue.api.TopicStats;
import dev.queue.spring.shop.OrderPaid;
import dev.queue.spring.shop.OrderPaidHandler;
import dev.queue.spring.shop.OrderService;
import dev.queue.spring.shop.ShopApplication;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.health.actuate.endpoint.IndicatedHealthDescriptor;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import java.time.Duration;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The starter in a whole Spring Boot application on a real PostgreSQL. The context closes after the class, while the
 * shared test server still runs: left to the JVM's exit, the server's shutdown hook could stop it first, and the
 * queue's close then waited for the pool's connection timeout.
 */
@SpringBootTest(classes = ShopApplication.class, properties = {
        "queue.sweep-interval=200ms",
        "queue.namespace=shop",
        "management.endpoint.health.show-details=always"})
@DirtiesContext
class TransactionalPublishTest {

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", EmbeddedPostgresServer::jdbcUrl);
        String schema = EmbeddedPostgresServer.freshSchema("spring_tx");
        registry.add("queue.schema", () -> schema);
    }

    @Autowired
    OrderService orders;
    @Autowired
    OrderPaidHandler handler;
    @Autowired
    QueueTemplate queue;
    @Autowired
    HealthEndpoint health;
    @Autowired
    MeterRegistry registry;

    @Test
    void aRolledBackTransactionLeavesNoMessage() {
        String orderId = "o-" + UUID.randomUUID();
        long before = unhandledTopic().total();

        assertThatThrownBy(() -> orders.payThenFail(orderId, 4200, OrderService.UNHANDLED_TOPIC))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining(orderId);

        assertThat(orders.orderExists(orderId)).as("the order row rolled back").isFalse();
        assertThat(unhandledTopic().total()).as("messages stored on the unhandled topic").isEqualTo(before);
    }

    @Test
    void aCommittedTransactionStoresItsMessageWithTheBusinessRow() {
        String orderId = "o-" + UUID.randomUUID();
        long before = unhandledTopic().pending();

        orders.pay(orderId, 4200, OrderService.UNHANDLED_TOPIC);

        assertThat(orders.orderExists(orderId)).isTrue();
        assertThat(unhandledTopic().pending()).isEqualTo(before + 1);
    }

    @Test
    void aCommittedMessageIsHandledByTheQueueHandlerBean() {
        String orderId = "o-" + UUID.randomUUID();

        orders.pay(orderId, 4200, "order.paid");

        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(handler.handled())
                .contains(new OrderPaidHandler.Handled(new OrderPaid(orderId, 4200), "order.paid", "shop", 1)));
    }

    /** The queue's meters land in the application's registry: what it published and handled, by outcome. */
    @Test
    void theQueuesMetricsAreInTheApplicationsRegistry() {
        String orderId = "o-" + UUID.randomUUID();
        double published = counted("queue.messages.published", Tags.of("namespace", "shop", "topic", "order.paid"));
        double acked = counted("queue.messages.handled", Tags.of("namespace", "shop", "topic", "order.paid", "outcome", "acked"));

        orders.pay(orderId, 4200, "order.paid");

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(counted("queue.messages.published", Tags.of("namespace", "shop", "topic", "order.paid")))
                    .isEqualTo(published + 1);
            assertThat(counted("queue.messages.handled", Tags.of("namespace", "shop", "topic", "order.paid", "outcome", "acked")))
                    .isEqualTo(acked + 1);
        });
    }

    private double counted(String name, Tags tags) {
        Counter counter = registry.find(name).tags(tags).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void outsideATransactionAPublishCommitsOnItsOwn() {
        long before = unhandledTopic().pending();

        MessageId id = queue.publish(OrderService.UNHANDLED_TOPIC, new OrderPaid("o-" + UUID.randomUUID(), 1));

        assertThat(queue.namespace().inspect(id)).isPresent();
        assertThat(unhandledTopic().pending()).isEqualTo(before + 1);
    }

    @Test
    void theHealthEndpointReportsStoreListenerAndSubscriptions() {
        // the listener connects with the first subscription, which the context started
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            IndicatedHealthDescriptor queueHealth = (IndicatedHealthDescriptor) health.healthForPath("queue");
            assertThat(queueHealth.getStatus()).isEqualTo(Status.UP);
            assertThat(queueHealth.getDetails())
                    .containsEntry("store", "reachable")
                    .containsEntry("listener", "listening")
                    .containsEntry("subscriptions", 2)
                    .containsEntry("subscriptionsRunning", 2);
        });
        assertThat(health.health().getStatus()).isEqualTo(Status.UP);
    }

    private TopicStats unhandledTopic() {
        return queue.namespace().stats().topic(OrderService.UNHANDLED_TOPIC);
    }
}
