package dev.queue.spring;

import dev.queue.api.MessageId;
import dev.queue.api.TopicStats;
import dev.queue.spring.shop.OrderPaid;
import dev.queue.spring.shop.ShopApplication;
import dev.queue.spring.shop.SlowJobHandler;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Closing the application context with a handler in flight loses no message. */
class GracefulShutdownTest {

    @Test
    void aHandlerInFlightAtShutdownFinishesAndItsMessageIsDone() throws Exception {
        String schema = EmbeddedPostgresServer.freshSchema("spring_stop");
        ConfigurableApplicationContext app = start(schema, "30s");
        SlowJobHandler handler = app.getBean(SlowJobHandler.class);
        QueueHandlerSubscriptions subscriptions = app.getBean(QueueHandlerSubscriptions.class);
        MessageId id = app.getBean(QueueTemplate.class).publish(SlowJobHandler.TOPIC, new OrderPaid("o-1", 1));
        await().atMost(Duration.ofSeconds(20)).until(() -> handler.started().contains(id));

        CompletableFuture<Void> closing = CompletableFuture.runAsync(app::close);
        await().atMost(Duration.ofSeconds(20)).until(() -> !subscriptions.isRunning());
        assertThat(closing).as("the context waits for the handler in flight").isNotDone();
        handler.release();
        closing.get(30, TimeUnit.SECONDS);

        assertThat(handler.finished()).containsExactly(id);
        try (ConfigurableApplicationContext after = start(schema, "30s")) {
            TopicStats slow = after.getBean(QueueTemplate.class).namespace().stats().topic(SlowJobHandler.TOPIC);
            assertThat(slow.pending() + slow.running() + slow.dead()).as("messages left on " + SlowJobHandler.TOPIC).isZero();
            assertThat(after.getBean(SlowJobHandler.class).started()).isEmpty();
        }
    }

    @Test
    void aHandlerStillRunningAfterTheShutdownTimeoutRunsAgainInTheNextProcess() throws Exception {
        String schema = EmbeddedPostgresServer.freshSchema("spring_stop");
        ConfigurableApplicationContext first = start(schema, "100ms");
        SlowJobHandler stuck = first.getBean(SlowJobHandler.class);
        MessageId id = first.getBean(QueueTemplate.class).publish(SlowJobHandler.TOPIC, new OrderPaid("o-2", 2));
        await().atMost(Duration.ofSeconds(20)).until(() -> stuck.started().contains(id));

        first.close();

        try (ConfigurableApplicationContext second = start(schema, "30s")) {
            SlowJobHandler again = second.getBean(SlowJobHandler.class);
            await().atMost(Duration.ofSeconds(30)).until(() -> again.started().contains(id));
            again.release();
            await().atMost(Duration.ofSeconds(20)).until(() -> again.finished().contains(id));
        } finally {
            stuck.release();
        }
    }

    private static ConfigurableApplicationContext start(String schema, String shutdownTimeout) {
        return new SpringApplicationBuilder(ShopApplication.class)
                .properties(
                        "spring.datasource.url=" + EmbeddedPostgresServer.jdbcUrl(),
                        "queue.schema=" + schema,
                        "queue.sweep-interval=200ms",
                        "queue.handlers.lease=2s",
                        "queue.handlers.shutdown-timeout=" + shutdownTimeout)
                .run();
    }
}
