package dev.queue.api.observation;

import dev.queue.api.Delivery;
import dev.queue.api.MessageId;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * A handler run about to start.
 *
 * @param delivery  the message as claimed: id, namespace, topic, headers, attempt, publish time
 * @param startedAt the queue's clock when the run started (a manual clock in tests)
 */
public record HandleStart(Delivery delivery, Instant startedAt) {

    public MessageId messageId() {
        return delivery.id();
    }

    public String namespace() {
        return delivery.namespace();
    }

    public String topic() {
        return delivery.topic();
    }

    /** 1 on the first run, 2 on the first retry, and so on. */
    public int attempt() {
        return delivery.attempt();
    }

    public Map<String, String> headers() {
        return delivery.headers();
    }

    /** How long the message waited from its publish to this start; zero if the clocks disagree. */
    public Duration sincePublished() {
        Instant published = delivery.publishedAt();
        if (published == null || published.isAfter(startedAt)) {
            return Duration.ZERO;
        }
        return Duration.between(published, startedAt);
    }
}
