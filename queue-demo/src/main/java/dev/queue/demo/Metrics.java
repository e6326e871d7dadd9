package dev.queue.demo;

import dev.queue.api.MessageContext;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the demo measures on its side of the queue: messages published per topic, handler runs per topic and per
 * replica, retries (runs after the first attempt), and the latency from publish to handler start of first
 * attempts. Retries are left out of the latency on purpose: their wait is the backoff, not the queue.
 * Thread-safe: handlers record concurrently; one thread at a time reads the latency.
 */
final class Metrics {

    private final Map<String, LongAdder> published = new LinkedHashMap<>();
    private final Map<String, LongAdder> runs = new LinkedHashMap<>();
    private final Map<String, LongAdder> retries = new LinkedHashMap<>();
    private final LongAdder[] replicaRuns;
    private final LongAdder totalRuns = new LongAdder();
    private final LongAdder totalRetries = new LongAdder();

    /** Latency in microseconds; auto-resizing, 3 significant digits. */
    private final Recorder recorder = new Recorder(3);
    private final Histogram total = new Histogram(3);
    private Histogram interval;

    Metrics(List<String> topics, int replicas) {
        for (String topic : topics) {
            published.put(topic, new LongAdder());
            runs.put(topic, new LongAdder());
            retries.put(topic, new LongAdder());
        }
        replicaRuns = new LongAdder[replicas];
        for (int i = 0; i < replicas; i++) {
            replicaRuns[i] = new LongAdder();
        }
    }

    void recordPublished(String topic) {
        published.get(topic).increment();
    }

    /** Called first thing in every handler; {@code replica} counts from 1. */
    void handlerStarted(int replica, MessageContext context) {
        long now = nowMicros();
        String topic = context.topic();
        runs.get(topic).increment();
        totalRuns.increment();
        replicaRuns[replica - 1].increment();
        if (Workload.isRetry(context)) {
            retries.get(topic).increment();
            totalRetries.increment();
            return;
        }
        String stamp = context.headers().get(Workload.PUBLISHED_AT_HEADER);
        if (stamp != null) {
            recorder.recordValue(Math.max(0, now - Long.parseLong(stamp)));
        }
    }

    /** The latency recorded since the previous call (also added to the total). */
    synchronized Histogram takeInterval() {
        interval = recorder.getIntervalHistogram(interval);
        total.add(interval);
        return interval;
    }

    /** Everything recorded so far, including what no interval has taken yet. */
    synchronized Histogram totalLatency() {
        takeInterval();
        return total.copy();
    }

    long published(String topic) {
        return published.get(topic).sum();
    }

    long publishedTotal() {
        return published.values().stream().mapToLong(LongAdder::sum).sum();
    }

    long runs(String topic) {
        return runs.get(topic).sum();
    }

    long retries(String topic) {
        return retries.get(topic).sum();
    }

    long totalRuns() {
        return totalRuns.sum();
    }

    long totalRetries() {
        return totalRetries.sum();
    }

    long replicaRuns(int replica) {
        return replicaRuns[replica - 1].sum();
    }

    int replicas() {
        return replicaRuns.length;
    }

    static long nowMicros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }
}
