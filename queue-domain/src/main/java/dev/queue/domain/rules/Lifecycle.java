package dev.queue.domain.rules;

import dev.queue.api.Backoff;

import java.time.Duration;
import java.time.Instant;
import java.util.function.DoubleSupplier;

/**
 * What becomes of a delivery, as a pure function of how its run ended, its attempt, its limit and the retry policy.
 * Every path that settles a delivery (a subscription's handler, a manual {@code ack}, {@code nack} or {@code fail})
 * asks here, and the store only carries the decision out under the delivery's lease. The stores' rescue of expired
 * leases, which sees rows rather than deliveries, follows the same rule: a lease that expired on the last attempt
 * makes a dead letter, any other makes the message pending again.
 */
public final class Lifecycle {

    private Lifecycle() {
    }

    /** How a delivery's run ended. */
    public sealed interface Result permits Succeeded, Failed, RetryAsked, DeadLetterAsked, NotStarted, SnoozeAsked {
    }

    /** The handler returned normally, or the caller acknowledged. */
    public record Succeeded() implements Result {
    }

    /** The handler threw; {@code error} describes it. */
    public record Failed(String error) implements Result {
    }

    /** The handler or caller asked for another attempt: after {@code delay}, or after the backoff when null. */
    public record RetryAsked(String reason, Duration delay) implements Result {
    }

    /** The handler or caller gave the message up. */
    public record DeadLetterAsked(String reason) implements Result {
    }

    /** Claimed, but its handler never started: the attempt is not spent. */
    public record NotStarted() implements Result {
    }

    /** The handler or caller asked to run again later, at {@code until} when not null, else after {@code delay}. */
    public record SnoozeAsked(Duration delay, Instant until) implements Result {
    }

    /** What the store is asked to do under the delivery's lease, named for the {@link dev.queue.api.Outcome} each leads to. */
    public sealed interface Decision permits Ack, Retry, DeadLetter, Release, Snooze {
    }

    public record Ack() implements Decision {
    }

    /** Pending again, due after {@code delay}, with {@code error} recorded. */
    public record Retry(Duration delay, String error) implements Decision {
    }

    public record DeadLetter(String error) implements Decision {
    }

    /** Pending again at once, the claim's attempt taken back. */
    public record Release() implements Decision {
    }

    /**
     * Pending again at {@code until} (else after {@code delay}), the claim's attempt taken back, no error recorded.
     * Not a failure: it never makes a dead letter, whatever attempt it was.
     */
    public record Snooze(Duration delay, Instant until) implements Decision {
    }

    /**
     * A failure, or a retry asked for, on attempt {@code attempt} of {@code maxAttempts} retries after the asked
     * delay (else the backoff's wait after that attempt) while attempts are left, and is a dead letter on the last.
     */
    public static Decision decide(Result result, int attempt, int maxAttempts, Backoff backoff, DoubleSupplier random) {
        if (result instanceof Succeeded) {
            return new Ack();
        }
        if (result instanceof NotStarted) {
            return new Release();
        }
        if (result instanceof SnoozeAsked asked) {
            return new Snooze(asked.delay(), asked.until());
        }
        if (result instanceof DeadLetterAsked asked) {
            return new DeadLetter(asked.reason());
        }
        String error;
        Duration delay;
        if (result instanceof Failed failed) {
            error = failed.error();
            delay = null;
        } else if (result instanceof RetryAsked asked) {
            error = asked.reason();
            delay = asked.delay();
        } else {
            throw new IllegalArgumentException("result " + result);
        }
        if (!attemptsLeft(attempt, maxAttempts)) {
            return new DeadLetter(error);
        }
        return new Retry(delay != null ? delay : BackoffSchedule.delayAfter(backoff, attempt, random), error);
    }

    /** Whether a message on this attempt may run again: the one rule behind dead-lettering by attempts. */
    public static boolean attemptsLeft(int attempt, int maxAttempts) {
        return attempt < maxAttempts;
    }
}
