package dev.queue.api;

import java.time.Duration;

/**
 * What a schedule does with due times that passed while nothing ticked (downtime, a long pause of the fleet).
 * Due times are always computed from the definition, never from when the last tick happened, so a late tick
 * neither shifts the schedule nor loses its place.
 */
public record MissedRuns(Policy policy, int bound, Duration grace) {

    public enum Policy {
        /** One message stands for all missed due times (the latest of them). The default. */
        FIRE_ONCE,
        /** Missed due times are dropped; a due time is fired only while it is at most {@code grace} old. */
        SKIP,
        /** One message per missed due time, the latest {@code bound} of them. */
        FIRE_EACH
    }

    public static MissedRuns fireOnce() {
        return new MissedRuns(Policy.FIRE_ONCE, 1, Duration.ZERO);
    }

    /** Skips due times older than one minute. */
    public static MissedRuns skip() {
        return skip(Duration.ofMinutes(1));
    }

    public static MissedRuns skip(Duration grace) {
        return new MissedRuns(Policy.SKIP, 1, grace);
    }

    /** Fires each missed due time, at most the latest {@code bound} (1 to 1000) of them. */
    public static MissedRuns fireEach(int bound) {
        return new MissedRuns(Policy.FIRE_EACH, bound, Duration.ZERO);
    }
}
