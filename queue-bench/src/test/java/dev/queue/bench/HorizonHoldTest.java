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
}
