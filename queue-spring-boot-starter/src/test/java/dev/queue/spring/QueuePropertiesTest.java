package dev.queue.spring;

import dev.queue.postgres.ListenerState;
import dev.queue.postgres.PostgresQueue;
import dev.queue.postgres.PostgresQueueConfig;
import dev.queue.spring.shop.ShopApplication;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/** {@code queue.*} properties reach the queue, and a value it cannot honour stops the start naming itself. */
class QueuePropertiesTest {

    @Test
    void propertiesConfigureTheQueue() {
        String schema = EmbeddedPostgresServer.freshSchema("spring_props");
        try (ConfigurableApplicationContext app = start("queue.schema=" + schema, "queue.notify-window=5ms",
                "queue.sweep-interval=300ms", "queue.listen=false", "queue.default-max-attempts=7")) {
            PostgresQueueConfig config = app.getBean(PostgresQueue.class).config();
            assertThat(config.schema()).isEqualTo(schema);
            assertThat(config.notifyWindow()).isEqualTo(Duration.ofMillis(5));
            assertThat(config.listen()).isFalse();
            assertThat(config.queueOptions().sweepInterval()).isEqualTo(Duration.ofMillis(300));
            assertThat(config.queueOptions().defaultMaxAttempts()).isEqualTo(7);
        }
    }

    @Test
    void aListenUrlGivesTheListenConnectionItsOwnRoute() {
        String schema = EmbeddedPostgresServer.freshSchema("spring_props");
        String application = "listen-" + schema;
        String url = EmbeddedPostgresServer.jdbcUrl();
        String listenUrl = url + (url.contains("?") ? "&" : "?") + "ApplicationName=" + application;
        try (ConfigurableApplicationContext app = start("queue.schema=" + schema, "queue.listen-url=" + listenUrl)) {
            PostgresQueue queue = app.getBean(PostgresQueue.class);
            JdbcTemplate jdbc = app.getBean(JdbcTemplate.class);
            await().atMost(Duration.ofSeconds(20)).until(() -> queue.listenerState() == ListenerState.LISTENING);
            assertThat(jdbc.queryForObject("SELECT count(*) FROM pg_stat_activity WHERE application_name = ?",
                    Integer.class, application)).as("sessions of the listen URL").isEqualTo(1);
        }
    }

    @Test
    void aListenUrlOfAnotherDatabaseKindFailsTheStartNamingPropertyAndValue() {
        assertStartFails("queue.listen-url", "jdbc:mysql://db/app", "queue.listen-url=jdbc:mysql://db/app");
    }

    @Test
    void aNotifyWindowTooLongFailsTheStartNamingPropertyAndValue() {
        assertStartFails("queue.notify-window", "PT5S", "queue.notify-window=5s");
    }

    @Test
    void anInvalidSchemaNameFailsTheStartNamingPropertyAndValue() {
        assertStartFails("queue.schema", "Bad-Schema", "queue.schema=Bad-Schema");
    }

    @Test
    void aZeroSweepIntervalFailsTheStartNamingPropertyAndValue() {
        assertStartFails("queue.sweep-interval", "PT0S", "queue.sweep-interval=0s");
    }

    @Test
    void aHandlerConcurrencyOutOfRangeFailsTheStartNamingPropertyAndValue() {
        assertStartFails("queue.handlers.concurrency", "0", "queue.schema=" + EmbeddedPostgresServer.freshSchema("spring_props"),
                "queue.handlers.concurrency=0");
    }

    private static void assertStartFails(String property, String value, String... properties) {
        Throwable failure = catchThrowable(() -> start(properties).close());
        InvalidQueuePropertyException invalid = causeOfType(failure, InvalidQueuePropertyException.class);
        assertThat(invalid).as("an InvalidQueuePropertyException in the causes of %s", failure).isNotNull();
        assertThat(invalid.property()).isEqualTo(property);
        assertThat(String.valueOf(invalid.value())).isEqualTo(value);
        assertThat(invalid.getMessage()).contains(property).contains(value);
    }

    private static <T extends Throwable> T causeOfType(Throwable failure, Class<T> type) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (type.isInstance(cause)) {
                return type.cast(cause);
            }
        }
        return null;
    }

    private static ConfigurableApplicationContext start(String... properties) {
        return new SpringApplicationBuilder(ShopApplication.class)
                .properties("spring.datasource.url=" + EmbeddedPostgresServer.jdbcUrl())
                .properties(properties)
                .run();
    }
}
