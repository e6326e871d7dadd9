package dev.queue.domain.rules;

import dev.queue.api.Backoff;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

class BackoffScheduleTest {

    private static final Backoff NO_JITTER = Backoff.exponential(Duration.ofSeconds(1), Duration.ofSeconds(8)).withoutJitter();

    @Test
    void doublesFromTheBaseUpToTheCap() {
        assertThat(BackoffSchedule.delayAfter(NO_JITTER, 1, () -> 0.5)).isEqualTo(Duration.ofSeconds(1));
        assertThat(BackoffSchedule.delayAfter(NO_JITTER, 2, () -> 0.5)).isEqualTo(Duration.ofSeconds(2));
        assertThat(BackoffSchedule.delayAfter(NO_JITTER, 3, () -> 0.5)).isEqualTo(Duration.ofSeconds(4));
        assertThat(BackoffSchedule.delayAfter(NO_JITTER, 4, () -> 0.5)).isEqualTo(Duration.ofSeconds(8));
        assertThat(BackoffSchedule.delayAfter(NO_JITTER, 5, () -> 0.5)).isEqualTo(Duration.ofSeconds(8));
    }

    @Test
    void hugeAttemptNumbersStayAtTheCap() {
        assertThat(BackoffSchedule.delayAfter(NO_JITTER, 1000, () -> 0.5)).isEqualTo(Duration.ofSeconds(8));
    }

    @Test
    void jitterSpreadsTheWaitBothWaysWithinItsFraction() {
        Backoff half = NO_JITTER.jitter(0.5);
        assertThat(BackoffSchedule.delayAfter(half, 2, () -> 0.0)).isEqualTo(Duration.ofSeconds(1));
        assertThat(BackoffSchedule.delayAfter(half, 2, () -> 0.999999)).isBetween(Duration.ofMillis(2999), Duration.ofSeconds(3));
        assertThat(BackoffSchedule.delayAfter(half, 2, () -> 0.5)).isEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void fixedBackoffAlwaysWaitsTheSame() {
        Backoff fixed = Backoff.fixed(Duration.ofMillis(250));
        assertThat(BackoffSchedule.delayAfter(fixed, 1, () -> 0.9)).isEqualTo(Duration.ofMillis(250));
        assertThat(BackoffSchedule.delayAfter(fixed, 7, () -> 0.1)).isEqualTo(Duration.ofMillis(250));
    }

    @Test
    void delaysAreWholeMicroseconds() {
        Backoff odd = Backoff.exponential(Duration.ofNanos(1_500_700), Duration.ofSeconds(1)).jitter(0.3);
        assertThat(BackoffSchedule.delayAfter(odd, 3, () -> 0.123).toNanos() % 1000).isZero();
    }
}
