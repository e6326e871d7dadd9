package dev.queue.api;

import java.time.Duration;

/**
 * How long a failed message waits before its next attempt: {@code base * multiplier^(attempt-1)}, capped,
 * then spread by up to {@code jitter} (a fraction) either way so that a burst of failures does not come back
 * as a burst. Immutable.
 *
 * <p>The factories and setters do not check their values; a backoff is checked where it is used (in
 * {@link QueueOptions} when the queue is created, in a {@link Subscriber} when it subscribes), and refused with
 * {@link InvalidInputException} unless {@code 0 <= base <= cap <= 365 days}, the multiplier is from 1 to 100 and
 * the jitter from 0 to 1.
 */
public final class Backoff {

    /** The queue's default: 1 s doubling up to 1 h, with 20% jitter. */
    public static final Backoff DEFAULT = exponential(Duration.ofSeconds(1), Duration.ofHours(1));

    private final Duration base;
    private final Duration cap;
    private final double multiplier;
    private final double jitter;

    private Backoff(Duration base, Duration cap, double multiplier, double jitter) {
        this.base = base;
        this.cap = cap;
        this.multiplier = multiplier;
        this.jitter = jitter;
    }

    /**
     * Doubles from {@code base} up to {@code cap}, with 20% jitter.
     *
     * @param base the wait after the first failed attempt
     * @param cap  the longest wait, before jitter
     * @return a backoff with multiplier 2 and jitter 0.2
     */
    public static Backoff exponential(Duration base, Duration cap) {
        return new Backoff(base, cap, 2.0, 0.2);
    }

    /**
     * The same wait every time, without jitter.
     *
     * @param wait the wait after every failed attempt
     * @return a backoff with multiplier 1 and no jitter
     */
    public static Backoff fixed(Duration wait) {
        return new Backoff(wait, wait, 1.0, 0.0);
    }

    /**
     * The factor the wait grows by from one attempt to the next (1 to 100; 1 keeps it constant).
     *
     * @param value the multiplier
     * @return a copy with this multiplier
     */
    public Backoff multiplier(double value) {
        return new Backoff(base, cap, value, jitter);
    }

    /**
     * A fraction from 0 (none) to 1: the wait is spread uniformly by up to this share either way.
     *
     * @param fraction the jitter, from 0 to 1
     * @return a copy with this jitter
     */
    public Backoff jitter(double fraction) {
        return new Backoff(base, cap, multiplier, fraction);
    }

    /**
     * The same backoff with every wait exact.
     *
     * @return a copy with jitter 0
     */
    public Backoff withoutJitter() {
        return jitter(0.0);
    }

    /**
     * The wait after the first failed attempt, before jitter.
     *
     * @return the base wait
     */
    public Duration base() {
        return base;
    }

    /**
     * The longest wait, before jitter.
     *
     * @return the cap
     */
    public Duration cap() {
        return cap;
    }

    /**
     * The factor the wait grows by per attempt.
     *
     * @return the multiplier
     */
    public double multiplier() {
        return multiplier;
    }

    /**
     * The share by which each wait is spread either way.
     *
     * @return the jitter, a fraction from 0 to 1
     */
    public double jitter() {
        return jitter;
    }

    @Override
    public String toString() {
        return "Backoff{base=" + base + ", cap=" + cap + ", multiplier=" + multiplier + ", jitter=" + jitter + '}';
    }
}
