package dev.queue.inmemory;

import dev.queue.api.ManualClock;
import dev.queue.api.Queue;
import dev.queue.api.QueueOptions;
import dev.queue.testkit.QueueFactory;

/** The in-memory adapter for the contract: a fresh store per queue, subscribers on their own threads. */
public final class InMemoryQueueFactory implements QueueFactory {

    @Override
    public Queue create(ManualClock clock, QueueOptions options) {
        return InMemoryQueue.threaded(clock, options);
    }

    @Override
    public Queue createSharing(Queue first, ManualClock clock, QueueOptions options) {
        return InMemoryQueue.threadedSharing((InMemoryQueue) first, clock, options);
    }
}
