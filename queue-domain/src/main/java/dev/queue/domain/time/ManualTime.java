package dev.queue.domain.time;

import dev.queue.api.InvalidInputException;
import dev.queue.api.ManualClock;
import dev.queue.domain.port.Clock;
import dev.queue.domain.port.CommandTime;

import java.time.Instant;

/** The domain's clock port over a test's {@link ManualClock}: every store command carries its time. */
public final class ManualTime implements Clock {

    private final ManualClock clock;

    public ManualTime(ManualClock clock) {
        this.clock = InvalidInputException.requireNonNull(clock, "clock", "a ManualClock");
    }

    @Override
    public Instant now() {
        return clock.now();
    }

    @Override
    public CommandTime commandTime() {
        return CommandTime.at(clock.now());
    }

    @Override
    public AutoCloseable onAdvance(Runnable listener) {
        return clock.onAdvance(listener);
    }
}
