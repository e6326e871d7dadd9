package dev.queue.example.customadapter;

import dev.queue.api.Queue;
import dev.queue.api.QueueOptions;
import dev.queue.codec.jackson.JacksonPayloadCodec;
import dev.queue.domain.engine.QueueEngine;
import dev.queue.domain.port.Clock;
import dev.queue.domain.time.SystemClock;

/**
 * A queue over the example's store: the ports implemented in this package, wired into the domain's
 * {@link QueueEngine}. Everything lives in the heap of one process and goes with it; the point is to show what an
 * adapter of one's own takes, and how the contract in queue-testkit judges it (see docs/custom-adapters.md).
 *
 * <pre>{@code
 * try (Queue queue = OneLockQueue.create(QueueOptions.defaults())) {
 *     Namespace shop = queue.namespace("shop");
 *     shop.publish("order.paid", new OrderPaid(42));
 * }
 * }</pre>
 */
public final class OneLockQueue {

    private OneLockQueue() {
    }

    /** On the machine's clock: the store has no clock of its own, so every command carries the machine's time. */
    public static Queue create(QueueOptions options) {
        return create(SystemClock.authoritative(), options);
    }

    /**
     * On {@code clock}: a {@code ManualTime} over a test's manual clock moves the queue only when the test advances
     * it. Subscribers run on their own threads.
     */
    public static Queue create(Clock clock, QueueOptions options) {
        QueueEngine.checkOptions(options);
        OneLockWakeUps wakeUps = new OneLockWakeUps();
        OneLockMessageStore messages = new OneLockMessageStore(clock, wakeUps);
        return QueueEngine.builder()
                .store(messages)
                .scheduleStore(new OneLockScheduleStore(messages))
                .wakeUps(wakeUps)
                .clock(clock)
                .options(options)
                .defaultCodec(new JacksonPayloadCodec())
                .build();
    }
}
