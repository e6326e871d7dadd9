package dev.queue.postgres.sql;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.postgresql.util.PSQLException;

import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The operator's functions of V12 on a real database: the worker registry, each health warning provoked and
 * cleared, and explain() in each state a message can be in.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlOperatorTest {

    private static final AtomicInteger NAMESPACES = new AtomicInteger();
    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private SqlTestDatabase db;

    @BeforeAll
    void createDatabase() {
        db = SqlTestDatabase.create("sqlops");
    }

    @AfterAll
    void dropDatabase() {
        db.close();
    }

    private static String newNamespace() {
        return "ops-" + NAMESPACES.incrementAndGet();
    }

    private long push(String namespace, String queue, String extra) {
        return ((Number) db.value("SELECT queue.push(?, ?, '{}'::json" + extra + ")", namespace, queue)).longValue();
    }

    private void heartbeat(String id, String listener, String subscriptions) {
        db.rows("SELECT queue.worker_heartbeat(?, 'host-a', 4242, now(), '1.0', ?, ?::jsonb)", id, listener, subscriptions);
    }

    private static String subscribing(String namespace, String topic, String worker) {
        return "[{\"namespace\": \"" + namespace + "\", \"topics\": [\"" + topic + "\"], \"worker\": \"" + worker
                + "\", \"concurrency\": 4, \"in_flight\": 1}]";
    }

    private List<Map<String, Object>> health(String namespace, String options) {
        return db.rows("SELECT code, namespace, queue, message, evidence::text AS evidence, advice FROM queue.health(?"
                + options + ")", namespace);
    }

    private List<String> codes(String namespace, String options) {
        return health(namespace, options).stream().map(r -> (String) r.get("code")).toList();
    }

    private Map<String, Object> explain(String namespace, long id) {
        List<Map<String, Object>> rows = db.rows("SELECT * FROM queue.explain(?, ?)", namespace, id);
        assertThat(rows).hasSize(1);
        return rows.get(0);
    }

    // ------------------------------------------------------------------ workers

    @Test
    void aHeartbeatRegistersAWorkerThatGoesWhenItsBeatsStopAndIsRemovedAfterTheBound() {
        String ns = newNamespace();
        heartbeat(ns + "-p1", "LISTENING", subscribing(ns, "email", "mailer-1"));

        List<Map<String, Object>> workers = db.rows("SELECT id, status, concurrency, in_flight, array_to_string(topics, ',') AS topics"
                + " FROM queue.workers(?)", ns);
        assertThat(workers).singleElement().satisfies(w -> {
            assertThat(w.get("status")).isEqualTo("alive");
            assertThat(w.get("concurrency")).isEqualTo(4);
            assertThat(w.get("in_flight")).isEqualTo(1);
            assertThat(w.get("topics")).isEqualTo(ns + "/email");
        });
        assertThat(db.rows("SELECT * FROM queue.workers(?)", "another-namespace")).isEmpty();

        db.rows("UPDATE queue.workers SET heartbeat_at = now() - interval '16 seconds' WHERE id = ?", ns + "-p1");
        assertThat(db.value("SELECT status FROM queue.workers(?)", ns)).isEqualTo("gone");

        heartbeat(ns + "-p2", "LISTENING", "[]");
        assertThat(db.count("SELECT count(*) FROM queue.workers WHERE id = ?", ns + "-p1")).as("gone for less than the bound").isEqualTo(1);
        db.rows("UPDATE queue.workers SET heartbeat_at = now() - interval '2 hours' WHERE id = ?", ns + "-p1");
        heartbeat(ns + "-p2", "LISTENING", "[]");
        assertThat(db.count("SELECT count(*) FROM queue.workers WHERE id = ?", ns + "-p1")).isZero();

        assertThat(db.value("SELECT queue.worker_stop(?)", ns + "-p2")).isEqualTo(true);
        assertThat(db.value("SELECT queue.worker_stop(?)", ns + "-p2")).isEqualTo(false);
    }

    @Test
    void aBadHeartbeatIsRefusedNamingTheArgument() {
        PSQLException error = db.error("SELECT queue.worker_heartbeat('p', 'h', 1, now(), p_subscriptions := '{\"a\": 1}')");
        assertThat(error.getSQLState()).isEqualTo("QU001");
        assertThat(error.getMessage()).contains("p_subscriptions", "{\"a\": 1}");

        error = db.error("SELECT queue.worker_heartbeat('p', 'h', 1, now(), p_interval := interval '1 millisecond')");
        assertThat(error.getMessage()).contains("p_interval", "00:00:00.001");

        error = db.error("SELECT * FROM queue.health(p_max_pending_age := interval '-1 second')");
        assertThat(error.getMessage()).contains("p_max_pending_age");
    }

    // ------------------------------------------------------------------ health

    @Test
    void aLongTransactionIsReportedWithItsBackendAndClearsWhenItEnds() throws Exception {
        int pid;
        try (Connection holder = db.connect()) {
            holder.setAutoCommit(false);
            pid = ((Number) SqlTestDatabase.rows(holder, "SELECT pg_backend_pid() AS pid, txid_current()").get(0).get("pid")).intValue();
            SqlTestDatabase.rows(holder, "SET application_name = 'report-job'");

            List<Map<String, Object>> warnings = health(null, ", p_max_transaction_age := interval '0'").stream()
                    .filter(w -> "long_transaction".equals(w.get("code")) && ((String) w.get("evidence")).contains("\"pid\": " + pid))
                    .toList();
            assertThat(warnings).singleElement().satisfies(w -> {
                assertThat((String) w.get("message")).contains("backend " + pid, "report-job", "holds back the vacuum horizon");
                assertThat((String) w.get("evidence")).contains("\"state\": \"idle in transaction\"", "query_start", "\"age\"");
                assertThat((String) w.get("advice")).contains("pg_terminate_backend(" + pid + ")");
            });
            holder.commit();
        }
        assertThat(health(null, ", p_max_transaction_age := interval '0'"))
                .noneMatch(w -> ((String) w.get("evidence")).contains("\"pid\": " + pid));
        assertThat(health(null, "")).as("a fresh transaction is not long by default")
                .noneMatch(w -> "long_transaction".equals(w.get("code")));
    }

    @Test
    void deadRowsOnTheHotTableAreReportedUntilVacuumed() {
        String ns = newNamespace();
        db.rows("SELECT * FROM queue.push_batch(?, 'bulk', array_fill('{}'::json, ARRAY[300]))", ns);
        db.rows("DELETE FROM queue.messages WHERE namespace = ?", ns);

        await().atMost(PATIENCE).until(() -> codes(null, ", p_max_dead_rows := 100").contains("dead_rows"));
        Map<String, Object> warning = health(null, ", p_max_dead_rows := 100").stream()
                .filter(w -> "dead_rows".equals(w.get("code"))).findFirst().orElseThrow();
        assertThat((String) warning.get("evidence")).contains("dead_rows");
        assertThat((String) warning.get("advice")).contains("VACUUM");

        db.rows("VACUUM queue.messages");
        await().atMost(PATIENCE).until(() -> !codes(null, ", p_max_dead_rows := 100").contains("dead_rows"));
    }

    @Test
    void anOldDueMessageWarnsOfNoSubscriberThenOfFallingBehindAndClearsOnceItRuns() {
        String ns = newNamespace();
        long id = push(ns, "reports", ", p_run_at := now() - interval '1 hour'");
        push(ns, "fresh", "");

        assertThat(health(ns, "")).singleElement().satisfies(w -> {
            assertThat(w.get("code")).isEqualTo("no_subscriber");
            assertThat(w.get("queue")).isEqualTo("reports");
            assertThat((String) w.get("message")).contains(ns + "/reports", "no live worker subscribes");
        });

        heartbeat(ns + "-p", "LISTENING", subscribing(ns, "reports", "w1"));
        assertThat(health(ns, "")).singleElement().satisfies(w -> {
            assertThat(w.get("code")).isEqualTo("falling_behind");
            assertThat((String) w.get("evidence")).contains("\"live_subscribers\": 1");
        });

        db.rows("SELECT * FROM queue.pull(?, 'reports')", ns);
        db.rows("SELECT queue.ack(?, ?)", ns, id);
        assertThat(health(ns, "")).isEmpty();
        db.rows("SELECT queue.worker_stop(?)", ns + "-p");
    }

    @Test
    void aListenerDownIsReportedFromTheWorkersHeartbeatAndClearsWhenItListensAgain() {
        String ns = newNamespace();
        heartbeat(ns + "-p", "POLLING", subscribing(ns, "email", "w1"));
        assertThat(health(ns, "")).singleElement().satisfies(w -> {
            assertThat(w.get("code")).isEqualTo("listener_down");
            assertThat((String) w.get("message")).contains(ns + "-p", "POLLING");
            assertThat((String) w.get("advice")).contains("direct connection");
        });

        heartbeat(ns + "-p", "LISTENING", subscribing(ns, "email", "w1"));
        assertThat(health(ns, "")).isEmpty();
        db.rows("SELECT queue.worker_stop(?)", ns + "-p");
    }

    @Test
    void aWorkerThatStoppedHeartbeatingIsReportedUntilItIsRemoved() {
        String ns = newNamespace();
        heartbeat(ns + "-p", "LISTENING", subscribing(ns, "email", "w1"));
        assertThat(health(ns, "")).isEmpty();

        db.rows("UPDATE queue.workers SET heartbeat_at = now() - interval '1 minute' WHERE id = ?", ns + "-p");
        assertThat(health(ns, "")).singleElement().satisfies(w -> {
            assertThat(w.get("code")).isEqualTo("worker_gone");
            assertThat((String) w.get("message")).contains(ns + "-p", "stopped heartbeating");
        });

        db.rows("SELECT queue.worker_stop(?)", ns + "-p");
        assertThat(health(ns, "")).isEmpty();
    }

    @Test
    void newDeadLettersPastTheBoundAreReportedPerTopicAndClearWhenPurged() {
        String ns = newNamespace();
        for (int i = 0; i < 2; i++) {
            long id = push(ns, "billing", "");
            db.rows("SELECT * FROM queue.pull(?, 'billing')", ns);
            db.rows("SELECT queue.fail(?, ?, 'card declined')", ns, id);
        }
        assertThat(codes(ns, ", p_max_new_dead_letters := 2")).isEmpty();
        assertThat(health(ns, ", p_max_new_dead_letters := 1")).singleElement().satisfies(w -> {
            assertThat(w.get("code")).isEqualTo("dead_letters_growing");
            assertThat(w.get("queue")).isEqualTo("billing");
            assertThat((String) w.get("advice")).contains("dead list --topic billing", "dead redrive --topic billing");
        });

        db.rows("SELECT queue.purge_dead_letters(?, 'billing')", ns);
        assertThat(codes(ns, ", p_max_new_dead_letters := 1")).isEmpty();
    }

    @Test
    void runningMessagesPastTheirLeaseAreReportedUntilRescued() {
        String ns = newNamespace();
        push(ns, "slow", "");
        db.rows("SELECT * FROM queue.pull(?, 'slow', p_visibility_timeout := interval '1 second')", ns);
        assertThat(codes(ns, ", p_lease_grace := interval '0'")).isEmpty();

        await().atMost(PATIENCE).until(() -> codes(ns, ", p_lease_grace := interval '0'").contains("leases_expiring"));
        assertThat(health(ns, ", p_lease_grace := interval '0'")).singleElement()
                .satisfies(w -> assertThat((String) w.get("message")).contains("1 running messages hold a lease that ended"));

        db.rows("SELECT * FROM queue.rescue_expired(?)", ns);
        assertThat(codes(ns, ", p_lease_grace := interval '0'")).isEmpty();
    }

    // ------------------------------------------------------------------ explain

    @Test
    void explainGivesAVerdictForEachStateOfAMessage() {
        String ns = newNamespace();
        long later = push(ns, "email", ", p_delay := interval '1 hour'");
        assertThat((String) explain(ns, later).get("verdict")).startsWith("not due yet: it runs at");

        long due = push(ns, "email", "");
        Map<String, Object> unsubscribed = explain(ns, due);
        assertThat((String) unsubscribed.get("verdict")).contains("no live worker subscribes topic email");
        assertThat(unsubscribed.get("state")).isEqualTo("pending");
        assertThat(unsubscribed.get("live_subscribers")).isEqualTo(0);

        heartbeat(ns + "-p", "LISTENING", subscribing(ns, "email", "mailer-1"));
        assertThat((String) explain(ns, due).get("verdict")).contains("waiting to be claimed by one of 1 live workers");

        db.rows("SELECT * FROM queue.pull(?, 'email', p_worker_id := 'mailer-1')", ns);
        Map<String, Object> running = explain(ns, due);
        assertThat((String) running.get("verdict")).startsWith("running on worker mailer-1 (attempt 1 of 20), lease until");
        assertThat(running.get("worker_alive")).isEqualTo(true);

        db.rows("SELECT queue.worker_stop(?)", ns + "-p");
        assertThat((String) explain(ns, due).get("verdict")).startsWith("held by worker mailer-1, which is not heartbeating");

        db.rows("SELECT queue.nack(?, ?, p_error := 'SMTP timeout', p_delay := interval '10 minutes')", ns, due);
        Map<String, Object> retry = explain(ns, due);
        assertThat((String) retry.get("verdict")).startsWith("waiting for its retry at").contains("attempt 2 of 20",
                "last error: SMTP timeout");
        assertThat(retry.get("last_error")).isEqualTo("SMTP timeout");
        assertThat(String.valueOf(retry.get("attempt_history"))).contains("\"attempt\": 1", "\"error\": \"SMTP timeout\"",
                "\"worker\": \"mailer-1\"");

        long expired = push(ns, "email", "");
        db.rows("UPDATE queue.messages SET run_at = now() - interval '1 second' WHERE id = ?", due);
        db.rows("SELECT * FROM queue.pull_batch(?, 'email', 5, p_worker_id := 'mailer-2', p_visibility_timeout := interval '1 second')", ns);
        await().atMost(PATIENCE).until(() -> ((String) explain(ns, expired).get("verdict")).startsWith("its lease held by worker mailer-2 ended"));

        assertThat((String) explain(ns, 999_999_999L).get("verdict")).startsWith("no message 999999999 in namespace " + ns);
        assertThat(explain(ns, 999_999_999L).get("state")).isEqualTo("unknown");
    }

    @Test
    void explainOfADeadLetterNamesTheMessageHoldingItsUniqueKey() {
        String ns = newNamespace();
        long dead = push(ns, "orders", ", p_unique_key := 'order-7'");
        db.rows("SELECT * FROM queue.pull(?, 'orders')", ns);
        db.rows("SELECT queue.fail(?, ?, 'out of stock')", ns, dead);
        assertThat((String) explain(ns, dead).get("verdict")).startsWith("dead letter since").contains("after 1 of 20 attempts",
                "last error: out of stock").doesNotContain("unique key");

        long holder = push(ns, "orders", ", p_unique_key := 'order-7'");
        Map<String, Object> explained = explain(ns, dead);
        assertThat((String) explained.get("verdict")).contains("a redrive would leave it dead: message " + holder + " holds its unique key");
        assertThat(((Number) explained.get("key_held_by")).longValue()).isEqualTo(holder);
    }

    @Test
    void runScheduleNowFiresTheSchedulesMessageAndRefusesAnUnknownName() {
        String ns = newNamespace();
        db.rows("SELECT queue.create_schedule(?, 'nightly', 'reports', '{\"k\": 1}', p_cron_expression := '0 3 * * *')", ns);
        long id = ((Number) db.value("SELECT queue.run_schedule_now(?, 'nightly')", ns)).longValue();
        assertThat(db.value("SELECT headers ->> 'queue-schedule' FROM queue.messages WHERE id = ?", id)).isEqualTo("nightly");
        assertThat(db.error("SELECT queue.run_schedule_now(?, 'nope')", ns).getSQLState()).isEqualTo("QU003");
    }
}
