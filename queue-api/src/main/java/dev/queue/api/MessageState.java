package dev.queue.api;

/** Where a stored message stands. Completed messages leave the store, so they are never inspected. */
public enum MessageState {
    /** Waiting: due now, delayed, or waiting for a retry. */
    PENDING,
    /** Leased to a worker until its lease ends. */
    RUNNING,
    /** A dead letter. */
    DEAD
}
