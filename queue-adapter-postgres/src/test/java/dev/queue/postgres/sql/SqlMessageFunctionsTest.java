package dev.queue.postgres.sql;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

import java.sql.Connection;
import java.sql.Statement;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** The message functions from every starting state, the lease guards, dedup, stats, dead letters and wake-ups. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlMessageFunctionsTest {

    private static final AtomicInteger NAMESPACES = new AtomicInteger();
    private SqlTestDatabase db;

    @BeforeAll
    void createDatabase() {
        db = SqlTestDatabase.create("sqlmsg");
    }

    @AfterAll
    void dropDatabase() {
        db.close();
    }

    private static String newNamespace() {
        return "ns-" + NAMESPACES.incrementAndGet();
    }

    private long push(String namespace, String queue, String payload) {
        return ((Number) db.value("SELECT queue.push(?, ?, ?::json)", namespace, queue, payload)).longValue();
    }

    private Map<String, Object> pull(String namespace, String queue) {
        List<Map<String, Object>> rows = db.rows("SELECT * FROM queue.pull(?, ?, p_worker_id := 'w')", namespace, queue);
        assertThat(rows).hasSize(1);
        return rows.get(0);
    }

    private String state(String namespace, long id) {
        List<Map<String, Object>> rows = db.rows("SELECT state FROM queue.inspect(?, ?)", namespace, id);
        return rows.isEmpty() ? "missing" : (String) rows.get(0).get("state");
    }

    /** A message of a fresh namespace brought to {@code start}; returns (namespace, id, lease token or null). */
    private Object[] messageIn(String start) {
        String namespace = newNamespace();
        if (start.equals("missing")) {
            return new Object[]{namespace, 987654321L, null};
        }
        long id = push(namespace, "jobs", "{\"n\":1}");
        Long token = null;
        if (!start.equals("pending")) {
            token = (Long) pull(namespace, "jobs").get("lease_token");
        }
        if (start.equals("dead")) {
            assertThat(db.value("SELECT queue.fail(?, ?, 'given up')", namespace, id)).isEqualTo(true);
        }
        return new Object[]{namespace, id, token};
    }

    @ParameterizedTest(name = "{0} on a {1} message -> {2}, then {3}")
    @CsvSource({
            "ack,  pending, false, pending",
            "ack,  running, true,  missing",
            "ack,  dead,    false, dead",
            "ack,  missing, false, missing",
            "nack, pending, false, pending",
            "nack, running, true,  pending",
            "nack, dead,    false, dead",
            "nack, missing, false, missing",
            "fail, pending, false, pending",
            "fail, running, true,  dead",
            "fail, dead,    false, dead",
            "fail, missing, false, missing",
            "extend_visibility, pending, false, pending",
            "extend_visibility, running, true,  running",
            "extend_visibility, dead,    false, dead",
            "extend_visibility, missing, false, missing",
    })
    void settlingWithoutATokenActsOnARunningMessageOnly(String function, String start, boolean expected, String after) {
        Object[] message = messageIn(start);
        String namespace = (String) message[0];
        long id = (Long) message[1];

        assertThat(db.value(settle(function, false), namespace, id)).isEqualTo(expected);
        assertThat(state(namespace, id)).isEqualTo(after);
    }

    private static String settle(String function, boolean withToken) {
        String token = withToken ? ", p_lease_token := ?" : "";
        return switch (function) {
            case "ack" -> "SELECT queue.ack(?, ?" + token + ")";
            case "nack" -> "SELECT queue.nack(?, ?, p_error := 'boom', p_delay := '5 seconds'" + token + ")";
            case "fail" -> "SELECT queue.fail(?, ?, p_error := 'bad'" + token + ")";
            case "extend_visibility" -> "SELECT queue.extend_visibility(?, ?, '10 minutes'" + token + ")";
            default -> throw new IllegalArgumentException(function);
        };
    }

    @ParameterizedTest(name = "{0} of another namespace's running message changes nothing")
    @CsvSource({"ack", "nack", "fail", "extend_visibility"})
    void anotherNamespaceCannotSettleAMessage(String function) {
        Object[] message = messageIn("running");
        long id = (Long) message[1];
        Map<String, String> before = db.footprint();

        assertThat(db.value(settle(function, false), newNamespace(), id)).isEqualTo(false);
        assertThat(db.value(settle(function, true), newNamespace(), id, message[2])).isEqualTo(false);
        assertThat(db.footprint()).isEqualTo(before);
        assertThat(db.rows("SELECT * FROM queue.inspect(?, ?)", newNamespace(), id)).isEmpty();
    }

    @ParameterizedTest(name = "{0} with a stale lease token changes nothing and says false")
    @CsvSource({"ack", "nack", "fail", "extend_visibility"})
    void aLateSettleAfterTheLeasePassedToAnotherWorkerChangesNothing(String function) {
        Object[] message = messageIn("running");
        String namespace = (String) message[0];
        long id = (Long) message[1];
        long staleToken = (Long) message[2];
        db.rows("UPDATE queue.messages SET lease_until = now() - interval '1 second' WHERE id = ?", id);
        Map<String, Object> second = pull(namespace, "jobs");
        assertThat(second.get("id")).isEqualTo(id);
        assertThat(second.get("attempts")).isEqualTo(2);
        long currentToken = (Long) second.get("lease_token");
        assertThat(currentToken).isNotEqualTo(staleToken);
        Map<String, String> before = db.footprint();

        assertThat(db.value(settle(function, true), namespace, id, staleToken)).isEqualTo(false);

        assertThat(db.footprint()).isEqualTo(before);
        assertThat(db.value(settle(function, true), namespace, id, currentToken)).isEqualTo(true);
    }

    @Test
    void pullTakesThePendingMessagesInClaimOrderAndLeasesThem() {
        String ns = newNamespace();
        long later = push(ns, "q", "{\"n\":\"later\"}");
        long urgent = ((Number) db.value("SELECT queue.push(?, 'q', '{}', p_priority := 0)", ns)).longValue();
        db.rows("UPDATE queue.messages SET priority = 5 WHERE id = ?", later);
        long delayed = ((Number) db.value("SELECT queue.push(?, 'q', '{}', p_delay := '1 hour')", ns)).longValue();
        long atFuture = ((Number) db.value("SELECT queue.push(?, 'q', '{}', p_run_at := now() + interval '1 day')", ns)).longValue();

        List<Map<String, Object>> batch = db.rows(
                "SELECT * FROM queue.pull_batch(?, 'q', p_limit := 10, p_worker_id := 'w1', p_visibility_timeout := '2 minutes')", ns);

        assertThat(batch).extracting(r -> r.get("id")).containsExactly(urgent, later);
        Map<String, Object> first = batch.get(0);
        assertThat(first.get("queue")).isEqualTo("q");
        assertThat(first.get("attempts")).isEqualTo(1);
        assertThat(first.get("max_attempts")).isEqualTo(20);
        assertThat(first.get("worker_id")).isEqualTo("w1");
        assertThat(first.get("lease_token")).isEqualTo(batch.get(1).get("lease_token")).isNotEqualTo(0L);
        OffsetDateTime leaseUntil = (OffsetDateTime) first.get("lease_until");
        OffsetDateTime publishedAt = (OffsetDateTime) first.get("published_at");
        assertThat(leaseUntil).isAfter(publishedAt.plusSeconds(100));
        assertThat(state(ns, delayed)).isEqualTo("pending");
        assertThat(state(ns, atFuture)).isEqualTo("pending");
        assertThat(db.rows("SELECT * FROM queue.pull(?, 'q')", ns)).isEmpty();
    }

    @Test
    void pullAnyTakesTheQueuesInTheGivenOrder() {
        String ns = newNamespace();
        long bulk = push(ns, "bulk", "{}");
        long critical = push(ns, "critical", "{}");
        long defaultOne = push(ns, "default", "{}");

        assertThat(db.rows("SELECT * FROM queue.pull_any(?, ARRAY['critical', 'default', 'bulk'], p_limit := 2)", ns))
                .extracting(r -> r.get("id")).containsExactly(critical, defaultOne);
        assertThat(db.rows("SELECT * FROM queue.pull_any(?, ARRAY['critical', 'default', 'bulk'])", ns))
                .extracting(r -> r.get("id")).containsExactly(bulk);
    }

    @Test
    void aUniqueKeyIsHeldWhileItsMessageLivesAndFreedWhenItCompletes() {
        String ns = newNamespace();
        String push = "SELECT queue.push(?, 'sync', '{\"user\": 42}', p_unique_key := 'sync:user:42')";
        Object first = db.value(push, ns);
        assertThat(first).isNotNull();
        assertThat(db.value(push, ns)).isNull();
        assertThat(db.value("SELECT queue.push(?, 'other', '{}', p_unique_key := 'sync:user:42')", ns)).isNotNull();
        assertThat(db.count("SELECT count(*) FROM queue.messages WHERE namespace = ? AND topic = 'sync'", ns)).isEqualTo(1);

        Map<String, Object> running = pull(ns, "sync");
        assertThat(db.value(push, ns)).as("held while running").isNull();
        assertThat(db.value("SELECT queue.ack(?, ?, ?)", ns, running.get("id"), running.get("lease_token"))).isEqualTo(true);
        Object again = db.value(push, ns);
        assertThat(again).as("free once completed").isNotNull().isNotEqualTo(first);
    }

    @Test
    void pushBatchReturnsOneRowPerPayloadInOrderAndDeduplicatesWithinAndAcrossBatches() {
        String ns = newNamespace();
        db.value("SELECT queue.push(?, 'b', '{}', p_unique_key := 'held')", ns);
        List<Map<String, Object>> rows = db.rows("SELECT * FROM queue.push_batch(?, 'b', ARRAY['{\"a\":1}', '{\"a\":2}', '3', '4']::json[],"
                + " p_unique_keys := ARRAY['k', 'k', NULL, 'held'], p_headers := '{\"trace\": \"t-1\"}', p_priority := 3)", ns);

        assertThat(rows).extracting(r -> r.get("ordinal")).containsExactly(1, 2, 3, 4);
        assertThat(rows.get(0).get("id")).isNotNull();
        assertThat(rows.get(1).get("id")).as("a later payload of a key in the batch").isNull();
        assertThat(rows.get(2).get("id")).isNotNull();
        assertThat((Long) rows.get(2).get("id")).isGreaterThan((Long) rows.get(0).get("id"));
        assertThat(rows.get(3).get("id")).as("a key a live message holds").isNull();
        assertThat(db.rows("SELECT payload::text AS p, headers::text AS h, priority FROM queue.messages WHERE namespace = ? AND topic = 'b'"
                + " AND unique_key IS DISTINCT FROM 'held' ORDER BY id", ns))
                .extracting(r -> r.get("p") + " " + r.get("h") + " " + r.get("priority"))
                .containsExactly("{\"a\":1} {\"trace\": \"t-1\"} 3", "3 {\"trace\": \"t-1\"} 3");
        assertThat(db.rows("SELECT * FROM queue.push_batch(?, 'b', ARRAY[]::json[])", ns)).isEmpty();
    }

    @Test
    void ackBatchAcknowledgesTheRunningOnesAndSaysWhichInTheCallersOrder() {
        String ns = newNamespace();
        long a = push(ns, "q", "{}");
        long b = push(ns, "q", "{}");
        long pending = push(ns, "q", "{}");
        List<Map<String, Object>> pulled = db.rows("SELECT * FROM queue.pull_batch(?, 'q', p_limit := 2)", ns);
        long tokenOfA = (Long) pulled.get(0).get("lease_token");

        List<Map<String, Object>> acked = db.rows("SELECT * FROM queue.ack_batch(?, ARRAY[?, ?, ?, 424242]::bigint[])", ns, b, pending, a);

        assertThat(acked).extracting(r -> r.get("id") + "=" + r.get("acked"))
                .containsExactly(b + "=true", pending + "=false", a + "=true", "424242=false");
        assertThat(db.value("SELECT queue.ack(?, ?, ?)", ns, a, tokenOfA)).isEqualTo(false);
        assertThat(db.rows("SELECT * FROM queue.get_stats(?)", ns)).singleElement().satisfies(row -> {
            assertThat(row.get("completed")).isEqualTo(2L);
            assertThat(row.get("pending")).isEqualTo(1L);
        });
    }

    @Test
    void ackBatchWithTokensChecksEachLease() {
        String ns = newNamespace();
        push(ns, "q", "{}");
        push(ns, "q", "{}");
        List<Map<String, Object>> pulled = db.rows("SELECT * FROM queue.pull_batch(?, 'q', p_limit := 2)", ns);
        long id1 = (Long) pulled.get(0).get("id");
        long id2 = (Long) pulled.get(1).get("id");
        long token = (Long) pulled.get(0).get("lease_token");

        assertThat(db.rows("SELECT * FROM queue.ack_batch(?, ARRAY[?, ?]::bigint[], ARRAY[?, ?]::bigint[])", ns, id1, id2, token, token + 1))
                .extracting(r -> r.get("acked")).containsExactly(true, false);
        assertThat(state(ns, id2)).isEqualTo("running");
    }

    @Test
    void nackRetriesAfterTheDelayAndDeadLettersOnTheLastAttempt() {
        String ns = newNamespace();
        long id = ((Number) db.value("SELECT queue.push(?, 'q', '{}', p_max_attempts := 2)", ns)).longValue();
        pull(ns, "q");
        assertThat(db.value("SELECT queue.nack(?, ?, p_error := 'SMTP timeout', p_delay := '0 seconds')", ns, id)).isEqualTo(true);
        assertThat(db.rows("SELECT state, last_error, attempts FROM queue.inspect(?, ?)", ns, id)).singleElement()
                .satisfies(r -> assertThat(r).containsEntry("state", "pending").containsEntry("last_error", "SMTP timeout")
                        .containsEntry("attempts", 1));
        pull(ns, "q");
        assertThat(db.value("SELECT queue.nack(?, ?, p_delay := '1 minute')", ns, id)).isEqualTo(true);
        assertThat(db.rows("SELECT state, last_error, attempts FROM queue.inspect(?, ?)", ns, id)).singleElement()
                .satisfies(r -> assertThat(r).containsEntry("state", "dead").containsEntry("last_error", "no reason given")
                        .containsEntry("attempts", 2));
    }

    @Test
    void aNackDelayKeepsTheMessageFromPullsUntilDue() {
        String ns = newNamespace();
        long id = push(ns, "q", "{}");
        pull(ns, "q");
        db.value("SELECT queue.nack(?, ?, p_delay := '1 hour')", ns, id);
        assertThat(db.rows("SELECT * FROM queue.pull(?, 'q')", ns)).isEmpty();
        assertThat((OffsetDateTime) db.value("SELECT run_at FROM queue.inspect(?, ?)", ns, id))
                .isAfter(OffsetDateTime.now().plusMinutes(50));
    }

    @Test
    void extendVisibilityMovesTheLeaseEndToNowPlusTheExtension() {
        String ns = newNamespace();
        long id = push(ns, "q", "{}");
        Map<String, Object> pulled = db.rows("SELECT * FROM queue.pull(?, 'q', p_visibility_timeout := '5 seconds')", ns).get(0);
        assertThat(db.value("SELECT queue.extend_visibility(?, ?, '10 minutes', p_lease_token := ?)", ns, id, pulled.get("lease_token")))
                .isEqualTo(true);
        assertThat((OffsetDateTime) db.value("SELECT lease_until FROM queue.inspect(?, ?)", ns, id))
                .isAfter(((OffsetDateTime) pulled.get("lease_until")).plusMinutes(9));
    }

    @Test
    void aPullRescuesExpiredLeasesBackToPendingOrToTheDeadLettersOnTheLastAttempt() {
        String ns = newNamespace();
        long retried = ((Number) db.value("SELECT queue.push(?, 'a', '{}', p_max_attempts := 2)", ns)).longValue();
        long exhausted = ((Number) db.value("SELECT queue.push(?, 'b', '{}', p_max_attempts := 1)", ns)).longValue();
        pull(ns, "a");
        pull(ns, "b");
        db.rows("UPDATE queue.messages SET lease_until = now() - interval '1 second' WHERE namespace = ?", ns);

        Map<String, Object> again = pull(ns, "a");

        assertThat(again.get("id")).isEqualTo(retried);
        assertThat(again.get("attempts")).isEqualTo(2);
        assertThat(db.value("SELECT last_error FROM queue.inspect(?, ?)", ns, retried)).isEqualTo("lease expired");
        assertThat(db.rows("SELECT state, last_error FROM queue.inspect(?, ?)", ns, exhausted)).singleElement()
                .satisfies(r -> assertThat(r).containsEntry("state", "dead").containsEntry("last_error", "lease expired on its last attempt"));
    }

    @Test
    void rescueExpiredReportsWhatItDid() {
        String ns = newNamespace();
        push(ns, "a", "{}");
        db.value("SELECT queue.push(?, 'b', '{}', p_max_attempts := 1)", ns);
        pull(ns, "a");
        pull(ns, "b");
        db.rows("UPDATE queue.messages SET lease_until = now() - interval '1 second' WHERE namespace = ?", ns);

        assertThat(db.rows("SELECT * FROM queue.rescue_expired(?)", ns)).singleElement()
                .satisfies(r -> assertThat(r).containsEntry("requeued", 1L).containsEntry("dead_lettered", 1L));
        assertThat(db.rows("SELECT * FROM queue.rescue_expired(?)", ns)).singleElement()
                .satisfies(r -> assertThat(r).containsEntry("requeued", 0L).containsEntry("dead_lettered", 0L));
    }

    @Test
    void statsCountEveryStatePerQueueAndForTheNamespace() {
        String ns = newNamespace();
        push(ns, "a", "{}");
        push(ns, "a", "{}");
        long running = push(ns, "b", "{}");
        long done = push(ns, "c", "{}");
        long dead = push(ns, "c", "{}");
        pull(ns, "b");
        Map<String, Object> c1 = pull(ns, "c");
        db.value("SELECT queue.ack(?, ?)", ns, c1.get("id"));
        pull(ns, "c");
        db.value("SELECT queue.fail(?, ?)", ns, dead);
        assertThat(done).isEqualTo(c1.get("id"));
        assertThat(running).isPositive();

        assertThat(db.rows("SELECT * FROM queue.get_queue_stats(?)", ns)).extracting(r -> r.values().toString()).containsExactly(
                "[a, 2, 0, 0, 0, 2]", "[b, 0, 1, 0, 0, 1]", "[c, 0, 0, 1, 1, 2]");
        assertThat(db.rows("SELECT * FROM queue.get_stats(?)", ns)).extracting(r -> r.values().toString())
                .containsExactly("[5, 2, 1, 1, 1, 3]");
        assertThat(db.rows("SELECT * FROM queue.get_stats(?)", newNamespace())).extracting(r -> r.values().toString())
                .containsExactly("[0, 0, 0, 0, 0, 0]");
    }

    @Test
    void inspectShowsPendingRunningAndDeadMessagesOfItsNamespaceOnly() {
        String ns = newNamespace();
        long id = ((Number) db.value("SELECT queue.push(?, 'q', '{\"k\": [1, 2]}', p_unique_key := 'u', p_headers := '{\"h\": \"v\"}',"
                + " p_priority := 4, p_max_attempts := 7)", ns)).longValue();
        assertThat(db.rows("SELECT * FROM queue.inspect(?, ?)", ns, id)).singleElement().satisfies(r -> {
            assertThat(r).containsEntry("queue", "q").containsEntry("state", "pending").containsEntry("priority", 4)
                    .containsEntry("max_attempts", 7).containsEntry("unique_key", "u").containsEntry("attempts", 0);
            assertThat(r.get("payload").toString()).isEqualTo("{\"k\": [1, 2]}");
            assertThat(r.get("headers").toString()).isEqualTo("{\"h\": \"v\"}");
        });
        pull(ns, "q");
        assertThat(db.value("SELECT worker_id FROM queue.inspect(?, ?)", ns, id)).isEqualTo("w");
        db.value("SELECT queue.fail(?, ?, 'broken')", ns, id);
        assertThat(db.rows("SELECT state, last_error, failed_at IS NOT NULL AS failed FROM queue.inspect(?, ?)", ns, id))
                .extracting(r -> r.values().toString()).containsExactly("[dead, broken, true]");
        assertThat(db.rows("SELECT * FROM queue.inspect(?, ?)", newNamespace(), id)).isEmpty();
    }

    @Test
    void deadLettersAreListedPagedByQueueRedrivenAndPurgedInBoundedBatches() {
        String ns = newNamespace();
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ids.add(push(ns, i < 3 ? "x" : "y", "{\"i\":" + i + "}"));
        }
        for (int i = 0; i < 5; i++) {
            Map<String, Object> m = pull(ns, i < 3 ? "x" : "y");
            db.value("SELECT queue.fail(?, ?, 'e" + i + "')", ns, m.get("id"));
        }
        assertThat(db.rows("SELECT id FROM queue.list_dead_letters(?, p_limit := 2)", ns)).extracting(r -> r.get("id"))
                .containsExactly(ids.get(0), ids.get(1));
        assertThat(db.rows("SELECT id FROM queue.list_dead_letters(?, p_after_id := ?, p_limit := 2)", ns, ids.get(1)))
                .extracting(r -> r.get("id")).containsExactly(ids.get(2), ids.get(3));
        assertThat(db.rows("SELECT id, queue, last_error FROM queue.list_dead_letters(?, p_queue := 'y')", ns))
                .extracting(r -> r.values().toString()).containsExactly("[" + ids.get(3) + ", y, e3]", "[" + ids.get(4) + ", y, e4]");

        // a redriven message keeps its id, is due now with attempts from zero and its last error
        assertThat(db.rows("SELECT * FROM queue.redrive_dead_letters(?, p_ids := ARRAY[?]::bigint[])", ns, ids.get(3)))
                .extracting(r -> r.values().toString()).containsExactly("[1, 1, " + ids.get(3) + "]");
        assertThat(db.rows("SELECT state, attempts, last_error FROM queue.inspect(?, ?)", ns, ids.get(3)))
                .extracting(r -> r.values().toString()).containsExactly("[pending, 0, e3]");

        // a whole queue, two per call, paging by last_id
        List<String> batches = new ArrayList<>();
        long after = 0;
        while (true) {
            Map<String, Object> batch = db.rows("SELECT * FROM queue.redrive_dead_letters(?, p_queue := 'x', p_after_id := ?, p_limit := 2)",
                    ns, after).get(0);
            batches.add(batch.values().toString());
            if ((Integer) batch.get("examined") < 2) {
                break;
            }
            after = (Long) batch.get("last_id");
        }
        assertThat(batches).containsExactly("[2, 2, " + ids.get(1) + "]", "[1, 1, " + ids.get(2) + "]");
        assertThat(db.count("SELECT count(*) FROM queue.list_dead_letters(?)", ns)).isEqualTo(1);

        assertThat(db.value("SELECT queue.purge_dead_letters(?, p_ids := ARRAY[?]::bigint[])", ns, ids.get(0))).isEqualTo(0);
        assertThat(db.value("SELECT queue.purge_dead_letters(?, p_queue := 'y', p_limit := 1)", ns)).isEqualTo(1);
        assertThat(db.count("SELECT count(*) FROM queue.list_dead_letters(?)", ns)).isZero();
        assertThat(db.rows("SELECT action, subject, count FROM queue.audit_log WHERE namespace = ? ORDER BY id", ns))
                .extracting(r -> r.values().toString())
                .containsExactly("[redrive_dead_letters, null, 1]", "[redrive_dead_letters, x, 2]", "[redrive_dead_letters, x, 1]",
                        "[purge_dead_letters, y, 1]");
    }

    @Test
    void aDeadLetterWhoseUniqueKeyIsHeldStaysDead() {
        String ns = newNamespace();
        long first = ((Number) db.value("SELECT queue.push(?, 'q', '{}', p_unique_key := 'k')", ns)).longValue();
        pull(ns, "q");
        db.value("SELECT queue.fail(?, ?)", ns, first);
        long holder = ((Number) db.value("SELECT queue.push(?, 'q', '{}', p_unique_key := 'k')", ns)).longValue();

        assertThat(db.rows("SELECT * FROM queue.redrive_dead_letters(?, p_queue := 'q')", ns))
                .extracting(r -> r.values().toString()).containsExactly("[0, 1, " + first + "]");
        assertThat(state(ns, first)).isEqualTo("dead");
        assertThat(state(ns, holder)).isEqualTo("pending");
    }

    @Test
    void purgeWithoutSelectionTakesTheWholeNamespaceInBatches() {
        String ns = newNamespace();
        for (int i = 0; i < 3; i++) {
            long id = push(ns, "q" + i, "{}");
            pull(ns, "q" + i);
            db.value("SELECT queue.fail(?, ?)", ns, id);
        }
        String other = newNamespace();
        long kept = push(other, "q", "{}");
        pull(other, "q");
        db.value("SELECT queue.fail(?, ?)", other, kept);

        assertThat(db.value("SELECT queue.purge_dead_letters(?, p_limit := 2)", ns)).isEqualTo(2);
        assertThat(db.value("SELECT queue.purge_dead_letters(?, p_limit := 2)", ns)).isEqualTo(1);
        assertThat(db.value("SELECT queue.purge_dead_letters(?, p_limit := 2)", ns)).isEqualTo(0);
        assertThat(state(other, kept)).isEqualTo("dead");
    }

    @Test
    void theQueuePolicyGivesDefaultsToSqlCallers() {
        String ns = newNamespace();
        assertThat(db.rows("SELECT max_attempts, backoff_base::text, backoff_cap::text, backoff_multiplier, backoff_jitter, visibility_timeout::text,"
                + " max_payload_bytes, archive_completed FROM queue.get_queue_policy(?, 'q')", ns))
                .extracting(r -> r.values().toString()).containsExactly("[20, 00:00:01, 01:00:00, 2.0, 0.2, 00:00:30, 1048576, false]");
        db.rows("SELECT * FROM queue.set_queue_policy(?, '*', p_max_attempts := 3, p_visibility_timeout := '2 minutes')", ns);
        db.rows("SELECT * FROM queue.set_queue_policy(?, 'q', p_max_attempts := 5, p_archive_completed := true)", ns);

        long q = push(ns, "q", "{\"archived\": true}");
        long other = push(ns, "other", "{}");
        assertThat(db.value("SELECT max_attempts FROM queue.inspect(?, ?)", ns, q)).isEqualTo(5);
        assertThat(db.value("SELECT max_attempts FROM queue.inspect(?, ?)", ns, other)).isEqualTo(3);
        Map<String, Object> pulled = pull(ns, "other");
        assertThat((OffsetDateTime) pulled.get("lease_until")).isAfter(((OffsetDateTime) pulled.get("published_at")).plusSeconds(100));

        Map<String, Object> pulledQ = pull(ns, "q");
        db.value("SELECT queue.ack(?, ?)", ns, pulledQ.get("id"));
        db.value("SELECT queue.ack(?, ?)", ns, pulled.get("id"));
        assertThat(db.rows("SELECT id, payload::text AS p FROM queue.completed_messages WHERE namespace = ?", ns))
                .extracting(r -> r.values().toString()).containsExactly("[" + q + ", {\"archived\": true}]");
        assertThat(db.value("SELECT queue.delete_queue_policy(?, 'q')", ns)).isEqualTo(true);
        assertThat(db.value("SELECT max_attempts FROM queue.get_queue_policy(?, 'q')", ns)).isEqualTo(3);
    }

    @Test
    void pushNotifiesTheJavaChannelUnlessTheCallerSuppressesIt() throws Exception {
        String ns = newNamespace();
        try (Connection listener = db.connect(); Connection publisher = db.connect()) {
            try (Statement statement = listener.createStatement()) {
                statement.execute("LISTEN \"queue_wakeup\"");
            }
            SqlTestDatabase.rows(publisher, "SELECT queue.push(?, 'quiet', '{}', p_notify := false)", ns);
            publisher.setAutoCommit(false);
            SqlTestDatabase.rows(publisher, "SELECT set_config('queue.notify', 'off', true)");
            SqlTestDatabase.rows(publisher, "SELECT queue.push(?, 'quiet2', '{}')", ns);
            publisher.commit();
            publisher.setAutoCommit(true);
            SqlTestDatabase.rows(publisher, "SELECT queue.push(?, 'loud', '{}')", ns);

            // notifications arrive in commit order: the first one is the loud push's
            PGNotification[] received = listener.unwrap(PGConnection.class).getNotifications(30_000);
            assertThat(received).isNotEmpty();
            assertThat(received[0].getName()).isEqualTo("queue_wakeup");
            assertThat(received[0].getParameter()).isEqualTo(ns + "/loud");
        }
    }

    @Test
    void aNackWithoutDelayWaitsTheQueuePolicysBackoffForTheAttempt() {
        String ns = newNamespace();
        db.rows("SELECT * FROM queue.set_queue_policy(?, 'q', p_backoff_base := '10 seconds', p_backoff_cap := '1 hour',"
                + " p_backoff_multiplier := 3, p_backoff_jitter := 0)", ns);
        long id = push(ns, "q", "{}");
        pull(ns, "q");
        db.rows("SELECT queue.nack(?, ?, p_delay := '0 seconds')", ns, id);
        pull(ns, "q");

        Map<String, Object> nacked = db.rows("SELECT queue.nack(?, ?, 'again') AS nacked, statement_timestamp() AS at", ns, id).get(0);

        assertThat(nacked.get("nacked")).isEqualTo(true);
        // attempt 2 failed: 10 s * 3^(2-1)
        assertThat(db.value("SELECT run_at FROM queue.inspect(?, ?)", ns, id)).isEqualTo(((OffsetDateTime) nacked.get("at")).plusSeconds(30));
    }
}
