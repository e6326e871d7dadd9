package dev.queue.api;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * A stored message as it stands, for operators asking why something did or did not run.
 * {@code runAt} is when a pending message is due; {@code leaseUntil} and {@code worker} are set while running;
 * {@code lastError} is the latest recorded failure, kept across retries and redrives. {@code attemptHistory} lists
 * the failed attempts, oldest first: the last {@value #HISTORY_LIMIT} at most, kept across retries and redrives.
 */
public record MessageInfo(MessageId id, String namespace, String topic, MessageState state, String json,
                          Map<String, String> headers, int priority, int attempts, int maxAttempts, String uniqueKey,
                          Instant publishedAt, Instant runAt, Instant leaseUntil, String worker, String lastError,
                          List<AttemptFailure> attemptHistory) {

    /** How many failed attempts a store keeps per message (the oldest go first). */
    public static final int HISTORY_LIMIT = 20;

    public MessageInfo {
        attemptHistory = attemptHistory == null ? List.of() : List.copyOf(attemptHistory);
    }

    /** Without an attempt history. */
    public MessageInfo(MessageId id, String namespace, String topic, MessageState state, String json,
                       Map<String, String> headers, int priority, int attempts, int maxAttempts, String uniqueKey,
                       Instant publishedAt, Instant runAt, Instant leaseUntil, String worker, String lastError) {
        this(id, namespace, topic, state, json, headers, priority, attempts, maxAttempts, uniqueKey, publishedAt, runAt,
                leaseUntil, worker, lastError, List.of());
    }
}
