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
     * time from {@code clock} and runs subscribers on their own threads.
     */
    Queue create(ManualClock clock, QueueOptions options);

    /** Capabilities this adapter lacks, each with the reason; their contract tests are skipped saying so. */
    default Map<Capability, String> missingCapabilities() {
        return Map.of();
    }

    @Override
    default void close() {
    }
}
