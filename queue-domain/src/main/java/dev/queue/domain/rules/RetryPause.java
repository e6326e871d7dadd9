package dev.queue.domain.rules;

import java.time.Duration;
import java.util.function.DoubleSupplier;

/**
 * The pause before trying a failed store call again: doubling from {@code first} with each failure up to
 * {@code max}, then spread over the upper half of that, so processes that failed together (a database restart
 * cuts off every replica at once) do not all come back in the same instant.
 */
public final class RetryPause {

    private RetryPause() {
    }

    /**
     * @param failures how many tries in a row failed, from 1
     * @param random   a draw in [0, 1)
     */
    public static Duration after(int failures, Duration first, Duration max, DoubleSupplier random) {
        long firstNanos = first.toNanos();
        long maxNanos = Math.max(firstNanos, max.toNanos());
        int doublings = Math.min(Math.max(failures - 1, 0), 62);
        long grown = firstNanos > (maxNanos >> doublings) ? maxNanos : firstNanos << doublings;
        return Duration.ofNanos((long) (grown * (0.5 + 0.5 * random.getAsDouble())));
    }
}
