package dev.queue.postgres;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * The messages this process published, per namespace and topic, counted in memory and written once per
 * {@link #INTERVAL} by one call of {@code record_rates} ({@code db/queue/R__stats.sql}): the overview's rate in
 * costs the publish statements nothing (a trigger or a counter update per publish would). The same call takes the
 * minute's snapshot of the completion counters, so it also runs once a minute when nothing was published.
 *
 * <p>Counts are of messages stored, also on a caller's transaction that may still roll back: a rate, not a ledger.
 * A failed flush keeps its counts for the next one.
 */
final class PublishRates implements AutoCloseable {

    /** As often as the worker registry heartbeats. */
    static final Duration INTERVAL = Duration.ofSeconds(5);

    private static final Logger LOG = LoggerFactory.getLogger(PublishRates.class);

    /** By "namespace/topic": names hold no slash, so the key splits back unambiguously. */
    private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();
    private final Sessions sessions;
    private final String schema;
    private ScheduledExecutorService timer;
    private long lastMinute = -1;

    PublishRates(Sessions sessions, String schema) {
        this.sessions = sessions;
        this.schema = schema;
    }

    /** Counts {@code n} messages stored for the topic (the key is {@code namespace/topic}). */
    void count(String key, long n) {
        if (n > 0) {
            counts.computeIfAbsent(key, k -> new LongAdder()).add(n);
        }
    }

    synchronized void start() {
        if (timer != null) {
            return;
        }
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "queue-rates-" + schema);
            thread.setDaemon(true);
            return thread;
        });
        timer.scheduleWithFixedDelay(this::flushQuietly, INTERVAL.toMillis(), INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void flushQuietly() {
        try {
            flush();
        } catch (RuntimeException e) {
            LOG.debug("schema {}: the flush of publish counts failed, kept for the next one: {}", schema, e.toString());
        }
    }

    /** Writes the counts since the last flush (and the minute's snapshot); false when there was nothing to do. */
    synchronized boolean flush() {
        List<String> namespaces = new ArrayList<>();
        List<String> topics = new ArrayList<>();
        List<Long> published = new ArrayList<>();
        Map<String, Long> taken = new HashMap<>();
        counts.forEach((key, adder) -> {
            long n = adder.sumThenReset();
            if (n > 0) {
                int slash = key.indexOf('/');
                namespaces.add(key.substring(0, slash));
                topics.add(key.substring(slash + 1));
                published.add(n);
                taken.put(key, n);
            }
        });
        long minute = System.currentTimeMillis() / 60_000;
        if (taken.isEmpty() && minute == lastMinute) {
            return false;
        }
        Map<String, Object> params = new HashMap<>();
        params.put("namespaces", namespaces.toArray(new String[0]));
        params.put("topics", topics.toArray(new String[0]));
        params.put("published", published.toArray(new Long[0]));
        try {
            sessions.autoCommit("the flush of publish counts", session -> session.selectOne("operator.recordRates", params));
            lastMinute = minute;
            return true;
        } catch (RuntimeException e) {
            taken.forEach((key, n) -> count(key, n));
            throw e;
        }
    }

    /** Stops the timer and writes what is left (best effort: the database may be gone). */
    @Override
    public void close() {
        ScheduledExecutorService stopping;
        synchronized (this) {
            stopping = timer;
            timer = null;
        }
        if (stopping != null) {
            stopping.shutdownNow();
            try {
                stopping.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        flushQuietly();
    }
}
