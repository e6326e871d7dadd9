package dev.queue.spring;

import dev.queue.api.InvalidInputException;
import dev.queue.api.PayloadCodec;
import dev.queue.api.QueueOptions;
import dev.queue.postgres.PostgresQueueConfig;

import java.util.function.UnaryOperator;

/**
 * Turns {@link QueueProperties} into a {@link PostgresQueueConfig}. Each property is applied and the whole
 * configuration validated at once, so a value the queue refuses fails at start under its own property name
 * ({@code queue.sweep-interval}), not under the adapter's option name.
 */
final class QueueConfigFactory {

    private QueueConfigFactory() {
    }

    static PostgresQueueConfig create(QueueProperties properties, PayloadCodec codec) {
        PostgresQueueConfig config = PostgresQueueConfig.defaults();
        config = apply(config, "queue.schema", properties.getSchema(), c -> c.schema(properties.getSchema()));
        config = apply(config, "queue.migrate-on-start", properties.isMigrateOnStart(), c -> c.migrateOnStart(properties.isMigrateOnStart()));
        config = apply(config, "queue.listen", properties.isListen(), c -> c.listen(properties.isListen()));
        config = apply(config, "queue.notify-window", properties.getNotifyWindow(), c -> c.notifyWindow(properties.getNotifyWindow()));
        config = apply(config, "queue.vacuum-interval", properties.getVacuumInterval(), c -> c.vacuumInterval(properties.getVacuumInterval()));
        config = apply(config, "queue.durable-acknowledgements", properties.isDurableAcknowledgements(),
                c -> c.durableAcknowledgements(properties.isDurableAcknowledgements()));
        config = apply(config, "queue.completed-retention", properties.getCompletedRetention(),
                c -> c.completedRetention(properties.getCompletedRetention()));
        config = apply(config, "queue.sweep-interval", properties.getSweepInterval(),
                c -> c.queueOptions(c.queueOptions().sweepInterval(properties.getSweepInterval())));
        config = apply(config, "queue.default-max-attempts", properties.getDefaultMaxAttempts(),
                c -> c.queueOptions(c.queueOptions().defaultMaxAttempts(properties.getDefaultMaxAttempts())));
        config = apply(config, "queue.max-payload-bytes", properties.getMaxPayloadBytes(),
                c -> c.queueOptions(c.queueOptions().maxPayloadBytes(properties.getMaxPayloadBytes())));
        config = apply(config, "queue.schedule-tick-interval", properties.getScheduleTickInterval(),
                c -> c.queueOptions(c.queueOptions().scheduleTickInterval(properties.getScheduleTickInterval())));
        config = apply(config, "queue.close-timeout", properties.getCloseTimeout(),
                c -> c.queueOptions(c.queueOptions().closeTimeout(properties.getCloseTimeout())));
        if (codec != null) {
            QueueOptions options = config.queueOptions().codec(codec);
            config = config.queueOptions(options);
        }
        return config.validate();
    }

    private static PostgresQueueConfig apply(PostgresQueueConfig config, String property, Object value,
                                             UnaryOperator<PostgresQueueConfig> change) {
        try {
            return change.apply(config).validate();
        } catch (InvalidInputException e) {
            throw new InvalidQueuePropertyException(property, value, e.getMessage(), e);
        }
    }
}
