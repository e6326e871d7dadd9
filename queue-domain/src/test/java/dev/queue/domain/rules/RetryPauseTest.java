package dev.queue.domain.rules;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

class RetryPauseTest {

    private static final Duration FIRST = Duration.ofMillis(50);
    private static final Duration MAX = Duration.ofSeconds(2);

    @Test
    void doublesWithEachFailureUpToTheMaximum() {
        assertThat(RetryPause.after(1, FIRST, MAX, () -> 0.999_999)).isCloseTo(FIRST, Duration.ofNanos(100));
        assertThat(RetryPause.after(2, FIRST, MAX, () -> 0.999_999)).isCloseTo(Duration.ofMillis(100), Duration.ofNanos(200));
        assertThat(RetryPause.after(6, FIRST, MAX, () -> 0.999_999)).isCloseTo(Duration.ofMillis(1_600), Duration.ofMillis(1));
        assertThat(RetryPause.after(7, FIRST, MAX, () -> 0.999_999)).isCloseTo(MAX, Duration.ofMillis(1));
        assertThat(RetryPause.after(1_000, FIRST, MAX, () -> 0.999_999)).isCloseTo(MAX, Duration.ofMillis(1));
    }

    @Test
    void spreadsOverTheUpperHalfOfThePause() {
        assertThat(RetryPause.after(1, FIRST, MAX, () -> 0.0)).isEqualTo(Duration.ofMillis(25));
        assertThat(RetryPause.after(3, FIRST, MAX, () -> 0.5)).isEqualTo(Duration.ofMillis(150));
        assertThat(RetryPause.after(40, FIRST, MAX, () -> 0.0)).isEqualTo(Duration.ofSeconds(1));
    }
}
