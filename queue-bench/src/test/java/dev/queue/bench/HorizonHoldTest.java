package dev.queue.bench;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** How the hold's part of the JSON line splits the measured seconds; no hold is opened before its second. */
class HorizonHoldTest {

    private static Histogram secondOf(long... latenciesMicros) {
        Histogram second = new Histogram(3);
        for (long latency : latenciesMicros) {
            second.recordValue(latency);
        }
        return second;
    }

    @Test
    void theWorstSecondBeforeTheHoldIsReportedBesideTheWorstSecondDuringIt() throws Exception {
        // The hold would open after the 100th second: these seconds all come before it.
        HorizonHold hold = new HorizonHold(null, "unused", 100, 60);
        hold.secondDone(1, 3, secondOf(1_000, 2_000, 3_000));
        hold.secondDone(2, 3, secondOf(1_000, 2_000, 31_000));
        hold.secondDone(3, 3, secondOf(1_000, 1_000, 4_000));

        assertThat(hold.json())
                .contains("\"before_per_s\":3.0")
                .contains("\"before_worst_second_p99_ms\":31.0")
                .contains("\"during_worst_second_p99_ms\":0.000")
                .contains("\"after_worst_second_p99_ms\":0.000");
    }

    @Test
    void theSecondsAfterTheReleaseAreSplitIntoTheFirstTenAndTheRestWithTheSlowestSecond() {
        // held from after second 2 to the end of second 4; after it, seconds 5-14 and 15-16
        HorizonHold hold = new HorizonHold(null, "unused", 2, 2);
        hold.count(1, 100, secondOf(1_000));
        hold.count(2, 100, secondOf(1_000));
        hold.count(3, 80, secondOf(5_000));
        hold.count(4, 80, secondOf(5_000));
        hold.count(5, 40, secondOf(20_000));
        hold.count(6, 30, secondOf(9_000));
        for (int second = 7; second <= 14; second++) {
            hold.count(second, 95, secondOf(2_000));
        }
        hold.count(15, 100, secondOf(1_000));
        hold.count(16, 98, secondOf(3_000));

        assertThat(hold.json())
                .contains("\"after_s\":12,")
                .contains("\"after_per_s\":" + String.format(java.util.Locale.ROOT, "%.1f", (40 + 30 + 8 * 95 + 100 + 98) / 12.0))
                // the slowest second (30 handled) is the second after the release, not the one with the worst p99
                .contains("\"after_slowest_second_per_s\":30.0")
                .contains("\"after_slowest_second_p99_ms\":9.0")
                .contains("\"after_slowest_second_at_s\":2,")
                .contains("\"after_worst_second_p99_ms\":20.0")
                .contains("\"after_first_10s_per_s\":83.0")
                .contains("\"after_first_10s_ratio\":0.830")
                .contains("\"after_first_10s_slowest_second_per_s\":30.0")
                .contains("\"after_first_10s_worst_second_p99_ms\":20.0")
                .contains("\"after_rest_per_s\":99.0")
                .contains("\"after_rest_ratio\":0.990")
                .contains("\"after_rest_slowest_second_per_s\":98.0")
                .contains("\"after_rest_worst_second_p99_ms\":3.0")
                .contains("\"during_ratio\":0.800");
    }

    @Test
    void aRunEndingWithinTheRecoveryHasNoRestRatherThanARestAtZero() {
        HorizonHold hold = new HorizonHold(null, "unused", 1, 1);
        hold.count(1, 100, secondOf(1_000));
        hold.count(2, 50, secondOf(1_000));
        hold.count(3, 90, secondOf(1_000));

        assertThat(hold.json())
                .contains("\"after_s\":1,")
                .contains("\"after_first_10s_per_s\":90.0")
                .contains("\"after_rest_per_s\":null")
                .contains("\"after_rest_ratio\":null")
                .contains("\"after_rest_slowest_second_per_s\":null}");
    }
}
