package dev.queue.postgres.sql;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.postgresql.util.PSQLException;

import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The ordering keys of migration 22 from SQL: push and push_batch with keys, the line of a key through pull, ack,
 * fail, cancel, redrive and purge under both choices of set_queue_ordering, its audit rows, bad input changing
 * nothing, the refusal of a stricter isolation level, and two sessions publishing one key at once.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlOrderingKeyTest {

    private static final AtomicInteger NAMESPACES = new AtomicInteger();
    private SqlTestDatabase db;

    @BeforeAll
    void createDatabase() {
        db = SqlTestDatabase.create("sqlorder");
    }

    @AfterAll
    void dropDatabase() {
        db.close();
    }

    private static String newNamespace() {
        return "order-" + NAMESPACES.incrementAndGet();
    }

    private long push(String namespace, String key) {
        return ((Number) db.value("SELECT queue.push(?, 'jobs', '{}'::json, p_ordering_key := ?)", namespace, key))
                .longValue();
    }

    private List<Long> pulled(String namespace) {
        return db.rows("SELECT id FROM queue.pull_batch(?, 'jobs', 100, p_worker_id := 'w')", namespace).stream()
                .map(r -> ((Number) r.get("id")).longValue()).toList();
    }

    private String state(String namespace, long id) {
        List<Map<String, Object>> rows = db.rows("SELECT state FROM queue.inspect(?, ?)", namespace, id);
        return rows.isEmpty() ? "missing" : (String) rows.get(0).get("state");
    }

    @Test
    void aKeyRunsOneAtATimeInPushOrder() {
        String ns = newNamespace();
        long first = push(ns, "k");
        long second = push(ns, "k");
        long other = push(ns, "other");

        assertThat(state(ns, second)).isEqualTo("waiting");
        assertThat(db.value("SELECT ordering_key FROM queue.inspect(?, ?)", ns, second)).isEqualTo("k");
        assertThat((String) db.value("SELECT verdict FROM queue.explain(?, ?)", ns, second))
                .isEqualTo("waiting behind message " + first + " (pending) of its ordering key k: it runs once the "
                        + "earlier messages of its key have left");
        assertThat(pulled(ns)).containsExactlyInAnyOrder(first, other);
        assertThat(pulled(ns)).isEmpty();
        assertThat(db.rows("SELECT * FROM queue.get_queue_stats(?)", ns).get(0))
                .containsEntry("pending", 1L).containsEntry("running", 2L);

        assertThat(db.value("SELECT queue.ack(?, ?)", ns, first)).isEqualTo(true);
        assertThat(state(ns, second)).isEqualTo("pending");
        assertThat(pulled(ns)).containsExactly(second);
    }

    @Test
    void everyPullReturnsTheOrderingKeyAsItsLastColumn() {
        String ns = newNamespace();
        long keyed = push(ns, "customer-1");
        long unkeyed = ((Number) db.value("SELECT queue.push(?, 'jobs', '{}'::json)", ns)).longValue();
        long other = ((Number) db.value("SELECT queue.push(?, 'mail', '{}'::json, p_ordering_key := 'customer-2')", ns))
                .longValue();
        long batched = push(ns, "customer-3");

        List<Map<String, Object>> one = db.rows("SELECT * FROM queue.pull(?, 'jobs')", ns);
        assertThat(one).hasSize(1);
        assertThat(List.copyOf(one.get(0).keySet())).containsExactly("id", "queue", "payload", "headers", "priority",
                "attempts", "max_attempts", "lease_token", "lease_until", "published_at", "run_at", "worker_id",
                "unique_key", "published_by", "ordering_key");
        assertThat(one.get(0)).containsEntry("id", keyed).containsEntry("ordering_key", "customer-1");

        assertThat(db.rows("SELECT id, ordering_key FROM queue.pull_any(?, ARRAY['mail', 'jobs'], 2)", ns))
                .extracting(r -> r.get("id") + " " + r.get("ordering_key"))
                .containsExactly(other + " customer-2", unkeyed + " null");
        assertThat(db.rows("SELECT id, ordering_key FROM queue.pull_batch(?, 'jobs', 10)", ns))
                .extracting(r -> r.get("id") + " " + r.get("ordering_key"))
                .containsExactly(batched + " customer-3");
    }

    @Test
    void aBatchKeepsItsOrderWithinEachKey() {
        String ns = newNamespace();
        List<Long> ids = db.rows("SELECT id FROM queue.push_batch(?, 'jobs', ARRAY['{}', '{}', '{}', '{}']::json[], "
                        + "p_ordering_keys := ARRAY['a', 'b', 'a', NULL])", ns).stream()
                .map(r -> ((Number) r.get("id")).longValue()).toList();

        assertThat(pulled(ns)).containsExactlyInAnyOrder(ids.get(0), ids.get(1), ids.get(3));
        db.value("SELECT queue.ack(?, ?)", ns, ids.get(0));
        assertThat(pulled(ns)).containsExactly(ids.get(2));
    }

    @Test
    void behindADeadLetterTheKeyWaitsUntilRedrivenOrPurgedOrGoesOnByChoice() {
        String ns = newNamespace();
        assertThat(db.value("SELECT queue.get_queue_ordering(?, 'jobs')", ns)).isEqualTo("wait");
        long first = push(ns, "k");
        long second = push(ns, "k");
        long third = push(ns, "k");
        assertThat(pulled(ns)).containsExactly(first);
        assertThat(db.value("SELECT queue.fail(?, ?, 'bad')", ns, first)).isEqualTo(true);
        assertThat(pulled(ns)).isEmpty();
        assertThat((String) db.value("SELECT verdict FROM queue.explain(?, ?)", ns, second))
                .startsWith("waiting behind message " + first + " (a dead letter) of its ordering key k");

        // redriven, it comes before the ones behind it
        assertThat(db.rows("SELECT * FROM queue.redrive_dead_letters(?, p_ids := ARRAY[?]::bigint[])", ns, first)
                .get(0)).containsEntry("redriven", 1);
        assertThat(pulled(ns)).containsExactly(first);
        db.value("SELECT queue.fail(?, ?, 'bad again')", ns, first);
        assertThat(pulled(ns)).isEmpty();

        // purged, the next goes on
        assertThat(db.value("SELECT queue.purge_dead_letters(?, p_ids := ARRAY[?]::bigint[])", ns, first))
                .isEqualTo(1);
        assertThat(pulled(ns)).containsExactly(second);
        db.value("SELECT queue.fail(?, ?, 'bad')", ns, second);
        assertThat(pulled(ns)).isEmpty();

        // the choice: continue lets the waiting key go on at once, and is recorded
        db.value("SELECT queue.set_actor('ops')");
        assertThat(db.value("SELECT queue.set_queue_ordering(?, 'jobs', 'continue')", ns)).isEqualTo(true);
        assertThat(db.value("SELECT queue.set_queue_ordering(?, 'jobs', 'continue')", ns)).isEqualTo(false);
        assertThat(db.value("SELECT queue.get_queue_ordering(?, 'jobs')", ns)).isEqualTo("continue");
        assertThat(pulled(ns)).containsExactly(third);
        assertThat(db.rows("SELECT action, subject FROM queue.list_audit_log(?)", ns))
                .contains(Map.of("action", "ordering_continue", "subject", "jobs"));
    }

    @Test
    void cancellingAWaitingMessageOrTheHead() {
        String ns = newNamespace();
        long first = push(ns, "k");
        long second = push(ns, "k");
        long third = push(ns, "k");

        assertThat(db.value("SELECT queue.cancel(?, ?)", ns, second)).isEqualTo(true);
        assertThat(state(ns, second)).isEqualTo("missing");
        assertThat(db.value("SELECT queue.cancel(?, ?)", ns, first)).isEqualTo(true);
        assertThat(pulled(ns)).containsExactly(third);
    }

    @Test
    void badInputIsRefusedAndChangesNothing() {
        String ns = newNamespace();
        push(ns, "k");
        Map<String, String> before = db.footprint();
        for (String bad : List.of("", "x".repeat(256), "tab\there")) {
            PSQLException error = db.error("SELECT queue.push(?, 'jobs', '{}'::json, p_ordering_key := ?)", ns, bad);
            assertThat(error.getSQLState()).isEqualTo("QU001");
            assertThat(error.getMessage()).contains("p_ordering_key");
        }
        PSQLException count = db.error("SELECT * FROM queue.push_batch(?, 'jobs', ARRAY['{}', '{}']::json[], "
                + "p_ordering_keys := ARRAY['a'])", ns);
        assertThat(count.getSQLState()).isEqualTo("QU001");
        assertThat(count.getMessage()).contains("p_ordering_keys");
        PSQLException element = db.error("SELECT * FROM queue.push_batch(?, 'jobs', ARRAY['{}', '{}']::json[], "
                + "p_ordering_keys := ARRAY['a', ''])", ns);
        assertThat(element.getMessage()).contains("p_ordering_keys[2]");
        PSQLException choice = db.error("SELECT queue.set_queue_ordering(?, 'jobs', 'skip')", ns);
        assertThat(choice.getSQLState()).isEqualTo("QU001");
        assertThat(choice.getMessage()).contains("p_behind_dead_letter").contains("skip");
        assertThat(db.error("SELECT queue.set_queue_ordering(?, 'bad queue', 'wait')", ns).getSQLState())
                .isEqualTo("QU001");
        assertThat(db.footprint()).isEqualTo(before);
    }

    @Test
    void aStricterIsolationLevelIsRefusedForKeyedWork() throws SQLException {
        String ns = newNamespace();
        try (Connection connection = db.connect()) {
            connection.setAutoCommit(false);
            connection.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            PSQLException error = catchThrowableOfType(() -> SqlTestDatabase.rows(connection,
                    "SELECT queue.push(?, 'jobs', '{}'::json, p_ordering_key := 'k')", ns), PSQLException.class);
            assertThat(error.getSQLState()).as("the error of a keyed push in REPEATABLE READ").isEqualTo("QU006");
            assertThat(error.getMessage()).contains("REPEATABLE READ");
            connection.rollback();
            // without a key the push is as before
            SqlTestDatabase.rows(connection, "SELECT queue.push(?, 'jobs', '{}'::json)", ns);
            connection.commit();
        }
    }

    @Test
    void theSchemaHoldsAtMostOneHeadPerKey() {
        String ns = newNamespace();
        long first = push(ns, "k");
        long second = push(ns, "k");
        PSQLException error = db.error("UPDATE queue.messages SET state = 'pending' WHERE id = ?", second);
        assertThat(error.getSQLState()).isEqualTo("23505");
        assertThat(state(ns, first)).isEqualTo("pending");
    }

    /**
     * Two sessions push to one key, the first in an open transaction: the second waits for it, then comes after it
     * (a higher id, waiting); when the first rolls back instead, the second is the head.
     */
    @Test
    void twoSessionsPushingOneKeyAreOrderedByCommit() throws Exception {
        for (boolean commit : new boolean[] {true, false}) {
            String ns = newNamespace();
            try (Connection first = db.connect()) {
                first.setAutoCommit(false);
                long firstId = ((Number) SqlTestDatabase.rows(first,
                        "SELECT queue.push(?, 'jobs', '{}'::json, p_ordering_key := 'k') AS id", ns).get(0).get("id"))
                        .longValue();
                CompletableFuture<Long> second = CompletableFuture.supplyAsync(() -> push(ns, "k"));
                Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> db.count(
                        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'"
                                + " AND query LIKE '%p_ordering_key%'") == 1);
                assertThat(second).isNotDone();
                if (commit) {
                    first.commit();
                } else {
                    first.rollback();
                }
                long secondId = second.get(30, TimeUnit.SECONDS);
                assertThat(secondId).isGreaterThan(firstId);
                if (commit) {
                    assertThat(state(ns, firstId)).isEqualTo("pending");
                    assertThat(state(ns, secondId)).isEqualTo("waiting");
                } else {
                    assertThat(state(ns, secondId)).isEqualTo("pending");
                }
                assertThat(db.count("SELECT count(*) FROM queue.messages WHERE namespace = ? AND ordering_key = 'k' "
                        + "AND state <> 'waiting'", ns)).isEqualTo(1);
            }
        }
    }

    private long pushIn(Connection connection, String namespace, String key) throws SQLException {
        return ((Number) SqlTestDatabase.rows(connection,
                "SELECT queue.push(?, 'jobs', '{}'::json, p_ordering_key := ?) AS id", namespace, key).get(0).get("id"))
                .longValue();
    }

    private long sessionsWaitingOnRows(String query) {
        return db.count("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                + " AND wait_event IN ('transactionid', 'tuple') AND query LIKE ?", "%" + query + "%");
    }

    /**
     * A publish left open behind a key's waiting message holds back nothing that settles: the head is claimed and
     * acknowledged, its successor promoted, while the publish is still open; the published message comes after them.
     */
    @Test
    void anOpenPublishBehindAWaitingMessageDoesNotHoldUpTheHead() throws Exception {
        String ns = newNamespace();
        long head = push(ns, "k");
        long next = push(ns, "k");
        try (Connection publisher = db.connect()) {
            publisher.setAutoCommit(false);
            long published = pushIn(publisher, ns, "k");
            assertThat(CompletableFuture.supplyAsync(() -> pulled(ns)).get(30, TimeUnit.SECONDS)).containsExactly(head);
            assertThat(CompletableFuture.supplyAsync(() -> db.value("SELECT queue.ack(?, ?)", ns, head))
                    .get(30, TimeUnit.SECONDS)).isEqualTo(true);
            assertThat(state(ns, next)).isEqualTo("pending");
            publisher.commit();
            assertThat(state(ns, published)).isEqualTo("waiting");
            assertThat(published).isGreaterThan(next);
        }
    }

    /**
     * When the key's last message is its head, a publish and the head's settling meet at that row, in either order:
     * whichever comes second waits for the first to commit, and the published message is promoted exactly once, by
     * the settling or by being published after it.
     */
    @Test
    void aPublishAndTheSettlingOfTheKeysLastMessageMeetAtItsRow() throws Exception {
        // the publish first: the acknowledgement waits for its commit, then promotes the published message
        String ns = newNamespace();
        long head = push(ns, "k");
        assertThat(pulled(ns)).containsExactly(head);
        try (Connection publisher = db.connect()) {
            publisher.setAutoCommit(false);
            long published = pushIn(publisher, ns, "k");
            CompletableFuture<Object> ack = CompletableFuture.supplyAsync(() -> db.value("SELECT queue.ack(?, ?)", ns, head));
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> sessionsWaitingOnRows("queue.ack(") == 1);
            assertThat(ack).isNotDone();
            publisher.commit();
            assertThat(ack.get(30, TimeUnit.SECONDS)).isEqualTo(true);
            assertThat(state(ns, published)).isEqualTo("pending");
        }

        // the settling first: the publish waits for its commit, then finds the key empty and becomes its head
        for (String settle : new String[] {"SELECT queue.ack(?, ?)", "SELECT queue.fail(?, ?, 'boom')"}) {
            String other = newNamespace();
            db.value("SELECT queue.set_queue_ordering(?, 'jobs', 'continue')", other);
            long first = push(other, "k");
            assertThat(pulled(other)).containsExactly(first);
            try (Connection settler = db.connect()) {
                settler.setAutoCommit(false);
                assertThat(SqlTestDatabase.rows(settler, settle, other, first)).hasSize(1);
                CompletableFuture<Long> publish = CompletableFuture.supplyAsync(() -> push(other, "k"));
                Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> sessionsWaitingOnRows("p_ordering_key") == 1);
                assertThat(publish).isNotDone();
                settler.commit();
                long published = publish.get(30, TimeUnit.SECONDS);
                assertThat(state(other, published)).as(settle).isEqualTo("pending");
            }
        }
    }

    /** A publish's lock on the key's pending head does not stop a claim of it. */
    @Test
    void anOpenPublishDoesNotStopTheClaimOfTheHead() throws Exception {
        String ns = newNamespace();
        long head = push(ns, "k");
        try (Connection publisher = db.connect()) {
            publisher.setAutoCommit(false);
            long published = pushIn(publisher, ns, "k");
            assertThat(CompletableFuture.supplyAsync(() -> pulled(ns)).get(30, TimeUnit.SECONDS)).containsExactly(head);
            publisher.commit();
            assertThat(state(ns, published)).isEqualTo("waiting");
        }
    }

    @Test
    void aPromotionSaysWhereInTheClaimOrderTheKeysNextMessageLanded() throws SQLException {
        String ns = newNamespace();
        long first = push(ns, "k");
        long second = push(ns, "k");
        long otherFirst = push(ns, "m");
        long otherSecond = push(ns, "m");
        assertThat(pulled(ns)).containsExactlyInAnyOrder(first, otherFirst);
        try (Connection listener = db.connect(); Statement statement = listener.createStatement()) {
            statement.execute("LISTEN \"queue_wakeup\"");

            assertThat(db.rows("SELECT * FROM queue.ack_batch(?, ARRAY[?, ?]::bigint[])", ns, first, otherFirst)).isNotEmpty();

            List<String> payloads = new ArrayList<>();
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
                PGNotification[] got = listener.unwrap(PGConnection.class).getNotifications(100);
                if (got != null) {
                    for (PGNotification notification : got) {
                        payloads.add(notification.getParameter());
                    }
                }
                return payloads.size() >= 2;
            });
            Map<String, Object> earliest = db.rows("SELECT priority, (extract(epoch FROM run_at) * 1000000)::bigint AS due,"
                    + " id FROM queue.messages WHERE namespace = ? AND id IN (?, ?) ORDER BY priority, run_at, id LIMIT 1",
                    ns, second, otherSecond).get(0);
            assertThat(payloads).as("one wake-up and one place for the topic, the first promoted in claim order")
                    .containsExactlyInAnyOrder(ns + "/jobs", "promoted:" + ns + "/jobs/" + earliest.get("priority") + "/"
                            + earliest.get("due") + "/" + earliest.get("id"));
        }
        assertThat(state(ns, second)).isEqualTo("pending");
        assertThat(state(ns, otherSecond)).isEqualTo("pending");
    }
}
