package dev.queue.inmemory;

import dev.queue.api.TopicLimits;

import java.time.Instant;
import java.time.temporal.ChronoUnit;

/** A token bucket: {@code tokens} at {@code refilledAt}; without a spend yet, full. */
final class TokenBucket {
    double tokens = -1;
    Instant refilledAt;

    double tokensAt(Instant now, TopicLimits.Rate rate) {
        if (refilledAt == null) {
            return rate.starts();
        }
        long elapsed = Math.max(0, ChronoUnit.MICROS.between(refilledAt, now));
        long periodMicros = rate.period().toNanos() / 1_000;
        return Math.min(rate.starts(), tokens + (double) elapsed * rate.starts() / periodMicros);
    }

    /** A claim's time older than the last refill (read before it waited) leaves the bucket's time where it is. */
    void spend(Instant now, double available, int spent) {
        tokens = available - spent;
        if (refilledAt == null || now.isAfter(refilledAt)) {
            refilledAt = now;
        }
    }

    /** When the bucket holds a whole token again, if it holds none now. */
    Instant nextTokenAt(TopicLimits.Rate rate) {
        if (refilledAt == null || tokens >= 1) {
            return null;
        }
        long periodMicros = rate.period().toNanos() / 1_000;
        long micros = (long) Math.ceil((1 - tokens) * periodMicros / rate.starts());
        return refilledAt.plus(micros, ChronoUnit.MICROS);
    }
}
