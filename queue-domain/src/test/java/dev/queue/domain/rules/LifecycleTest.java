package dev.queue.domain.rules;

import dev.queue.api.Backoff;
import dev.queue.domain.rules.Lifecycle.Ack;
import dev.queue.domain.rules.Lifecycle.DeadLetter;
import dev.queue.domain.rules.Lifecycle.DeadLetterAsked;
import dev.queue.domain.rules.Lifecycle.Failed;
import dev.queue.domain.rules.Lifecycle.NotStarted;
import dev.queue.domain.rules.Lifecycle.Release;
import dev.queue.domain.rules.Lifecycle.Retry;
import dev.queue.domain.rules.Lifecycle.Snooze;
import dev.queue.domain.rules.Lifecycle.SnoozeAsked;
import dev.queue.domain.rules.Lifecycle.RetryAsked;
import dev.queue.domain.rules.Lifecycle.Succeeded;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

class LifecycleTest {

    private static final Backoff BACKOFF = Backoff.exponential(Duration.ofSeconds(1), Duration.ofMinutes(1)).withoutJitter();

    private static Lifecycle.Decision decide(Lifecycle.Result result, int attempt, int maxAttempts) {
        return Lifecycle.decide(result, attempt, maxAttempts, BACKOFF, () -> 0.5);
    }

    @Test
    void aSuccessCompletesOnAnyAttempt() {
        assertThat(decide(new Succeeded(), 1, 3)).isEqualTo(new Ack());
        assertThat(decide(new Succeeded(), 3, 3)).isEqualTo(new Ack());
    }

    @Test
    void aFailureRetriesAfterTheBackoffOfItsAttemptWhileAttemptsAreLeft() {
        assertThat(decide(new Failed("boom"), 1, 3)).isEqualTo(new Retry(Duration.ofSeconds(1), "boom"));
        assertThat(decide(new Failed("boom"), 2, 3)).isEqualTo(new Retry(Duration.ofSeconds(2), "boom"));
    }

    @Test
    void aFailureOnTheLastAttemptIsADeadLetter() {
        assertThat(decide(new Failed("boom"), 3, 3)).isEqualTo(new DeadLetter("boom"));
        assertThat(decide(new Failed("boom"), 1, 1)).isEqualTo(new DeadLetter("boom"));
    }

    @Test
    void anAskedRetryTakesItsOwnDelayOrTheBackoffAndEndsOnTheLastAttemptToo() {
        assertThat(decide(new RetryAsked("later", Duration.ofMinutes(5)), 1, 3)).isEqualTo(new Retry(Duration.ofMinutes(5), "later"));
        assertThat(decide(new RetryAsked("later", null), 2, 3)).isEqualTo(new Retry(Duration.ofSeconds(2), "later"));
        assertThat(decide(new RetryAsked("later", Duration.ZERO), 3, 3)).isEqualTo(new DeadLetter("later"));
    }

    @Test
    void anAskedDeadLetterIsOneWhateverAttemptsAreLeft() {
        assertThat(decide(new DeadLetterAsked("poison"), 1, 20)).isEqualTo(new DeadLetter("poison"));
    }

    @Test
    void aSnoozeIsNoFailureEvenOnTheLastAttempt() {
        Instant at = Instant.parse("2030-01-01T00:00:00Z");
        assertThat(decide(new SnoozeAsked(Duration.ofMinutes(5), null), 3, 3)).isEqualTo(new Snooze(Duration.ofMinutes(5), null));
        assertThat(decide(new SnoozeAsked(null, at), 1, 1)).isEqualTo(new Snooze(null, at));
    }

    @Test
    void aDeliveryNeverStartedIsReleased() {
        assertThat(decide(new NotStarted(), 1, 1)).isEqualTo(new Release());
    }

    @Test
    void attemptsAreLeftBeforeTheLast() {
        assertThat(Lifecycle.attemptsLeft(1, 2)).isTrue();
        assertThat(Lifecycle.attemptsLeft(2, 2)).isFalse();
        assertThat(Lifecycle.attemptsLeft(3, 2)).isFalse();
    }
}
