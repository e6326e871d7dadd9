package dev.queue.domain.port;

import java.time.Instant;

/**
 * What one rescue pass did. {@code lookedUpTo} is the now the store compared leases with, null when it does not
 * say: when the pass did not fill its limit, every lease that ended before it was looked at.
 */
public record RescueResult(int requeued, int deadLettered, Instant lookedUpTo) {

    public RescueResult(int requeued, int deadLettered) {
        this(requeued, deadLettered, null);
    }

    public int total() {
        return requeued + deadLettered;
    }
}
