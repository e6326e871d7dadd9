package dev.queue.spring;

import dev.queue.api.PayloadCodec;
import dev.queue.api.QueueOptions;
import dev.queue.api.observation.QueueInterceptor;
import dev.queue.micrometer.QueueMetrics;
import dev.queue.opentelemetry.QueueTracing;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.OpenTelemetry;
import dev.queue.postgres.PostgresQueue;
import dev.queue.postgres.PostgresQueueConfig;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
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
import java.time.Duration;

/**
 * A {@link PostgresQueue} on the application's {@link DataSource}, configured by {@code queue.*}; a
 * {@link QueueTemplate} that joins Spring transactions; {@link QueueHandler} methods run as subscriptions of the
 * context's lifecycle; with Actuator, a health indicator named {@code queue}; with a Micrometer {@link MeterRegistry}
 * and queue-micrometer, the queue's metrics in that registry; with an {@link OpenTelemetry} bean and
 * queue-opentelemetry, its spans; with queue-dashboard and {@code queue.dashboard.enabled}, the operator's dashboard on a
 * port of its own ({@link QueueDashboardServer}). Every {@link QueueInterceptor} bean observes the queue, in bean order. Every bean
 * backs off when the application defines its own.
 *
 * <p>The LISTEN connection comes from the DataSource, or from {@code queue.listen-url} when set (a direct route
 * to the server when the DataSource goes through a transaction-pooling proxy).
 */
@AutoConfiguration(after = DataSourceAutoConfiguration.class,
        afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass(PostgresQueue.class)
@ConditionalOnBean(DataSource.class)
@ConditionalOnProperty(prefix = "queue", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(QueueProperties.class)
public class QueueAutoConfiguration {

    /** How often the metrics' per-topic gauges read the namespace's stats: one query, never one per scrape. */
    static final Duration STATS_INTERVAL = Duration.ofSeconds(15);

    /**
     * The queue's configuration from {@code queue.*}, with the application's {@link PayloadCodec} bean when it has
     * exactly one, and every {@link QueueInterceptor} bean in bean order.
     *
     * @param properties   the {@code queue.*} properties
     * @param codec        the application's codec, if any
     * @param interceptors the application's interceptors, if any
     * @return the configuration
     * @throws InvalidQueuePropertyException when a property cannot be honoured
     */
    @Bean
    @ConditionalOnMissingBean
    public PostgresQueueConfig queueConfig(QueueProperties properties, ObjectProvider<PayloadCodec> codec,
                                           ObjectProvider<QueueInterceptor> interceptors) {
        PostgresQueueConfig config = QueueConfigFactory.create(properties, codec.getIfUnique());
        QueueOptions options = config.queueOptions();
        for (QueueInterceptor interceptor : interceptors.orderedStream().toList()) {
            options = options.interceptor(interceptor);
        }
        return config.queueOptions(options);
    }

    /**
     * The queue, on the application's DataSource. Closed by the context after the handlers stopped (lifecycle beans
     * stop before singletons are destroyed).
     *
     * @param dataSource the application's DataSource
     * @param config     the queue's configuration
     * @param properties the {@code queue.*} properties, for the LISTEN connection
     * @return the queue, created (and migrated, unless {@code queue.migrate-on-start} is false) on start
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public PostgresQueue queue(DataSource dataSource, PostgresQueueConfig config, QueueProperties properties) {
        DataSource listen = ListenDataSource.of(properties);
        return listen == null ? PostgresQueue.create(dataSource, config) : PostgresQueue.create(dataSource, listen, config);
    }

    /**
     * The template publishing to {@code queue.namespace}, joining Spring transactions.
     *
     * @param queue      the queue
     * @param dataSource the application's DataSource, whose transactions publishes join
     * @param properties the {@code queue.*} properties
     * @return the template
     */
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

    /**
     * The subscriptions of the {@link QueueHandler} methods, started and stopped with the context.
     *
     * @param queue      the queue
     * @param collector  the handler methods found among the beans
     * @param properties the {@code queue.*} properties, for the handlers' defaults
     * @return the subscriptions
     */
    @Bean
    @ConditionalOnMissingBean
    public QueueHandlerSubscriptions queueHandlerSubscriptions(PostgresQueue queue, QueueHandlerCollector collector,
                                                               QueueProperties properties) {
        return new QueueHandlerSubscriptions(queue, collector, properties);
    }

    /** The queue's meters in the application's registry, when it has one and queue-micrometer is on the class path. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({QueueMetrics.class, MeterRegistry.class})
    static class QueueMetricsConfiguration {

        @Bean(destroyMethod = "close")
        @ConditionalOnBean(MeterRegistry.class)
        @ConditionalOnMissingBean
        QueueMetrics queueMetrics(MeterRegistry registry) {
            return new QueueMetrics(registry);
        }

        /**
         * Once the queue exists, the per-topic gauges follow the namespace of {@code queue.namespace}. Here rather than
         * in the queue's bean method, so that the queue's configuration loads without queue-micrometer.
         */
        @Bean
        SmartInitializingSingleton queueMetricsWatch(ObjectProvider<QueueMetrics> metrics, ObjectProvider<PostgresQueue> queue,
                                                     QueueProperties properties) {
            return () -> metrics.ifAvailable(m -> queue.ifAvailable(q ->
                    m.watch(q.namespace(properties.getNamespace())).refreshStatsEvery(STATS_INTERVAL)));
        }
    }

    /** The queue's spans, when the application has an OpenTelemetry bean and queue-opentelemetry is on the class path. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({QueueTracing.class, OpenTelemetry.class})
    static class QueueTracingConfiguration {

        @Bean
        @ConditionalOnBean(OpenTelemetry.class)
        @ConditionalOnMissingBean
        QueueTracing queueTracing(OpenTelemetry openTelemetry) {
            return QueueTracing.create(openTelemetry);
        }
    }

    /** The operator's dashboard: queue-dashboard on the class path and queue.dashboard.enabled=true. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "dev.queue.dashboard.QueueDashboard")
    @ConditionalOnProperty(prefix = "queue.dashboard", name = "enabled", havingValue = "true")
    static class QueueDashboardConfiguration {

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean
        QueueDashboardServer queueDashboardServer(DataSource dataSource, QueueProperties properties, PostgresQueue queue) {
            // after the queue: it migrates the schema the dashboard reads
            return QueueDashboardServer.start(dataSource, properties);
        }
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
