package dev.queue.testkit;

/** Behaviour a contract test relies on that an adapter may declare it lacks (with a reason). */
public enum Capability {
    /**
     * Several independent queue instances over the same store share work (multiple replicas); the factory makes them
     * with {@link QueueFactory#createSharing}.
     */
    SHARED_STORE_ACROSS_INSTANCES,
    /** Completed messages are counted after they leave the store. */
    COMPLETED_COUNTS,
    /** Pause and resume of topics, cancel and snooze (docs/flow-control.md). */
    FLOW_CONTROL,
    /** Fleet-wide concurrency and rate limits per topic and partition (docs/flow-control.md, "Limits"). */
    LIMITS,
    /** Ordering keys and the per-topic choice behind a dead letter (docs/flow-control.md). */
    ORDERING_KEYS
}
