package dev.queue.example.customadapter;

import dev.queue.api.ManualClock;
import dev.queue.api.Queue;
import dev.queue.api.QueueOptions;
import dev.queue.domain.time.ManualTime;
import dev.queue.testkit.Capability;
import dev.queue.testkit.QueueFactory;

import java.util.Map;

/**
 * The example's adapter for the contract: a fresh store per queue, on the test's manual clock. It leaves out limits
 * and ordering keys, which an adapter may do: the store refuses them (the port's defaults), and the contract skips
 * their areas.
 */
final class OneLockQueueFactory implements QueueFactory {

    @Override
    public Queue create(ManualClock clock, QueueOptions options) {
        return OneLockQueue.create(new ManualTime(clock), options);
    }

    @Override
    public Map<Capability, String> missingCapabilities() {
        return Map.of(Capability.LIMITS, "the example keeps its store minimal: OneLockMessageStore does not implement "
                        + "concurrency and rate limits, so setting them throws UnsupportedCapabilityException",
                Capability.ORDERING_KEYS, "the example keeps its store minimal: it does not implement ordering "
                        + "keys, so a keyed publish is refused with UnsupportedCapabilityException");
    }
}
