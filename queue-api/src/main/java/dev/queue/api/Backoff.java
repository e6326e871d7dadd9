package dev.queue.api;

import java.time.Duration;

/**
 * How long a failed message waits before its next attempt: {@code base * multiplier^(attempt-1)}, capped,
 * then spread by up to {@code jitter} (a fraction) either way so that a burst of failures does not come back
 * as a burst. Immutable.
 */
public final class Backoff {

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

    /** Doubles from {@code base} up to {@code cap}, with 20% jitter. */
    public static Backoff exponential(Duration base, Duration cap) {
        return new Backoff(base, cap, 2.0, 0.2);
    }

    /** The same wait every time, without jitter. */
    public static Backoff fixed(Duration wait) {
        return new Backoff(wait, wait, 1.0, 0.0);
    }

    public Backoff multiplier(double value) {
        return new Backoff(base, cap, value, jitter);
    }

    /** A fraction from 0 (none) to 1: the wait is spread uniformly by up to this share either way. */
    public Backoff jitter(double fraction) {
        return new Backoff(base, cap, multiplier, fraction);
    }

    public Backoff withoutJitter() {
        return jitter(0.0);
    }

    public Duration base() {
        return base;
    }

    public Duration cap() {
        return cap;
    }

    public double multiplier() {
        return multiplier;
    }

    public double jitter() {
        return jitter;
    }

    @Override
    public String toString() {
        return "Backoff{base=" + base + ", cap=" + cap + ", multiplier=" + multiplier + ", jitter=" + jitter + '}';
    }
}
