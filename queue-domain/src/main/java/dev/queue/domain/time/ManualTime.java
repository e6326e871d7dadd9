package dev.queue.domain.time;

import dev.queue.api.InvalidInputException;
import dev.queue.api.ManualClock;
import dev.queue.domain.port.Clock;

import java.time.Instant;

/** The domain's clock port over a test's {@link ManualClock}: authoritative, so every store command carries its time. */
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
    public boolean isAuthoritative() {
        return true;
    }

    @Override
    public AutoCloseable onAdvance(Runnable listener) {
        return clock.onAdvance(listener);
    }
}
