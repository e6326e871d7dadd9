package dev.queue.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CPU time the hypervisor took from this machine ("steal" in /proc/stat), so a run on a shared host reports how
 * much of the machine it actually had. On the 2-vCPU guest the benchmarks ran on, seconds with a third of the CPU
 * stolen handled a third fewer messages; without this figure such a dip reads as the queue's.
 */
final class HostCpu {

    private static final Path PROC_STAT = Path.of("/proc/stat");

    /** Cumulative CPU time of all cores, in clock ticks: everything, and the part stolen. */
    record Sample(long total, long steal) {

        /** The stolen share of the CPU time between {@code earlier} and this sample, in percent. */
        double stealPercentSince(Sample earlier) {
            long total = this.total - earlier.total;
            return total <= 0 ? 0 : 100.0 * (steal - earlier.steal) / total;
        }
    }

    private HostCpu() {
    }

    /** The current counters, or null where /proc/stat is not there to read (not Linux) or lacks the steal column. */
    static Sample sample() {
        try {
            for (String line : Files.readAllLines(PROC_STAT)) {
                if (line.startsWith("cpu ")) {
                    return parse(line);
                }
            }
            return null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** The aggregate "cpu" line: user nice system idle iowait irq softirq steal [guest guest_nice]. */
    static Sample parse(String cpuLine) {
        String[] fields = cpuLine.trim().split("\\s+");
        if (fields.length < 9) {
            return null;
        }
        long total = 0;
        // guest and guest_nice are already counted in user and nice.
        for (int i = 1; i <= 8; i++) {
            total += Long.parseLong(fields[i]);
        }
        return new Sample(total, Long.parseLong(fields[8]));
    }
}
