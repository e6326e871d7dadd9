package dev.queue.spring;

import dev.queue.api.PayloadCodec;
import dev.queue.postgres.PostgresQueue;
import dev.queue.postgres.PostgresQueueConfig;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import javax.sql.DataSource;

/**
 * A {@link PostgresQueue} on the application's {@link DataSource}, configured by {@code queue.*}; a
 * {@link QueueTemplate} that joins Spring transactions; {@link QueueHandler} methods run as subscriptions of the
 * context's lifecycle; and, with Actuator, a health indicator named {@code queue}. Every bean backs off when the
 * application defines its own.
 *
 * <p>The LISTEN connection comes from the DataSource, or from {@code queue.listen-url} when set (a direct route
 * to the server when the DataSource goes through a transaction-pooling proxy).
 */
@AutoConfiguration(after = DataSourceAutoConfiguration.class)
@ConditionalOnClass(PostgresQueue.class)
@ConditionalOnBean(DataSource.class)
@ConditionalOnProperty(prefix = "queue", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(QueueProperties.class)
public class QueueAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    public PostgresQueueConfig queueConfig(QueueProperties properties, ObjectProvider<PayloadCodec> codec) {
        return QueueConfigFactory.create(properties, codec.getIfUnique());
    }

    /** Closed by the context after the handlers stopped (lifecycle beans stop before singletons are destroyed). */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public PostgresQueue queue(DataSource dataSource, PostgresQueueConfig config, QueueProperties properties) {
        DataSource listen = ListenDataSource.of(properties);
        // Observation (issue 24): the lead wires queue-micrometer (a MeterRegistry bean) and queue-opentelemetry
        // (an OpenTelemetry bean) here, as interceptors of the config, once the interceptor SPI is merged.
        return listen == null ? PostgresQueue.create(dataSource, config) : PostgresQueue.create(dataSource, listen, config);
    }

    @Bean
    @ConditionalOnMissingBean
    public QueueTemplate queueTemplate(PostgresQueue queue, DataSource dataSource, QueueProperties properties) {
        return new QueueTemplate(queue, dataSource, properties.getNamespace());
    }

    /** Static: a bean post-processor must exist before the beans it inspects, so it depends on nothing. */
    @Bean
    static QueueHandlerCollector queueHandlerCollector() {
        return new QueueHandlerCollector();
    }

    @Bean
    @ConditionalOnMissingBean
    public QueueHandlerSubscriptions queueHandlerSubscriptions(PostgresQueue queue, QueueHandlerCollector collector,
                                                               QueueProperties properties) {
        return new QueueHandlerSubscriptions(queue, collector, properties);
    }

    /** Only when the application has Actuator's health support on its class path. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(HealthIndicator.class)
    static class QueueHealthConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "queueHealthIndicator")
        QueueHealthIndicator queueHealthIndicator(PostgresQueue queue, QueueHandlerSubscriptions subscriptions,
                                                  QueueProperties properties) {
            return new QueueHealthIndicator(queue, subscriptions, properties.getNamespace());
        }
    }
}
