package dev.queue.bench;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Overlaps, out-of-order starts and peaks on hand-made sequences of handler starts and ends. */
class HandlerWatchTest {

    @Test
    void aKeysMessagesOneAfterAnotherInIdOrderAreNeitherOverlapsNorOutOfOrder() {
        HandlerWatch watch = new HandlerWatch(2);
        watch.started(1, 0);
        watch.finished(0);
        watch.started(4, 0);
        watch.finished(0);
        watch.started(9, 0);
        watch.finished(0);

        assertThat(watch.keyOverlaps()).isZero();
        assertThat(watch.keyOutOfOrder()).isZero();
        assertThat(watch.peakRunningOfAKey()).isEqualTo(1);
    }

    @Test
    void aStartWhileAnotherOfTheKeyRunsIsAnOverlap() {
        HandlerWatch watch = new HandlerWatch(2);
        watch.started(1, 0);
        watch.started(2, 0);
        watch.started(3, 0);
        watch.finished(0);
        watch.finished(0);
        watch.finished(0);
        watch.started(4, 0);
        watch.finished(0);

        assertThat(watch.keyOverlaps()).isEqualTo(2);
        assertThat(watch.peakRunningOfAKey()).isEqualTo(3);
        assertThat(watch.keyOutOfOrder()).isZero();
    }

    @Test
    void aStartOfALowerIdThanOneOfTheKeyAlreadyStartedIsOutOfOrder() {
        HandlerWatch watch = new HandlerWatch(2);
        watch.started(20, 1);
        watch.finished(1);
        watch.started(15, 1);
        watch.finished(1);
        watch.started(16, 1);
        watch.finished(1);

        // 15 and 16 were both published before 20, which had already started
        assertThat(watch.keyOutOfOrder()).isEqualTo(2);
        assertThat(watch.keyOverlaps()).isZero();
    }

    @Test
    void aRepeatOfTheMessageLastStartedKeepsItsPlace() {
        HandlerWatch watch = new HandlerWatch(1);
        watch.started(30, 0);
        watch.finished(0);
        watch.started(30, 0);   // a retry or a redelivery: its successors still wait for it
        watch.finished(0);
        watch.started(31, 0);
        watch.finished(0);

        assertThat(watch.keyOutOfOrder()).isZero();
        assertThat(watch.keyOverlaps()).isZero();
    }

    @Test
    void aRepeatAfterALaterMessageOfItsKeyStartedIsOutOfOrder() {
        HandlerWatch watch = new HandlerWatch(1);
        watch.started(40, 0);
        watch.finished(0);
        watch.started(41, 0);   // 40 had not left for good: 41 ran too early
        watch.finished(0);
        watch.started(40, 0);
        watch.finished(0);

        assertThat(watch.keyOutOfOrder()).isEqualTo(1);
    }

    @Test
    void keysAreIndependentOfEachOther() {
        HandlerWatch watch = new HandlerWatch(2);
        watch.started(100, 0);
        watch.started(5, 1);
        watch.finished(1);
        watch.finished(0);

        assertThat(watch.keyOverlaps()).isZero();
        assertThat(watch.keyOutOfOrder()).isZero();
        assertThat(watch.peakRunning()).isEqualTo(2);
    }

    @Test
    void thePeakCountsEveryHandlerRunningAtOnceKeyedOrNot() {
        HandlerWatch watch = new HandlerWatch(0);
        watch.started(1, HandlerWatch.NO_KEY);
        watch.started(2, HandlerWatch.NO_KEY);
        watch.finished(HandlerWatch.NO_KEY);
        watch.started(3, HandlerWatch.NO_KEY);
        watch.started(4, HandlerWatch.NO_KEY);
        watch.finished(HandlerWatch.NO_KEY);
        watch.finished(HandlerWatch.NO_KEY);
        watch.finished(HandlerWatch.NO_KEY);
        watch.started(5, HandlerWatch.NO_KEY);
        watch.finished(HandlerWatch.NO_KEY);

        assertThat(watch.peakRunning()).isEqualTo(3);
        assertThat(watch.peakRunningOfAKey()).isZero();
        assertThat(watch.keyOverlaps()).isZero();
        assertThat(watch.keyOutOfOrder()).isZero();
    }

    @Test
    void onlyTheBenchsOwnKeysAreNumbered() {
        HandlerWatch watch = new HandlerWatch(1000);
        assertThat(watch.keyNumber("k0")).isZero();
        assertThat(watch.keyNumber("k999")).isEqualTo(999);
        assertThat(watch.keyNumber("k1000")).isEqualTo(HandlerWatch.NO_KEY);
        assertThat(watch.keyNumber("k99999999999")).isEqualTo(HandlerWatch.NO_KEY);
        assertThat(watch.keyNumber("k")).isEqualTo(HandlerWatch.NO_KEY);
        assertThat(watch.keyNumber("k1a")).isEqualTo(HandlerWatch.NO_KEY);
        assertThat(watch.keyNumber("customer-42")).isEqualTo(HandlerWatch.NO_KEY);
        assertThat(watch.keyNumber(null)).isEqualTo(HandlerWatch.NO_KEY);
        assertThatThrownBy(() -> new HandlerWatch(-1)).hasMessageContaining("-1");
    }
}
