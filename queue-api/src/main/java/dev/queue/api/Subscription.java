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

    /** Like {@link #close()}, waiting at most {@code timeout} for running handlers. */
    void close(Duration timeout);

    boolean isRunning();

    /** Handlers running right now. */
    int inFlight();
}
