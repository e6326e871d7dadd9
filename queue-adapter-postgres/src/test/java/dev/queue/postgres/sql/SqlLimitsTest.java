package dev.queue.postgres.sql;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.util.PSQLException;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The limit functions of migration 23 (set_queue_limits, clear_queue_limits, list_queue_limits) and the pull
 * functions under limits: pull, pull_batch and pull_any hold back at the limit, rations by partition and by rate,
 * bad input, setting limits while a claim is under way, and eight connections pulling at once against a limit.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlLimitsTest {

    private static final AtomicInteger NAMESPACES = new AtomicInteger();
    private SqlTenantRoles roles;
    private SqlTestDatabase db;

    @BeforeAll
    void createDatabase() {
        roles = SqlTenantRoles.create("sqllimits");
        db = roles.db;
    }

    @AfterAll
    void dropDatabase() {
        roles.close();
    }

    private static String newNamespace() {
        return "limits-" + NAMESPACES.incrementAndGet();
    }

    private long push(String namespace, String queue) {
        return ((Number) db.value("SELECT queue.push(?, ?, '{}'::json)", namespace, queue)).longValue();
    }

    private long push(String namespace, String queue, String customer) {
        return ((Number) db.value("SELECT queue.push(?, ?, '{}'::json, p_headers := jsonb_build_object('customer', ?::text))",
                namespace, queue, customer)).longValue();
    }

    private List<Object> pullBatch(String namespace, String queue, int limit) {
        return db.rows("SELECT id FROM queue.pull_batch(?, ?, ?)", namespace, queue, limit).stream()
                .map(r -> r.get("id")).toList();
    }

    @Test
    void limitsAreSetListedClearedAndRecordedWithTheActor() throws SQLException {
        String ns = newNamespace();
        try (Connection connection = db.connect()) {
            SqlTestDatabase.rows(connection, "SELECT queue.set_actor('ops-bob')");
            assertThat(SqlTestDatabase.rows(connection, "SELECT queue.set_queue_limits(?, 'email', p_max_running := 5,"
                    + " p_partition_header := 'customer', p_max_running_per_partition := 2, p_rate_limit := 10,"
                    + " p_rate_period := interval '1 second')", ns).get(0).values()).containsExactly(true);
            assertThat(SqlTestDatabase.rows(connection, "SELECT queue.set_queue_limits(?, 'email', p_max_running := 5,"
                    + " p_partition_header := 'customer', p_max_running_per_partition := 2, p_rate_limit := 10,"
                    + " p_rate_period := interval '1 second')", ns).get(0).values()).containsExactly(false);
            List<Map<String, Object>> listed = SqlTestDatabase.rows(connection,
                    "SELECT queue, max_running, partition_header, max_running_per_partition, rate_limit,"
                    + " rate_period::text AS rate_period, partition_rate_limit, set_by FROM queue.list_queue_limits(?)", ns);
            assertThat(listed).hasSize(1);
            assertThat(listed.get(0)).containsEntry("queue", "email").containsEntry("max_running", 5)
                    .containsEntry("partition_header", "customer").containsEntry("max_running_per_partition", 2)
                    .containsEntry("rate_limit", 10).containsEntry("rate_period", "00:00:01")
                    .containsEntry("partition_rate_limit", null).containsEntry("set_by", "ops-bob");
            assertThat(SqlTestDatabase.rows(connection, "SELECT queue.clear_queue_limits(?, 'email')", ns).get(0).values())
                    .containsExactly(true);
            assertThat(SqlTestDatabase.rows(connection, "SELECT queue.clear_queue_limits(?, 'email')", ns).get(0).values())
                    .containsExactly(false);
        }
        assertThat(db.rows("SELECT * FROM queue.list_queue_limits(?)", ns)).isEmpty();
        assertThat(db.rows("SELECT actor, action, subject FROM queue.list_audit_log(?)", ns))
                .extracting(r -> r.get("action") + " " + r.get("subject") + " by " + r.get("actor"))
                .containsExactly("set_queue_limits email by ops-bob", "clear_queue_limits email by ops-bob");
    }

    @Test
    void everyPullFunctionStopsAtTheRunningLimit() {
        String ns = newNamespace();
        db.value("SELECT queue.set_queue_limits(?, 'email', p_max_running := 2)", ns);
        long a = push(ns, "email");
        long b = push(ns, "email");
        long c = push(ns, "email");
        long sms = push(ns, "sms");

        assertThat(db.rows("SELECT id FROM queue.pull(?, 'email')", ns)).extracting(r -> r.get("id")).containsExactly(a);
        assertThat(db.rows("SELECT id FROM queue.pull_any(?, ARRAY['email', 'sms'], 10)", ns))
                .extracting(r -> r.get("id")).containsExactly(b, sms);
        assertThat(pullBatch(ns, "email", 10)).isEmpty();
        assertThat(db.value("SELECT queue.ack(?, ?)", ns, a)).isEqualTo(true);
        assertThat(pullBatch(ns, "email", 10)).containsExactly(c);
    }

    @Test
    void partitionsAndRatesRationThePulls() {
        String ns = newNamespace();
        db.value("SELECT queue.set_queue_limits(?, 'hooks', p_partition_header := 'customer',"
                + " p_max_running_per_partition := 1)", ns);
        long a1 = push(ns, "hooks", "a");
        push(ns, "hooks", "a");
        long b1 = push(ns, "hooks", "b");
        assertThat(pullBatch(ns, "hooks", 10)).containsExactly(a1, b1);
        assertThat(pullBatch(ns, "hooks", 10)).isEmpty();

        db.value("SELECT queue.set_queue_limits(?, 'calls', p_rate_limit := 3, p_rate_period := interval '1 hour')", ns);
        for (int i = 0; i < 5; i++) {
            push(ns, "calls");
        }
        assertThat(pullBatch(ns, "calls", 10)).hasSize(3);
        assertThat(pullBatch(ns, "calls", 10)).isEmpty();
        // the next token is due in about 20 minutes: the engine's next due time says so
        Object next = db.value("SELECT queue.engine_next_due(?, ARRAY['calls'], NULL) - now() > interval '19 minutes'", ns);
        assertThat(next).isEqualTo(true);
    }

    private long pushKeyed(String namespace, String queue, String key) {
        return ((Number) db.value("SELECT queue.push(?, ?, '{}'::json, p_ordering_key := ?)", namespace, queue, key))
                .longValue();
    }

    @Test
    void limitsPartitionedByTheOrderingKeyRationEachKeyAndTheMessagesWithoutOne() {
        String ns = newNamespace();
        assertThat(db.value("SELECT queue.set_queue_limits(?, 'hooks', p_partition_kind := 'ordering_key',"
                + " p_partition_rate_limit := 1, p_partition_rate_period := interval '1 hour')", ns)).isEqualTo(true);
        assertThat(db.rows("SELECT partition_kind, partition_header, partition_rate_limit FROM queue.list_queue_limits(?)",
                ns)).extracting(r -> r.get("partition_kind") + " " + r.get("partition_header") + " "
                        + r.get("partition_rate_limit"))
                .containsExactly("ordering_key null 1");
        long a1 = pushKeyed(ns, "hooks", "a");
        long a2 = pushKeyed(ns, "hooks", "a");
        long b1 = pushKeyed(ns, "hooks", "b");
        long none1 = push(ns, "hooks");
        push(ns, "hooks");

        // one start per hour per key, and one for the messages without a key together
        assertThat(db.rows("SELECT id, ordering_key FROM queue.pull_batch(?, 'hooks', 10)", ns))
                .extracting(r -> r.get("id") + " " + r.get("ordering_key"))
                .containsExactly(a1 + " a", b1 + " b", none1 + " null");
        assertThat(db.value("SELECT queue.ack(?, ?)", ns, a1)).isEqualTo(true);
        assertThat(db.value("SELECT state FROM queue.inspect(?, ?)", ns, a2)).isEqualTo("pending");
        assertThat(pullBatch(ns, "hooks", 10)).isEmpty();

        // a running limit per key: a key runs one at a time anyway, the messages without a key share the limit
        db.value("SELECT queue.set_queue_limits(?, 'jobs', p_max_running_per_partition := 2,"
                + " p_partition_kind := 'ordering_key')", ns);
        long c1 = pushKeyed(ns, "jobs", "c");
        long d1 = pushKeyed(ns, "jobs", "d");
        long n1 = push(ns, "jobs");
        long n2 = push(ns, "jobs");
        long n3 = push(ns, "jobs");
        assertThat(pullBatch(ns, "jobs", 10)).containsExactly(c1, d1, n1, n2);
        db.value("SELECT queue.ack(?, ?)", ns, n1);
        assertThat(pullBatch(ns, "jobs", 10)).containsExactly(n3);

        // the kind is replaced with the limits: by a header again, named explicitly or not
        assertThat(db.value("SELECT queue.set_queue_limits(?, 'jobs', p_max_running_per_partition := 2,"
                + " p_partition_header := 'customer', p_partition_kind := 'header')", ns)).isEqualTo(true);
        assertThat(db.value("SELECT queue.set_queue_limits(?, 'jobs', p_max_running_per_partition := 2,"
                + " p_partition_header := 'customer')", ns)).isEqualTo(false);
        assertThat(db.rows("SELECT queue, partition_kind, partition_header FROM queue.list_queue_limits(?)", ns))
                .extracting(r -> r.get("queue") + " " + r.get("partition_kind") + " " + r.get("partition_header"))
                .containsExactly("hooks ordering_key null", "jobs header customer");
    }

    @Test
    void settingLimitsWaitsForAClaimUnderWayAndCountsItsMessages() throws Exception {
        String ns = newNamespace();
        long first = push(ns, "email");
        push(ns, "email");
        try (Connection claimer = db.connect()) {
            claimer.setAutoCommit(false);
            assertThat(SqlTestDatabase.rows(claimer, "SELECT * FROM queue.pull(?, 'email')", ns))
                    .extracting(r -> r.get("id")).containsExactly(first);

            CompletableFuture<Object> limit = CompletableFuture.supplyAsync(
                    () -> db.value("SELECT queue.set_queue_limits(?, 'email', p_max_running := 1)", ns));
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> db.count(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                    + " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())") > 0);
            assertThat(limit).isNotDone();

            claimer.commit();
            assertThat(limit.get(30, TimeUnit.SECONDS)).isEqualTo(true);
        }
        assertThat(pullBatch(ns, "email", 10)).isEmpty();
        db.value("SELECT queue.ack(?, ?)", ns, first);
        assertThat(pullBatch(ns, "email", 10)).hasSize(1);
    }

    /**
     * A running limit alone seats the messages in slots locked with SKIP LOCKED: a claim held open does not make
     * another wait, the two together take at most the limit, and a slot frees when its acknowledgement commits.
     */
    @Test
    void claimsUnderARunningLimitAloneDoNotWaitForEachOtherAndStayWithinIt() throws Exception {
        String ns = newNamespace();
        db.value("SELECT queue.set_queue_limits(?, 'email', p_max_running := 4)", ns);
        for (int i = 0; i < 10; i++) {
            push(ns, "email");
        }
        try (Connection claimer = db.connect()) {
            claimer.setAutoCommit(false);
            List<Object> held = SqlTestDatabase.rows(claimer, "SELECT id FROM queue.pull_batch(?, 'email', 3)", ns)
                    .stream().map(r -> r.get("id")).toList();
            assertThat(held).hasSize(3);
            assertThat(CompletableFuture.supplyAsync(() -> pullBatch(ns, "email", 10)).get(30, TimeUnit.SECONDS))
                    .hasSize(1).doesNotContainAnyElementsOf(held);
            assertThat(pullBatch(ns, "email", 10)).isEmpty();
            claimer.commit();
            assertThat(pullBatch(ns, "email", 10)).isEmpty();
            db.value("SELECT queue.ack(?, ?)", ns, held.get(0));
            assertThat(pullBatch(ns, "email", 10)).hasSize(1);
        }
    }

    /** Lowered below the messages running, the limit starts nothing until they are back under it. */
    @Test
    void aRunningLimitLoweredBelowTheRunningMessagesStartsNothingUntilTheyAreUnderIt() {
        String ns = newNamespace();
        for (int i = 0; i < 10; i++) {
            push(ns, "email");
        }
        List<Object> running = pullBatch(ns, "email", 5);
        assertThat(running).hasSize(5);
        db.value("SELECT queue.set_queue_limits(?, 'email', p_max_running := 2)", ns);
        assertThat(pullBatch(ns, "email", 10)).isEmpty();
        db.value("SELECT queue.ack(?, ?)", ns, running.get(0));
        db.value("SELECT queue.ack(?, ?)", ns, running.get(1));
        db.value("SELECT queue.ack(?, ?)", ns, running.get(2));
        assertThat(pullBatch(ns, "email", 10)).as("two of the limit still running").isEmpty();
        db.value("SELECT queue.ack(?, ?)", ns, running.get(3));
        assertThat(pullBatch(ns, "email", 10)).hasSize(1);
        db.value("SELECT queue.set_queue_limits(?, 'email', p_max_running := 5)", ns);
        assertThat(pullBatch(ns, "email", 10)).hasSize(3);
    }

    /**
     * A claim reads its time when it starts; one that then waited for the bucket is older than the bucket's last
     * refill. It spends what the bucket holds, and the bucket's time stays where it was: written back, the older time
     * would refill the span between the two a second time. With a rate alone and with a running limit beside it (the
     * two ways the claim keeps buckets).
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"p_rate_limit := 10, p_rate_period := interval '1 second'",
            "p_max_running := 1000, p_rate_limit := 10, p_rate_period := interval '1 second'"})
    void aClaimOlderThanItsBucketsLastRefillDoesNotRefillItAgain(String limits) {
        String ns = newNamespace();
        db.value("SELECT queue.set_queue_limits(?, 'jobs', " + limits + ")", ns);
        db.value("SELECT count(*) FROM queue.push_batch(?, 'jobs', (SELECT array_agg('{}'::json) FROM generate_series(1, 40)))", ns);
        assertThat(claimAt(ns, "2030-01-01 00:00:00+00", 100)).as("a full bucket").isEqualTo(10);
        assertThat(claimAt(ns, "2030-01-01 00:00:01+00", 8)).as("a second's refill, 8 of 10 taken").isEqualTo(8);
        assertThat(claimAt(ns, "2030-01-01 00:00:00.5+00", 100)).as("the two left, no refill").isEqualTo(2);
        assertThat(claimAt(ns, "2030-01-01 00:00:02+00", 100)).as("a second's refill since the last one").isEqualTo(10);
    }

    private long claimAt(String namespace, String now, int limit) {
        return db.count("SELECT count(*) FROM queue._engine_claim(?, ARRAY['jobs'], 'w', ?, 1, 60000000, ?::timestamptz, false, "
                + "NULL, NULL, NULL, NULL)", namespace, limit, now);
    }

    @Test
    void eightConnectionsPullingAtOnceNeverExceedTheLimit() throws Exception {
        String ns = newNamespace();
        int limit = 5;
        int messages = 2000;
        db.value("SELECT queue.set_queue_limits(?, 'jobs', p_max_running := ?)", ns, limit);
        db.value("SELECT count(*) FROM queue.push_batch(?, 'jobs', (SELECT array_agg('{}'::json) FROM generate_series(1, ?)))",
                ns, messages);
        AtomicInteger running = new AtomicInteger();
        AtomicInteger maxRunning = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        AtomicInteger maxSeenInTable = new AtomicInteger();
        AtomicBoolean over = new AtomicBoolean();
        ExecutorService pool = Executors.newFixedThreadPool(9);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> pullers = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                pullers.add(pool.submit(() -> {
                    go.await();
                    try (Connection connection = db.connect()) {
                        while (done.get() < messages) {
                            List<Map<String, Object>> got = SqlTestDatabase.rows(connection,
                                    "SELECT id FROM queue.pull_batch(?, 'jobs', 3)", ns);
                            if (got.isEmpty()) {
                                Thread.onSpinWait();
                                continue;
                            }
                            // counted from the pullers' side: from after the pull committed to before the ack
                            maxRunning.accumulateAndGet(running.addAndGet(got.size()), Math::max);
                            long until = System.nanoTime() + 50_000;
                            while (System.nanoTime() < until) {
                                Thread.onSpinWait();
                            }
                            running.addAndGet(-got.size());
                            for (Map<String, Object> row : got) {
                                SqlTestDatabase.rows(connection, "SELECT queue.ack(?, ?)", ns, row.get("id"));
                                done.incrementAndGet();
                            }
                        }
                    }
                    return null;
                }));
            }
            Future<?> watcher = pool.submit(() -> {
                go.await();
                while (done.get() < messages) {
                    long inTable = db.count("SELECT count(*) FROM queue.messages WHERE namespace = ? AND state = 'running'", ns);
                    maxSeenInTable.accumulateAndGet((int) inTable, Math::max);
                    over.compareAndSet(false, inTable > limit);
                }
                return null;
            });
            go.countDown();
            for (Future<?> puller : pullers) {
                puller.get(5, TimeUnit.MINUTES);
            }
            watcher.get(1, TimeUnit.MINUTES);
        } finally {
            pool.shutdownNow();
        }
        assertThat(done.get()).isEqualTo(messages);
        assertThat(maxRunning.get()).as("most held at once by the pullers").isLessThanOrEqualTo(limit).isGreaterThan(1);
        assertThat(maxSeenInTable.get()).as("most running rows seen").isLessThanOrEqualTo(limit);
        assertThat(over).isFalse();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            SELECT queue.set_queue_limits('bad name', 'q', 1)                                          | QU001 | invalid p_namespace
            SELECT queue.set_queue_limits('acme', 'bad queue', 1)                                      | QU001 | invalid p_queue
            SELECT queue.set_queue_limits('acme', 'q')                                                 | QU001 | invalid p_max_running: expected at least one of
            SELECT queue.set_queue_limits('acme', 'q', 0)                                              | QU001 | invalid p_max_running: expected 1 to 100000, got: 0
            SELECT queue.set_queue_limits('acme', 'q', 100001)                                         | QU001 | got: 100001
            SELECT queue.set_queue_limits('acme', 'q', p_max_running_per_partition := 2)               | QU001 | invalid p_partition_header
            SELECT queue.set_queue_limits('acme', 'q', 1, p_partition_header := 'customer')            | QU001 | invalid p_partition_header: expected null without
            SELECT queue.set_queue_limits('acme', 'q', p_partition_header := 'a b', p_max_running_per_partition := 1) | QU001 | invalid p_partition_header
            SELECT queue.set_queue_limits('acme', 'q', p_partition_header := 'c', p_max_running_per_partition := 0)   | QU001 | invalid p_max_running_per_partition
            SELECT queue.set_queue_limits('acme', 'q', p_rate_limit := 5)                              | QU001 | invalid p_rate_period: expected 1 ms to 1 day, got: null
            SELECT queue.set_queue_limits('acme', 'q', p_rate_limit := 0, p_rate_period := interval '1 second') | QU001 | invalid p_rate_limit
            SELECT queue.set_queue_limits('acme', 'q', p_rate_limit := 5, p_rate_period := interval '2 days')   | QU001 | invalid p_rate_period: expected 1 ms to 1 day, got: 2 days
            SELECT queue.set_queue_limits('acme', 'q', 1, p_rate_period := interval '1 second')        | QU001 | invalid p_rate_period: expected null without p_rate_limit
            SELECT queue.set_queue_limits('acme', 'q', p_partition_header := 'c', p_partition_rate_limit := 1)  | QU001 | invalid p_partition_rate_period
            SELECT queue.set_queue_limits('acme', 'q', p_partition_kind := 'tenant', p_max_running_per_partition := 1) | QU001 | invalid p_partition_kind: expected header or ordering_key, got: "tenant"
            SELECT queue.set_queue_limits('acme', 'q', p_partition_kind := 'ordering_key', p_partition_header := 'c', p_max_running_per_partition := 1) | QU001 | invalid p_partition_header: expected null with p_partition_kind ordering_key, got: "c"
            SELECT queue.set_queue_limits('acme', 'q', 1, p_partition_kind := 'ordering_key')          | QU001 | invalid p_partition_kind: expected null without p_max_running_per_partition
            SELECT queue.set_queue_limits('acme', 'q', p_partition_kind := 'header', p_max_running_per_partition := 1) | QU001 | invalid p_partition_header
            SELECT queue.clear_queue_limits('acme', NULL)                                              | QU001 | invalid p_queue
            SELECT * FROM queue.list_queue_limits('')                                                  | QU001 | invalid p_namespace
            """)
    void aBadArgumentIsRefusedWithItsNameAndValueAndNothingChanges(String sql, String sqlState, String message) {
        Map<String, String> before = db.footprint();

        PSQLException error = db.error(sql);

        assertThat(error.getSQLState()).as(error.getMessage()).isEqualTo(sqlState);
        assertThat(error.getServerErrorMessage().getMessage()).contains(message);
        assertThat(db.footprint()).isEqualTo(before);
    }
}
