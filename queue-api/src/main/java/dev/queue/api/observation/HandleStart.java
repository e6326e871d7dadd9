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

    /**
     * The message's id.
     *
     * @return the id
     */
    public MessageId messageId() {
        return delivery.id();
    }

    /**
     * The namespace the message belongs to.
     *
     * @return the namespace name
     */
    public String namespace() {
        return delivery.namespace();
    }

    /**
     * The topic the message was published to.
     *
     * @return the topic name
     */
    public String topic() {
        return delivery.topic();
    }

    /**
     * Which attempt this run is.
     *
     * @return 1 on the first run, 2 on the first retry, and so on
     */
    public int attempt() {
        return delivery.attempt();
    }

    /**
     * The message's headers, including any an interceptor added when it was published (trace context, say).
     *
     * @return an unmodifiable map, possibly empty
     */
    public Map<String, String> headers() {
        return delivery.headers();
    }

    /**
     * How long the message waited from its publish to this start.
     *
     * @return the wait; zero when the publish time is unknown or later than the start (the clocks disagree)
     */
    public Duration sincePublished() {
        Instant published = delivery.publishedAt();
        if (published == null || published.isAfter(startedAt)) {
            return Duration.ZERO;
        }
        return Duration.between(published, startedAt);
    }
}
