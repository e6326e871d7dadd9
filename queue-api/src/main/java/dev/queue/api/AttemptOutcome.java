package dev.queue.api;

/** How an attempt of a message ended, as {@link Attempt#outcome()} gives it. */
public enum AttemptOutcome {
    /** It has not ended: the message is running under this attempt's lease. */
    RUNNING,
    /** It failed with attempts left (a nack, or a failure the handler threw): the message is due again later. */
    RETRY,
    /** Its lease ended before its worker settled it; the rescue of expired leases gave the message back. */
    LEASE_EXPIRED,
    /** It made the message a dead letter: an explicit failure, or a failure (an expired lease too) on the last attempt. */
    DEAD,
    /**
     * It succeeded. Only a store that keeps completed messages shows it (PostgreSQL, while the queue archives them),
     * and {@code inspect} finds no completed message: here only when the message completed while being inspected.
     */
    COMPLETED
}
