package dev.queue.domain.rules;

import dev.queue.api.Backoff;

import java.time.Duration;
import java.util.function.DoubleSupplier;

/** The wait before the next attempt, as a pure function of the backoff, the attempt that failed and a random draw. */
public final class BackoffSchedule {

    private BackoffSchedule() {
    }

    /**
     * {@code base * multiplier^(attempt-1)}, capped, then spread by {@code jitter}: with jitter j and a draw r
     * in [0, 1), the wait is multiplied by {@code 1 - j + 2*j*r}. Microsecond precision, never negative.
     */
    public static Duration delayAfter(Backoff backoff, int failedAttempt, DoubleSupplier random) {
        int exponent = Math.max(0, failedAttempt - 1);
        double baseMicros = backoff.base().toNanos() / 1000.0;
        double capMicros = backoff.cap().toNanos() / 1000.0;
        double raw = baseMicros * Math.pow(backoff.multiplier(), exponent);
        double capped = Double.isFinite(raw) ? Math.min(raw, capMicros) : capMicros;
        double jitter = backoff.jitter();
        double spread = jitter == 0.0 ? capped : capped * (1.0 - jitter + 2.0 * jitter * random.getAsDouble());
        return Duration.ofNanos(Math.max(0L, (long) spread) * 1000L);
    }
}
