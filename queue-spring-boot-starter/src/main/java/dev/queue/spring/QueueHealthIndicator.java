package dev.queue.spring;

import dev.queue.api.MessageId;
import dev.queue.postgres.ListenerState;
import dev.queue.postgres.PostgresQueue;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import java.util.Locale;

/**
 * The queue's health, as Actuator's {@code queue} component. DOWN when the queue is closed, its store cannot be
 * read, or a {@link QueueHandler} subscription stopped while the application runs. A listener that reconnects or
 * polls leaves it UP: it costs latency, never messages (subscribers sweep), and the details show it.
 */
public class QueueHealthIndicator extends AbstractHealthIndicator {

    private final PostgresQueue queue;
    private final QueueHandlerSubscriptions subscriptions;
    private final String namespace;

    /**
     * The health of a queue and its handler subscriptions.
     *
     * @param queue         the queue
     * @param subscriptions the {@link QueueHandler} subscriptions
     * @param namespace     the namespace whose stats are read, as the check that the store answers
     */
    public QueueHealthIndicator(PostgresQueue queue, QueueHandlerSubscriptions subscriptions, String namespace) {
        super("queue health check failed");
        this.queue = queue;
        this.subscriptions = subscriptions;
        this.namespace = namespace;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        builder.withDetail("schema", queue.config().schema());
        if (!queue.isOpen()) {
            builder.down().withDetail("store", "closed");
            return;
        }
        // A primary-key lookup: proves connection, schema and grants without counting rows on every probe.
        queue.namespace(namespace).inspect(MessageId.of(0));
        builder.withDetail("store", "reachable");

        ListenerState listener = queue.listenerState();
        builder.withDetail("listener", listener.name().toLowerCase(Locale.ROOT));
        if (listener == ListenerState.POLLING || listener == ListenerState.OFF) {
            builder.withDetail("wakeUps", "polling every " + queue.config().queueOptions().sweepInterval());
        }

        int subscribed = subscriptions.subscribedCount();
        int running = subscriptions.runningCount();
        builder.withDetail("subscriptions", subscribed).withDetail("subscriptionsRunning", running);
        if (running < subscribed) {
            builder.down();
        } else {
            builder.up();
        }
    }
}
