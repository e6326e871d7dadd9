package dev.queue.domain.port;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * A validated message to store. Exactly one of {@code runAt} and {@code delay} decides when it becomes due:
 * {@code runAt} when not null, else the store's now plus {@code delay}. {@code orderingKey} null: none.
 */
public record NewMessage(String namespace, String topic, String json, Map<String, String> headers, int priority,
                         int maxAttempts, String uniqueKey, Instant runAt, Duration delay, String orderingKey) {

    /** Without an ordering key. */
    public NewMessage(String namespace, String topic, String json, Map<String, String> headers, int priority,
                      int maxAttempts, String uniqueKey, Instant runAt, Duration delay) {
        this(namespace, topic, json, headers, priority, maxAttempts, uniqueKey, runAt, delay, null);
    }
}
