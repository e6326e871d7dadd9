package dev.queue.postgres;

/**
 * What a {@link PostgresQueue}'s wake-up listener is doing, for health checks and operators. Whatever the state,
 * subscribers also sweep, so no state loses a message: the states other than {@link #LISTENING} only cost latency.
 */
public enum ListenerState {
    /** {@code listen(false)}: subscribers find work by sweeping only. */
    OFF,
    /** Nothing subscribed yet; the listening connection opens with the first subscription. */
    NOT_STARTED,
    /** A dedicated connection LISTENs and wake-ups arrive. */
    LISTENING,
    /** The listening connection is lost and being re-established with backoff. */
    RECONNECTING,
    /** LISTEN was found not to deliver (a transaction-pooling proxy): listeners are polled each sweep interval. */
    POLLING,
    /** The queue is closed. */
    CLOSED
}
