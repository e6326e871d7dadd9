package dev.queue.domain.port;

import java.time.Instant;

/**
 * Time as the domain sees it: {@link #now()} paces local timers, and {@link #commandTime()} is the time every store
 * command carries, the store's own clock in production or this clock's reading when it decides (tests that travel
 * in time, stores without a clock of their own).
 */
public interface Clock {

    /** Now, truncated to microseconds: the precision every store keeps. */
    Instant now();

    /** The time the next store command acts at. */
    CommandTime commandTime();

    /** Runs {@code listener} whenever time jumps (manual clocks only), so sleepers re-check what is due. */
    default AutoCloseable onAdvance(Runnable listener) {
        return () -> { };
    }
}
