package dev.queue.testkit;

import dev.queue.api.ManualClock;
import dev.queue.api.Queue;
import dev.queue.api.QueueOptions;

import java.util.Map;

/**
 * What an adapter supplies to run the contract: fresh, empty queues whose time is a manual clock. One factory
 * instance serves a whole contract class; {@link #close()} runs after its last test.
 */
public interface QueueFactory extends AutoCloseable {

    /**
     * A queue over an empty store (no messages, dead letters or counters from earlier calls) that takes its
     * time from {@code clock} and runs subscribers on their own threads. The contract closes each queue it creates.
     *
     * @param clock   the clock the queue must take every time from, the store's included
     * @param options the options the queue must be created with
     * @return a new queue
     */
    Queue create(ManualClock clock, QueueOptions options);

    /**
     * Another queue over the same store as {@code first} (a queue this factory created), as another process of the
     * fleet would have: its own subscriptions, wake-ups and connections, the same messages. The contract closes it.
     * An adapter that cannot declares {@link Capability#SHARED_STORE_ACROSS_INSTANCES} missing.
     *
     * @param first   a queue this factory created and has not closed
     * @param clock   the clock the new queue must take every time from
     * @param options the options the new queue must be created with
     * @return a new queue over {@code first}'s store
     */
    default Queue createSharing(Queue first, ManualClock clock, QueueOptions options) {
        throw new UnsupportedOperationException(getClass().getSimpleName()
                + " cannot create a queue over another's store: declare SHARED_STORE_ACROSS_INSTANCES missing");
    }

    /**
     * Capabilities this adapter lacks, each with the reason; their contract tests are skipped saying so.
     *
     * @return the missing capabilities and why; empty (the default) when the adapter has them all
     */
    default Map<Capability, String> missingCapabilities() {
        return Map.of();
    }

    /**
     * Releases what the factory holds (a database, say), after the last test of a contract area; does nothing by
     * default.
     */
    @Override
    default void close() {
    }
}
