package dev.queue.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * How fast the host runs a fixed piece of work right now: the CPU time (not wall time) one thread needs for it,
 * measured every few seconds during a run. CPU time leaves out waiting for a core, which {@link HostCpu}'s steal
 * figure covers; what it shows is the core itself getting slower, as it does on a shared host when neighbours
 * compete for caches and memory (a fixed Python loop took from 0.77 to 1.63 s at different moments of one session
 * on the machine the benchmarks ran on). A minute in which the queue handled fewer messages while this probe also
 * took longer was a slower machine, not a slower queue.
 */
final class SpeedProbe implements AutoCloseable {

    private static final int[] WALK = cycle(1 << 16);

    /** Probes taken, each as {elapsed nanos since start, CPU nanos of the work}. */
    private final List<long[]> samples = new ArrayList<>();
    private final Thread thread;
    private final long start = System.nanoTime();
    private volatile boolean running = true;
    private volatile long sink;

    SpeedProbe(long intervalMillis) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        thread = new Thread(() -> {
            // Compiled before the first probe counts (a few calls take the loop through the JIT compilers).
            for (int i = 0; i < 5; i++) {
                sink += work();
            }
            while (running) {
                long cpuBefore = threads.getCurrentThreadCpuTime();
                sink += work();
                long cpu = threads.getCurrentThreadCpuTime() - cpuBefore;
                synchronized (samples) {
                    samples.add(new long[] {System.nanoTime() - start, cpu});
                }
                LockSupport.parkNanos(intervalMillis * 1_000_000L);
            }
        }, "bench-speed-probe");
        thread.setDaemon(true);
        thread.start();
    }

    /** A walk along a random cycle through 256 KiB (the caches) with some arithmetic, the same every time. */
    private static long work() {
        long sum = 0;
        int position = 0;
        for (int step = 0; step < 4_000_000; step++) {
            position = WALK[position];
            sum += position * 31L ^ step;
        }
        return sum;
    }

    /** A random permutation that is one cycle through every slot (Sattolo's algorithm), so the walk never settles in a short loop. */
    private static int[] cycle(int size) {
        int[] next = new int[size];
        for (int i = 0; i < size; i++) {
            next[i] = i;
        }
        long seed = 42;
        for (int i = size - 1; i > 0; i--) {
            seed = seed * 6364136223846793005L + 1442695040888963407L;
            int j = (int) ((seed >>> 33) % i);
            int swap = next[i];
            next[i] = next[j];
            next[j] = swap;
        }
        return next;
    }

    /** The median CPU milliseconds of the probes taken between two moments (nanos since start), -1 if none. */
    double medianMillis(long fromNanos, long toNanos) {
        List<Long> cpu = new ArrayList<>();
        synchronized (samples) {
            for (long[] sample : samples) {
                if (sample[0] >= fromNanos && sample[0] < toNanos) {
                    cpu.add(sample[1]);
                }
            }
        }
        if (cpu.isEmpty()) {
            return -1;
        }
        cpu.sort(null);
        return cpu.get(cpu.size() / 2) / 1e6;
    }

    /** A {@link System#nanoTime()} reading in the time base of {@link #medianMillis}. */
    long sinceStart(long nanoTime) {
        return nanoTime - start;
    }

    /** Nanos since the probe started, the time base of {@link #medianMillis}. */
    long elapsedNanos() {
        return System.nanoTime() - start;
    }

    @Override
    public void close() {
        running = false;
        LockSupport.unpark(thread);
    }
}
