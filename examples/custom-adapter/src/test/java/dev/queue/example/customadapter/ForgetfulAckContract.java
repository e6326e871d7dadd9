package dev.queue.example.customadapter;

import dev.queue.api.ManualClock;
import dev.queue.api.Queue;
import dev.queue.api.QueueOptions;
import dev.queue.codec.jackson.JacksonPayloadCodec;
import dev.queue.domain.engine.QueueEngine;
import dev.queue.domain.time.ManualTime;
import dev.queue.testkit.Capability;
import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.QueueContract;
import org.junit.jupiter.api.Tag;

import java.util.Map;

/**
 * The whole contract against the example's adapter with {@link ForgetfulAckStore} in front of its message store.
 * It fails by design, so the build's own test run leaves it out (the tag, excluded in this module's pom, and a
 * name surefire does not pick up); {@link BrokenVariantTest} runs it and checks where it fails.
 */
@Tag(ForgetfulAckContract.BROKEN_ON_PURPOSE)
class ForgetfulAckContract extends QueueContract {

    static final String BROKEN_ON_PURPOSE = "broken-on-purpose";

    @Override
    protected QueueFactory factory() {
        return new QueueFactory() {
            @Override
            public Queue create(ManualClock clock, QueueOptions options) {
                return queue(clock, options);
            }

            @Override
            public Map<Capability, String> missingCapabilities() {
                return new OneLockQueueFactory().missingCapabilities();
            }
        };
    }

    /** Wired as {@link OneLockQueue} wires the store, with the forgetful ack in between. */
    private static Queue queue(ManualClock clock, QueueOptions options) {
        ManualTime time = new ManualTime(clock);
        OneLockWakeUps wakeUps = new OneLockWakeUps();
        OneLockMessageStore messages = new OneLockMessageStore(time, wakeUps);
        return QueueEngine.builder()
                .store(new ForgetfulAckStore(messages))
                .scheduleStore(new OneLockScheduleStore(messages))
                .wakeUps(wakeUps)
                .clock(time)
                .options(options)
                .defaultCodec(new JacksonPayloadCodec())
                .build();
    }
}
