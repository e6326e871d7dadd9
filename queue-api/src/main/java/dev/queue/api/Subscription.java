package dev.queue.api;

import java.time.Duration;

/** A running subscriber. Closing stops claiming, waits for handlers in flight, and releases the rest. */
public interface Subscription extends AutoCloseable {

    /**
     * Stops claiming, gives back messages claimed but not yet started (without counting an attempt), and waits
     * up to the subscriber's shutdown timeout for running handlers. Safe to call more than once.
     */
    @Override
    void close();

    /**
     * Like {@link #close()}, waiting at most {@code timeout} for running handlers instead of the subscriber's
     * shutdown timeout. Handlers still running after that are interrupted; their messages run again when their
     * leases expire.
     *
     * @param timeout how long to wait for running handlers
     */
    void close(Duration timeout);

    /**
     * Whether the subscription still claims and runs messages.
     *
     * @return false once closing has begun, or once its claiming loop has stopped
     */
    boolean isRunning();

    /**
     * Handlers running right now.
     *
     * @return the number of handler runs in progress
     */
    int inFlight();
}
