package dev.queue.api;

import java.time.Instant;
import java.util.Map;

/**
 * A message that failed for good: explicitly, or because it ran out of attempts. It stays a dead letter until
 * {@linkplain DeadLetters#redrive redriven} or {@linkplain DeadLetters#purge purged}.
 *
 * @param id          the message's id, the same it had while pending and keeps when redriven
 * @param namespace   the namespace it belongs to
 * @param topic       the topic it was published to
 * @param json        the payload as the JSON text it was stored as
 * @param headers     its headers
 * @param priority    its priority, 0 (first) to 9 (last)
 * @param attempts    how many attempts it used
 * @param maxAttempts how many attempts it was allowed
 * @param lastError   the error of its last failure, or the reason it was failed with
 * @param publishedAt when it was published
 * @param failedAt    when it became a dead letter
 */
public record DeadLetter(MessageId id, String namespace, String topic, String json, Map<String, String> headers,
                         int priority, int attempts, int maxAttempts, String lastError, Instant publishedAt,
                         Instant failedAt) {
}
