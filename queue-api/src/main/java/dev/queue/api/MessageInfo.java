package dev.queue.api;

import java.time.Instant;
import java.util.Map;

/**
 * A stored message as it stands, for operators asking why something did or did not run.
 * {@code runAt} is when a pending message is due; {@code leaseUntil} and {@code worker} are set while running;
 * {@code lastError} is the latest recorded failure, kept across retries and redrives.
 */
public record MessageInfo(MessageId id, String namespace, String topic, MessageState state, String json,
                          Map<String, String> headers, int priority, int attempts, int maxAttempts, String uniqueKey,
                          Instant publishedAt, Instant runAt, Instant leaseUntil, String worker, String lastError) {
}
