package dev.queue.example.customadapter;

import dev.queue.api.ManualClock;
import dev.queue.api.Queue;
import dev.queue.api.QueueOptions;
import dev.queue.domain.time.ManualTime;
import dev.queue.testkit.QueueFactory;

/** The example's adapter for the contract: a fresh store per queue, on the test's manual clock. */
final class OneLockQueueFactory implements QueueFactory {

    @Override
    public Queue create(ManualClock clock, QueueOptions options) {
        return OneLockQueue.create(new ManualTime(clock), options);
    }
}
