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

    /**
     * A clock standing at {@code start}, truncated to microseconds.
     *
     * @param start the time the clock starts at
     * @throws InvalidInputException when {@code start} is null
     */
    public ManualClock(Instant start) {
        this.now = InvalidInputException.requireNonNull(start, "start", "the instant the clock starts at").truncatedTo(ChronoUnit.MICROS);
    }

    /**
     * A clock that starts at the current time of the machine, then moves only when told.
     *
     * @return a new clock
     */
    public static ManualClock startingNow() {
        return new ManualClock(Instant.now());
    }

    /**
     * Now, in microseconds: the precision every store keeps.
     *
     * @return the clock's current time
     */
    public Instant now() {
        return now;
    }

    /**
     * Moves the clock forward; sleeping subscribers and schedules look again. Listeners run on the calling thread
     * before this returns.
     *
     * @param amount how far to move, zero or more (truncated to microseconds)
     * @return the new time
     * @throws InvalidInputException when {@code amount} is null or negative
     */
    public synchronized Instant advance(Duration amount) {
        if (amount == null || amount.isNegative()) {
            throw new InvalidInputException("amount", amount, "a duration of zero or more (a manual clock moves forward only)");
        }
        now = now.plus(amount).truncatedTo(ChronoUnit.MICROS);
        listeners.forEach(Runnable::run);
        return now;
    }

    /**
     * Sets the clock, forward or back; sleeping subscribers and schedules look again.
     *
     * @param instant the new time (truncated to microseconds)
     * @throws InvalidInputException when {@code instant} is null
     */
    public synchronized void set(Instant instant) {
        now = InvalidInputException.requireNonNull(instant, "instant", "the instant to set the clock to").truncatedTo(ChronoUnit.MICROS);
        listeners.forEach(Runnable::run);
    }

    /**
     * Runs {@code listener} after every move of the clock, until the returned handle is closed; the queue wakes its
     * sleepers with it.
     *
     * @param listener what to run, on the thread that moves the clock
     * @return a handle whose {@code close()} removes the listener
     * @throws InvalidInputException when {@code listener} is null
     */
    public AutoCloseable onAdvance(Runnable listener) {
        listeners.add(InvalidInputException.requireNonNull(listener, "listener", "a Runnable"));
        return () -> listeners.remove(listener);
    }
}
