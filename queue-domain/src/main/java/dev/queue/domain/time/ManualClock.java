package dev.queue.domain.time;

import dev.queue.api.InvalidInputException;
import dev.queue.domain.port.Clock;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A clock that moves only when told, so tests travel in time (retries, lease expiry, delays) without
 * sleeping. Always authoritative: every store command carries its time. Thread-safe.
 */
public final class ManualClock implements Clock {

    private volatile Instant now;
    private final CopyOnWriteArrayList<Runnable> listeners = new CopyOnWriteArrayList<>();

    public ManualClock(Instant start) {
        this.now = InvalidInputException.requireNonNull(start, "start", "the instant the clock starts at").truncatedTo(ChronoUnit.MICROS);
    }

    /** Starts at the current time of the machine. */
    public static ManualClock startingNow() {
        return new ManualClock(Instant.now());
    }

    @Override
    public Instant now() {
        return now;
    }

    @Override
    public boolean isAuthoritative() {
        return true;
    }

    public synchronized Instant advance(Duration amount) {
        if (amount == null || amount.isNegative()) {
            throw new InvalidInputException("amount", amount, "a duration of zero or more (a manual clock moves forward only)");
        }
        now = now.plus(amount).truncatedTo(ChronoUnit.MICROS);
        listeners.forEach(Runnable::run);
        return now;
    }

    public synchronized void set(Instant instant) {
        now = InvalidInputException.requireNonNull(instant, "instant", "the instant to set the clock to").truncatedTo(ChronoUnit.MICROS);
        listeners.forEach(Runnable::run);
    }

    @Override
    public AutoCloseable onAdvance(Runnable listener) {
        listeners.add(InvalidInputException.requireNonNull(listener, "listener", "a Runnable"));
        return () -> listeners.remove(listener);
    }
}
