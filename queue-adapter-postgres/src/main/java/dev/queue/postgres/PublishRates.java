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
 * {@link #INTERVAL} by a call of {@code record_rates} ({@code db/queue/R__stats.sql}), one per 10,000 topics: the
 * overview's rate in costs the publish statements nothing (a trigger or a counter update per publish would). The
 * same call takes the minute's snapshot of the completion counters, so it also runs once a minute when nothing was
 * published.
 *
 * <p>Counts are of messages stored, also on a caller's transaction that may still roll back: a rate, not a ledger.
 * A failed flush keeps its counts for the next one.
 */
final class PublishRates implements AutoCloseable {

    /** As often as the worker registry heartbeats. */
    static final Duration INTERVAL = Duration.ofSeconds(5);

    /** Counts written by one call at most, the bound of the gate {@code engine_record_rates}. */
    static final int MAX_COUNTS_PER_CALL = 10_000;

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

    /**
     * Writes the counts since the last flush (and the minute's snapshot); false when there was nothing to do. A flush
     * of more than {@link #MAX_COUNTS_PER_CALL} topics takes several calls, and a call that fails keeps its counts and
     * those of the calls after it.
     */
    synchronized boolean flush() {
        List<String> keys = new ArrayList<>();
        List<Long> published = new ArrayList<>();
        counts.forEach((key, adder) -> {
            long n = adder.sumThenReset();
            if (n > 0) {
                keys.add(key);
                published.add(n);
            }
        });
        long minute = System.currentTimeMillis() / 60_000;
        if (keys.isEmpty() && minute == lastMinute) {
            return false;
        }
        int from = 0;
        do {
            int to = Math.min(keys.size(), from + MAX_COUNTS_PER_CALL);
            try {
                write(keys.subList(from, to), published.subList(from, to));
            } catch (RuntimeException e) {
                for (int i = from; i < keys.size(); i++) {
                    count(keys.get(i), published.get(i));
                }
                throw e;
            }
            from = to;
        } while (from < keys.size());
        lastMinute = minute;
        return true;
    }

    private void write(List<String> keys, List<Long> published) {
        String[] namespaces = new String[keys.size()];
        String[] topics = new String[keys.size()];
        for (int i = 0; i < keys.size(); i++) {
            String key = keys.get(i);
            int slash = key.indexOf('/');
            namespaces[i] = key.substring(0, slash);
            topics[i] = key.substring(slash + 1);
        }
        Map<String, Object> params = new HashMap<>();
        params.put("namespaces", namespaces);
        params.put("topics", topics);
        params.put("published", published.toArray(new Long[0]));
        sessions.autoCommit("the flush of publish counts",
                session -> session.selectOne("operator.recordRates", params));
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
