package dev.queue.api;

import java.time.Duration;

/**
 * What a schedule does with due times that passed while nothing ticked (downtime, a long pause of the fleet).
 * Due times are always computed from the definition, never from when the last tick happened, so a late tick
 * neither shifts the schedule nor loses its place. Build one with the factories; a schedule is refused with
 * {@link InvalidInputException} unless the grace is 0 to 365 days and the bound 1 to 1000.
 *
 * @param policy what to do with missed due times
 * @param bound  how many missed due times {@link Policy#FIRE_EACH} fires at most; 1 otherwise
 * @param grace  how old a due time {@link Policy#SKIP} still fires; zero otherwise
 */
public record MissedRuns(Policy policy, int bound, Duration grace) {

    /** The three ways of treating due times that passed unfired. */
    public enum Policy {
        /** One message stands for all missed due times (the latest of them). The default. */
        FIRE_ONCE,
        /** Missed due times are dropped; a due time is fired only while it is at most {@code grace} old. */
        SKIP,
        /** One message per missed due time, the latest {@code bound} of them. */
        FIRE_EACH
    }

    /**
     * One message for all missed due times, standing for the latest of them. The default.
     *
     * @return the fire-once policy
     */
    public static MissedRuns fireOnce() {
        return new MissedRuns(Policy.FIRE_ONCE, 1, Duration.ZERO);
    }

    /**
     * Skips due times older than one minute.
     *
     * @return the skip policy with a grace of one minute
     */
    public static MissedRuns skip() {
        return skip(Duration.ofMinutes(1));
    }

    /**
     * Skips due times older than {@code grace}; a due time at most that old still fires.
     *
     * @param grace 0 to 365 days
     * @return the skip policy with this grace
     */
    public static MissedRuns skip(Duration grace) {
        return new MissedRuns(Policy.SKIP, 1, grace);
    }

    /**
     * Fires each missed due time, at most the latest {@code bound} (1 to 1000) of them.
     *
     * @param bound 1 to 1000
     * @return the fire-each policy with this bound
     */
    public static MissedRuns fireEach(int bound) {
        return new MissedRuns(Policy.FIRE_EACH, bound, Duration.ZERO);
    }
}
