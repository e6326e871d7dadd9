package dev.queue.api;

import java.time.Instant;
import java.util.Map;

/** A message that failed for good: explicitly, or because it ran out of attempts. */
public record DeadLetter(MessageId id, String namespace, String topic, String json, Map<String, String> headers,
                         int priority, int attempts, int maxAttempts, String lastError, Instant publishedAt,
                         Instant failedAt) {
}
