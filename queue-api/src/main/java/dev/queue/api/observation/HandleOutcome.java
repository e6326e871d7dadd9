package dev.queue.api.observation;

/** What became of a message after its handler ran. */
public enum HandleOutcome {
    /** Done: acknowledged and recorded. */
    ACKED,
    /** Pending again, due at {@link HandleEnd#retryAt()}: the handler failed or asked for a retry. */
    RETRY_SCHEDULED,
    /** A dead letter: out of attempts, failed by its handler, or its payload could not be decoded. */
    DEAD_LETTERED,
    /** The lease had expired before the result was recorded; another worker may have run the message. */
    LEASE_LOST,
    /** The handler snoozed the message: pending again at the time it asked for, the attempt not counted. */
    SNOOZED,
    /** The store stayed unavailable for a whole lease; the message runs again when its lease expires. */
    NOT_RECORDED
}
