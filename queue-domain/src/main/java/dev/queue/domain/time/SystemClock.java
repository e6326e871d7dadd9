package dev.queue.domain.time;

import dev.queue.domain.port.Clock;
import dev.queue.domain.port.CommandTime;

import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * The machine's clock. Not authoritative when the store has a clock of its own (a database); authoritative
 * for stores without one (in memory).
 */
public final class SystemClock implements Clock {

    private final boolean authoritative;

    private SystemClock(boolean authoritative) {
        this.authoritative = authoritative;
    }

    /** For stores that keep their own time: this clock only paces local timers. */
    public static SystemClock pacingOnly() {
        return new SystemClock(false);
    }

    /** For stores without a clock of their own. */
    public static SystemClock authoritative() {
        return new SystemClock(true);
    }

    @Override
    public Instant now() {
        return Instant.now().truncatedTo(ChronoUnit.MICROS);
    }

    @Override
    public CommandTime commandTime() {
        return authoritative ? CommandTime.at(now()) : CommandTime.storeClock();
    }
}
