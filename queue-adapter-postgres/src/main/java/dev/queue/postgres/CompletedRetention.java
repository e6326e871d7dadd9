package dev.queue.postgres;

/** What happens to a message once it is acknowledged. Either way it leaves the hot table and is counted. */
public enum CompletedRetention {
    /** The row is deleted (the default): the cheapest, and nothing to prune. */
    DELETE,
    /**
     * The row is moved to the {@code completed_messages} table of the schema, with its completion time, for
     * audits and debugging. Pruning that table is up to the operator.
     */
    ARCHIVE
}
