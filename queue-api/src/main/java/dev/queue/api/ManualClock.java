package dev.queue.api;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A clock that moves only when told, for tests that travel in time (retries, lease expiry, delays, schedules)
 * without sleeping. A queue made with one takes every time from it, the database's included. Thread-safe.
 */
public final class ManualClock {

    private volatile Instant now;
    private final CopyOnWriteArrayList<Runnable> listeners = new CopyOnWriteArrayList<>();

    public ManualClock(Instant start) {
        this.now = InvalidInputException.requireNonNull(start, "start", "the instant the clock starts at").truncatedTo(ChronoUnit.MICROS);
    }

    /** Starts at the current time of the machine. */
    public static ManualClock startingNow() {
        return new ManualClock(Instant.now());
    }

    /** Now, in microseconds: the precision every store keeps. */
    public Instant now() {
        return now;
    }

    /** Moves the clock forward and returns the new time; sleeping subscribers and schedules look again. */
    public synchronized Instant advance(Duration amount) {
        if (amount == null || amount.isNegative()) {
            throw new InvalidInputException("amount", amount, "a duration of zero or more (a manual clock moves forward only)");
        }
        now = now.plus(amount).truncatedTo(ChronoUnit.MICROS);
        listeners.forEach(Runnable::run);
        return now;
    }

    /** Sets the clock, forward or back; sleeping subscribers and schedules look again. */
    public synchronized void set(Instant instant) {
        now = InvalidInputException.requireNonNull(instant, "instant", "the instant to set the clock to").truncatedTo(ChronoUnit.MICROS);
        listeners.forEach(Runnable::run);
    }

    /** Runs {@code listener} after every move of the clock, until the returned handle is closed; the queue wakes its sleepers with it. */
    public AutoCloseable onAdvance(Runnable listener) {
        listeners.add(InvalidInputException.requireNonNull(listener, "listener", "a Runnable"));
        return () -> listeners.remove(listener);
    }
}
