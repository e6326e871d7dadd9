package dev.queue.bench;

import dev.queue.postgres.PostgresQueue;
import dev.queue.postgres.PostgresQueueConfig;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The raw SQL ceiling: the same row lifecycle as the queue (insert; claim a batch with a materialized
 * SKIP LOCKED CTE and an UPDATE; delete the batch) through plain JDBC, on the same server and the same number
 * of connections, on the same table (the queue's schema) with the same vacuum upkeep, and no framework in
 * between. The queue's throughput is reported as a share of this. Claims and deletes commit as the queue's do:
 * without waiting for the flush unless --durable-acks.
 */
final class Ceiling {

    private static final String SCHEMA = "queue_ceiling";

    private final BenchDatabase db;
    private final int producers;
    private final int consumers;
    private final boolean bulk;
    private final int batch;
    private final long maxBacklog;
    /** As the queue's default: claims and deletes commit without waiting for the flush; inserts wait. */
    private final String commitMode;
    private final AtomicLong inserted = new AtomicLong();
    private final AtomicLong done = new AtomicLong();
    /** Rows done in each measured second, for runs long enough to show whether the server itself holds its pace. */
    private final List<Double> perSecond = new ArrayList<>();
    private final List<Double> minuteSteal = new ArrayList<>();
    private long measureStartNanos;

    Ceiling(BenchDatabase db, int producers, int consumers, boolean bulk, int batch, long maxBacklog, boolean durableAcknowledgements) {
        this.maxBacklog = maxBacklog;
        this.commitMode = durableAcknowledgements ? "" : " AND (SELECT set_config('synchronous_commit', 'off', true)) = 'off'";
        this.db = db;
        this.producers = producers;
        this.consumers = consumers;
        this.bulk = bulk;
        this.batch = batch;
    }

    /** Rows that went through the whole lifecycle per second, measured over {@code seconds} after a short warm-up. */
    double measure(int seconds) throws Exception {
        db.dropSchema(SCHEMA);
        double rate;
        // The queue's own schema, created by its migrator: the same columns, indexes, constraint and storage
        // settings, so the ceiling does the same row work on the same table and only the framework is left out.
        // The queue instance stays open for its hot-table vacuum alone (nothing subscribes), the upkeep the queue
        // gives its table: without it the table and its claim index grew by gigabytes within minutes, every claim
        // stepped over millions of dead entries, and the ceiling measured autovacuum's schedule, not the lifecycle.
        try (PostgresQueue upkeep = PostgresQueue.create(db.dataSource(), PostgresQueueConfig.defaults().schema(SCHEMA).listen(false))) {
            rate = run(seconds);
        }
        db.dropSchema(SCHEMA);
        return rate;
    }

    private double run(int seconds) throws Exception {
        long warmupNanos = 2_000_000_000L;
        long end = System.nanoTime() + warmupNanos + seconds * 1_000_000_000L;
        CountDownLatch finished = new CountDownLatch(producers + consumers);
        List<Thread> threads = new ArrayList<>();
        List<Exception> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int i = 0; i < producers; i++) {
            threads.add(new Thread(() -> {
                try (Connection c = db.connect()) {
                    produce(c, end);
                } catch (Exception e) {
                    failures.add(e);
                } finally {
                    finished.countDown();
                }
            }, "ceiling-producer-" + i));
        }
        long[] countedFrom = new long[1];
        for (int i = 0; i < consumers; i++) {
            threads.add(new Thread(() -> {
                try (Connection c = db.connect()) {
                    consume(c, end);
                } catch (Exception e) {
                    failures.add(e);
                } finally {
                    finished.countDown();
                }
            }, "ceiling-consumer-" + i));
        }
        long start = System.nanoTime();
        threads.forEach(Thread::start);
        while (System.nanoTime() - start < warmupNanos) {
            java.util.concurrent.locks.LockSupport.parkNanos(10_000_000L);
        }
        countedFrom[0] = done.get();
        long measureStart = System.nanoTime();
        measureStartNanos = measureStart;
        long lastDone = countedFrom[0];
        HostCpu.Sample cpuLastMinute = HostCpu.sample();
        for (int second = 1; !finished.await(measureStart + second * 1_000_000_000L - System.nanoTime(), TimeUnit.NANOSECONDS); second++) {
            long now = done.get();
            perSecond.add((double) (now - lastDone));
            lastDone = now;
            if (second % 60 == 0) {
                HostCpu.Sample cpu = HostCpu.sample();
                minuteSteal.add(cpu == null || cpuLastMinute == null ? -1 : cpu.stealPercentSince(cpuLastMinute));
                cpuLastMinute = cpu;
            }
        }
        double elapsed = (System.nanoTime() - measureStart) / 1e9;
        if (!failures.isEmpty()) {
            throw failures.get(0);
        }
        return (done.get() - countedFrom[0]) / elapsed;
    }

    /** The mean rows per second of each whole measured minute of the last {@link #measure}. */
    List<Double> minuteMeans() {
        List<Double> minutes = new ArrayList<>();
        for (int end = 60; end <= perSecond.size(); end += 60) {
            minutes.add(perSecond.subList(end - 60, end).stream().mapToDouble(Double::doubleValue).average().orElse(0));
        }
        return minutes;
    }

    /** The CPU share the host took in each whole measured minute of the last {@link #measure}, -1 where unreadable. */
    List<Double> minuteSteal() {
        return minuteSteal;
    }

    /** When the measured period of the last {@link #measure} began, in {@link System#nanoTime()}. */
    long measureStartNanos() {
        return measureStartNanos;
    }

    private void produce(Connection c, long end) throws SQLException {
        if (bulk) {
            c.setAutoCommit(true);
            try (PreparedStatement insert = c.prepareStatement("INSERT INTO " + SCHEMA + ".messages (namespace, topic, payload, max_attempts, run_at, published_at) "
                    + "SELECT 'bench', 'bench', p::json, 3, now(), now() FROM unnest(?::text[]) AS p(p)")) {
                String[] payloads = new String[batch];
                java.util.Arrays.fill(payloads, "{\"n\":1}");
                while (System.nanoTime() < end) {
                    awaitRoom(end);
                    Array array = c.createArrayOf("text", payloads);
                    insert.setArray(1, array);
                    inserted.addAndGet(insert.executeUpdate());
                }
            }
        } else {
            try (PreparedStatement insert = c.prepareStatement("INSERT INTO " + SCHEMA + ".messages (namespace, topic, payload, max_attempts, run_at, published_at) "
                    + "VALUES ('bench', 'bench', ?::json, 3, now(), now())")) {
                while (System.nanoTime() < end) {
                    awaitRoom(end);
                    insert.setString(1, "{\"n\":1}");
                    inserted.addAndGet(insert.executeUpdate());
                }
            }
        }
    }

    /** Producers hold back while the backlog is at its bound, as the queue's producers do: consumers set the pace. */
    private void awaitRoom(long end) {
        while (maxBacklog > 0 && inserted.get() - done.get() >= maxBacklog && System.nanoTime() < end) {
            java.util.concurrent.locks.LockSupport.parkNanos(200_000L);
        }
    }

    private void consume(Connection c, long end) throws SQLException {
        try (PreparedStatement claim = c.prepareStatement("WITH picked AS MATERIALIZED (SELECT id FROM " + SCHEMA + ".messages "
                + "WHERE namespace = 'bench' AND topic = 'bench' AND state = 'pending' AND run_at <= now() "
                + "ORDER BY priority, run_at, id LIMIT ? FOR UPDATE SKIP LOCKED) "
                + "UPDATE " + SCHEMA + ".messages m SET state = 'running', attempts = m.attempts + 1, lease_until = now() + interval '30 seconds', "
                + "lease_token = 1, worker = 'ceiling' FROM picked WHERE m.id = picked.id" + commitMode + " RETURNING m.id");
             PreparedStatement delete = c.prepareStatement("DELETE FROM " + SCHEMA + ".messages WHERE id = ANY(?) AND lease_token = 1" + commitMode)) {
            List<Long> ids = new ArrayList<>(100);
            while (System.nanoTime() < end) {
                ids.clear();
                claim.setInt(1, 100);
                try (ResultSet rs = claim.executeQuery()) {
                    while (rs.next()) {
                        ids.add(rs.getLong(1));
                    }
                }
                if (ids.isEmpty()) {
                    java.util.concurrent.locks.LockSupport.parkNanos(1_000_000L);
                    continue;
                }
                delete.setArray(1, c.createArrayOf("bigint", ids.toArray()));
                done.addAndGet(delete.executeUpdate());
            }
        }
    }
}
