package dev.queue.domain.port;

import java.time.Instant;
import java.util.Map;

/**
 * A message as a claim returned it; {@code attempt} already counts this delivery. {@code runAt} is the due time it
 * was claimed at (its place in the claim order), null from a store that does not report it. {@code orderingKey}:
 * its ordering key, null without one. {@code limited}: its topic had a running limit (per topic or per partition) when
 * it was claimed, so its settling frees room a held-back claimer may be waiting for (a rate's room comes back with
 * time instead).
 */
public record ClaimedMessage(long id, String namespace, String topic, String json, Map<String, String> headers,
                             int priority, int attempt, int maxAttempts, long leaseToken, String worker,
                             Instant leaseUntil, Instant publishedAt, Instant runAt, String orderingKey,
                             boolean limited) {

    /** From a topic without limits. */
    public ClaimedMessage(long id, String namespace, String topic, String json, Map<String, String> headers,
                          int priority, int attempt, int maxAttempts, long leaseToken, String worker,
                          Instant leaseUntil, Instant publishedAt, Instant runAt, String orderingKey) {
        this(id, namespace, topic, json, headers, priority, attempt, maxAttempts, leaseToken, worker, leaseUntil,
                publishedAt, runAt, orderingKey, false);
    }

    /** Without an ordering key. */
    public ClaimedMessage(long id, String namespace, String topic, String json, Map<String, String> headers,
                          int priority, int attempt, int maxAttempts, long leaseToken, String worker,
                          Instant leaseUntil, Instant publishedAt, Instant runAt, boolean limited) {
        this(id, namespace, topic, json, headers, priority, attempt, maxAttempts, leaseToken, worker, leaseUntil,
                publishedAt, runAt, null, limited);
    }

    /** Without an ordering key, from a topic without limits. */
    public ClaimedMessage(long id, String namespace, String topic, String json, Map<String, String> headers,
                          int priority, int attempt, int maxAttempts, long leaseToken, String worker,
                          Instant leaseUntil, Instant publishedAt, Instant runAt) {
        this(id, namespace, topic, json, headers, priority, attempt, maxAttempts, leaseToken, worker, leaseUntil,
                publishedAt, runAt, null, false);
    }

    /** Without the due time: the claimer then cannot resume after it and claims from the head. */
    public ClaimedMessage(long id, String namespace, String topic, String json, Map<String, String> headers,
                          int priority, int attempt, int maxAttempts, long leaseToken, String worker,
                          Instant leaseUntil, Instant publishedAt) {
        this(id, namespace, topic, json, headers, priority, attempt, maxAttempts, leaseToken, worker, leaseUntil,
                publishedAt, null, null, false);
    }

    /** Its place in the claim order, null when the store did not report its due time. */
    public ClaimPosition position() {
        return runAt == null ? null : new ClaimPosition(priority, runAt, id);
    }
}
