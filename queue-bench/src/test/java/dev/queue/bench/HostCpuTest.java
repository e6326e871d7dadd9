package dev.queue.bench;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** Reading the host's stolen CPU time from the aggregate line of /proc/stat. */
class HostCpuTest {

    @Test
    void stealIsItsShareOfAllTicksBetweenTwoSamplesWithoutCountingGuestTimeTwice() {
        // user nice system idle iowait irq softirq steal guest guest_nice
        HostCpu.Sample earlier = HostCpu.parse("cpu  1000 0 500 8000 100 0 50 350 400 0");
        HostCpu.Sample later = HostCpu.parse("cpu  1600 0 800 8400 150 0 80 650 900 0");

        assertThat(earlier.total()).isEqualTo(10_000);
        assertThat(earlier.steal()).isEqualTo(350);
        // 1,680 ticks passed (the guest ticks are inside user), 300 of them stolen.
        assertThat(later.stealPercentSince(earlier)).isCloseTo(100.0 * 300 / 1680, within(1e-9));
    }

    @Test
    void aLineWithoutTheStealColumnGivesNoSample() {
        assertThat(HostCpu.parse("cpu  1000 0 500 8000 100 0 50")).isNull();
    }

    @Test
    void noTimePassedMeansNothingStolen() {
        HostCpu.Sample sample = HostCpu.parse("cpu  1 2 3 4 5 6 7 8");
        assertThat(sample.stealPercentSince(sample)).isZero();
    }
}
