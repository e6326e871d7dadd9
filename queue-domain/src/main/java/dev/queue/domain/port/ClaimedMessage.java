package dev.queue.domain.port;

import java.time.Instant;
import java.util.Map;

/** A message as a claim returned it; {@code attempt} already counts this delivery. */
public record ClaimedMessage(long id, String namespace, String topic, String json, Map<String, String> headers,
                             int priority, int attempt, int maxAttempts, long leaseToken, String worker,
                             Instant leaseUntil, Instant publishedAt) {
}
