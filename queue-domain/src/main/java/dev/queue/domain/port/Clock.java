package dev.queue.domain.port;

import java.time.Instant;

/**
 * Time as the domain sees it. When {@link #isAuthoritative()} the domain passes {@link #now()} into every store
 * command, so tests can travel in time; otherwise commands carry no time and the store uses its own clock
 * (in production the database's, one clock for the whole fleet), and this clock only paces local timers.
 */
public interface Clock {

    /** Now, truncated to microseconds: the precision every store keeps. */
    Instant now();

    boolean isAuthoritative();

    /** Runs {@code listener} whenever time jumps (manual clocks only), so sleepers re-check what is due. */
    default AutoCloseable onAdvance(Runnable listener) {
        return () -> { };
    }
}
