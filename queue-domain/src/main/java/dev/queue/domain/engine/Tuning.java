package dev.queue.domain.engine;

import dev.queue.api.InvalidInputException;

import java.time.Duration;

/**
 * The engine's batch sizes and pauses, in one place and checked once. They are not user options: the defaults are
 * what the benchmarks settled on (docs/benchmarks.md), and tests build smaller ones.
 *
 * @param maxClaim          upper bound of one claim, so one subscriber with many slots does not starve its peers of a burst
 * @param claimLinger       while a backlog waits, how long free handler slots wait for more to free up before they are
 *                          claimed for: fast handlers are then fed by full claims, a slow handler's slot stands empty at
 *                          most this long
 * @param ackBatch          acknowledgements recorded by one store call at most
 * @param ackDelay          how long an acknowledgement waits for others to share its store call
 * @param maxUnrecordedAcks claims pause while this many acknowledgements wait unrecorded: one full call being written
 *                          and one behind it. More only happens when the database records slower than handlers finish;
 *                          claiming on would make every acknowledgement wait longer, until they outlive their leases
 * @param deadLetterBatch   dead letters redriven or purged by one store call at most: a whole topic's go batch by batch
 */
record Tuning(int maxClaim, Duration claimLinger, int ackBatch, Duration ackDelay, int maxUnrecordedAcks, int deadLetterBatch) {

    static final Tuning DEFAULTS = new Tuning(100, Duration.ofMillis(2), 500, Duration.ofMillis(5), 1_000, 1_000);

    Tuning {
        positive("maxClaim", maxClaim);
        positive("ackBatch", ackBatch);
        positive("deadLetterBatch", deadLetterBatch);
        if (maxUnrecordedAcks < ackBatch) {
            throw new InvalidInputException("maxUnrecordedAcks", maxUnrecordedAcks, "at least ackBatch (" + ackBatch + ")");
        }
        nonNegative("claimLinger", claimLinger);
        nonNegative("ackDelay", ackDelay);
    }

    private static void positive(String name, int value) {
        if (value < 1) {
            throw new InvalidInputException(name, value, "at least 1");
        }
    }

    private static void nonNegative(String name, Duration value) {
        if (value == null || value.isNegative() || value.compareTo(Duration.ofSeconds(1)) > 0) {
            throw new InvalidInputException(name, value, "0 to 1 s");
        }
    }
}
