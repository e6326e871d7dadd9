package dev.queue.postgres;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The publisher-side wake-up limiter, without a database: what it lets through and what it sends later. */
class NotifyLimiterTest {

    private final List<String> trailing = new CopyOnWriteArrayList<>();

    @Test
    void theFirstPublishOfAWindowNotifiesAndLaterOnesDoNot() {
        try (NotifyLimiter limiter = new NotifyLimiter(Duration.ofSeconds(10), trailing::add)) {
            assertThat(limiter.notifyNow("ns/a")).isTrue();
            assertThat(limiter.notifyNow("ns/a")).isFalse();
            assertThat(limiter.notifyNow("ns/b")).as("another topic has its own window").isTrue();
        }
    }

    @Test
    void aHeldBackPublishGetsOneTrailingWakeUpAfterItCommitted() {
        try (NotifyLimiter limiter = new NotifyLimiter(Duration.ofMillis(50), trailing::add)) {
            assertThat(limiter.notifyNow("ns/a")).isTrue();
            assertThat(limiter.notifyNow("ns/a")).isFalse();
            assertThat(limiter.notifyNow("ns/a")).isFalse();
            limiter.committedWithout("ns/a");
            limiter.committedWithout("ns/a");
            await().atMost(Duration.ofSeconds(5)).until(() -> trailing.size() == 1);
            assertThat(trailing).containsExactly("ns/a");
        }
    }

    @Test
    void nothingTrailsWhenNothingWasHeldBack() {
        try (NotifyLimiter limiter = new NotifyLimiter(Duration.ofMillis(20), trailing::add)) {
            assertThat(limiter.notifyNow("ns/a")).isTrue();
            limiter.notifyFinished("ns/a");
            // A later window proves the timer had its chance: the next publish notifies again by itself.
            await().atMost(Duration.ofSeconds(5)).until(() -> limiter.notifyNow("ns/a"));
            assertThat(trailing).isEmpty();
        }
    }

    @Test
    void aNotifyingPublishStillInFlightHoldsBackTheNextWindowsUntilItFinishes() {
        try (NotifyLimiter limiter = new NotifyLimiter(Duration.ofMillis(20), trailing::add)) {
            assertThat(limiter.notifyNow("ns/a")).isTrue();
            long windowClosed = System.nanoTime() + Duration.ofMillis(40).toNanos();
            await().atMost(Duration.ofSeconds(5)).until(() -> System.nanoTime() - windowClosed > 0);
            assertThat(limiter.notifyNow("ns/a")).as("the window has closed, but the first notify has not finished").isFalse();
            assertThat(limiter.notifyNow("ns/b")).as("another topic is not held").isTrue();
            limiter.committedWithout("ns/a");
            await().atMost(Duration.ofSeconds(5)).until(() -> trailing.contains("ns/a"));
            limiter.notifyFinished("ns/a");
            await().atMost(Duration.ofSeconds(5)).until(() -> limiter.notifyNow("ns/a"));
        }
    }

    @Test
    void aZeroWindowNotifiesEveryPublish() {
        try (NotifyLimiter limiter = new NotifyLimiter(Duration.ZERO, trailing::add)) {
            for (int i = 0; i < 5; i++) {
                assertThat(limiter.notifyNow("ns/a")).isTrue();
            }
        }
    }
}
