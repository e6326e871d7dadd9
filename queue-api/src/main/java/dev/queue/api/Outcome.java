package dev.queue.api;

/** What an acknowledgement, a retry, a failure or a lease extension did to a message. */
public enum Outcome {
    /** The message is done and has left the queue. */
    ACKED,
    /** The message is pending again and will be delivered at its next due time. */
    RETRY_SCHEDULED,
    /** The message is a dead letter: failed explicitly, or out of attempts. */
    DEAD_LETTERED,
    /** The caller's lease now lasts longer. */
    EXTENDED,
    /** The message was given back without counting an attempt (graceful shutdown before its handler started). */
    RELEASED,
    /**
     * The message is pending again, due at the time its holder asked for, without counting the attempt as a failure
     * and without the retry path: no error recorded, no backoff, never a dead letter for it.
     */
    SNOOZED,
    /**
     * The caller no longer holds the message: its lease expired and the message was re-delivered, finished
     * or dead-lettered meanwhile, or it belongs to another namespace. Nothing was changed.
     */
    LEASE_LOST;

    /**
     * Whether the caller had lost the message, so that nothing was changed.
     *
     * @return true for {@link #LEASE_LOST}
     */
    public boolean isLeaseLost() {
        return this == LEASE_LOST;
    }
}
