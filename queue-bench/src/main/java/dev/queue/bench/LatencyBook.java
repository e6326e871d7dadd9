package dev.queue.bench;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Latency from publish commit to handler start. The producer notes when its commit returned, the handler when
 * it started; whichever comes second records the difference. (A handler can start before the producer's call
 * returns: the message is visible at commit, and the wake-up is quick. Then the latency is recorded as 0.)
 */
final class LatencyBook {

    private final long base = System.nanoTime();
    private final ConcurrentHashMap<Long, Long> halves = new ConcurrentHashMap<>();
    private final Recorder interval = new Recorder(TimeUnit.MINUTES.toMicros(10), 3);
    private final Histogram total = new Histogram(TimeUnit.MINUTES.toMicros(10), 3);
    private volatile boolean recording = true;

    private long stamp() {
        return System.nanoTime() - base + 1;
    }

    void committed(long id) {
        long now = stamp();
        halves.merge(id, now, (started, committed) -> {
            record(-started - committed);
            return null;
        });
    }

    void started(long id) {
        long now = -stamp();
        halves.merge(id, now, (committed, started) -> {
            record(-started - committed);
            return null;
        });
    }

    private void record(long nanos) {
        if (recording) {
            interval.recordValue(Math.max(0, nanos) / 1000);
        }
    }

    /** The latencies since the last call; also folded into the run's total. */
    synchronized Histogram takeInterval() {
        Histogram h = interval.getIntervalHistogram();
        total.add(h);
        return h;
    }

    synchronized Histogram total() {
        return total.copy();
    }

    synchronized void reset() {
        interval.reset();
        total.reset();
    }

    void stop() {
        recording = false;
    }
}
