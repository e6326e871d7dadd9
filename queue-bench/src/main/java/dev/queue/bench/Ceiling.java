package dev.queue.bench;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The raw SQL ceiling: the same row lifecycle as the queue (insert; claim a batch with a materialized
 * SKIP LOCKED CTE and an UPDATE; delete the batch) through plain JDBC, on the same server and the same number
 * of connections, with no framework in between. The queue's throughput is reported as a share of this.
 */
final class Ceiling {

    private static final String SCHEMA = "queue_ceiling";

    private final BenchDatabase db;
    private final int producers;
    private final int consumers;
    private final boolean bulk;
    private final int batch;
    private final long maxBacklog;
    private final AtomicLong inserted = new AtomicLong();
    private final AtomicLong done = new AtomicLong();

    Ceiling(BenchDatabase db, int producers, int consumers, boolean bulk, int batch, long maxBacklog) {
        this.maxBacklog = maxBacklog;
        this.db = db;
        this.producers = producers;
        this.consumers = consumers;
        this.bulk = bulk;
        this.batch = batch;
    }

    /** Rows that went through the whole lifecycle per second, measured over {@code seconds} after a short warm-up. */
    double measure(int seconds) throws Exception {
        db.dropSchema(SCHEMA);
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA " + SCHEMA);
            s.execute("CREATE TABLE " + SCHEMA + ".message (id bigserial PRIMARY KEY, namespace text COLLATE \"C\" NOT NULL, topic text COLLATE \"C\" NOT NULL, "
                    + "payload json NOT NULL, headers jsonb NOT NULL DEFAULT '{}', priority smallint NOT NULL DEFAULT 0, "
                    + "run_at timestamptz NOT NULL DEFAULT now(), state text NOT NULL DEFAULT 'pending', attempts int NOT NULL DEFAULT 0, "
                    + "lease_until timestamptz, lease_token bigint, worker text, published_at timestamptz NOT NULL DEFAULT now()) "
                    + "WITH (fillfactor = 70)");
            s.execute("CREATE INDEX ON " + SCHEMA + ".message (namespace, topic, priority, run_at, id) WHERE state = 'pending'");
        }
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
        finished.await();
        double elapsed = (System.nanoTime() - measureStart) / 1e9;
        if (!failures.isEmpty()) {
            throw failures.get(0);
        }
        db.dropSchema(SCHEMA);
        return (done.get() - countedFrom[0]) / elapsed;
    }

    private void produce(Connection c, long end) throws SQLException {
        if (bulk) {
            c.setAutoCommit(true);
            try (PreparedStatement insert = c.prepareStatement("INSERT INTO " + SCHEMA + ".message (namespace, topic, payload) "
                    + "SELECT 'bench', 'bench', p::json FROM unnest(?::text[]) AS p(p)")) {
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
            try (PreparedStatement insert = c.prepareStatement("INSERT INTO " + SCHEMA + ".message (namespace, topic, payload) "
                    + "VALUES ('bench', 'bench', ?::json)")) {
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
        try (PreparedStatement claim = c.prepareStatement("WITH picked AS MATERIALIZED (SELECT id FROM " + SCHEMA + ".message "
                + "WHERE namespace = 'bench' AND topic = 'bench' AND state = 'pending' AND run_at <= now() "
                + "ORDER BY priority, run_at, id LIMIT ? FOR UPDATE SKIP LOCKED) "
                + "UPDATE " + SCHEMA + ".message m SET state = 'running', attempts = m.attempts + 1, lease_until = now() + interval '30 seconds', "
                + "lease_token = 1, worker = 'ceiling' FROM picked WHERE m.id = picked.id RETURNING m.id");
             PreparedStatement delete = c.prepareStatement("DELETE FROM " + SCHEMA + ".message WHERE id = ANY(?) AND lease_token = 1")) {
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
