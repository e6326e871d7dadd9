package dev.queue.postgres.sql;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.postgresql.util.PSQLException;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The flow control functions of migration 14 (pause_queue, resume_queue, list_paused_queues, cancel, snooze) from
 * every starting state, with their audit rows, a pause waiting for a claim under way, bad input, and the tenant gate.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlFlowControlTest {

    private static final AtomicInteger NAMESPACES = new AtomicInteger();
    private SqlTenantRoles roles;
    private SqlTestDatabase db;

    @BeforeAll
    void createDatabase() {
        roles = SqlTenantRoles.create("sqlflow");
        db = roles.db;
    }

    @AfterAll
    void dropDatabase() {
        roles.close();
    }

    private static String newNamespace() {
        return "flow-" + NAMESPACES.incrementAndGet();
    }

    private long push(String namespace, String queue) {
        return ((Number) db.value("SELECT queue.push(?, ?, '{}'::json)", namespace, queue)).longValue();
    }

    private List<Map<String, Object>> pull(String namespace, String queue) {
        return db.rows("SELECT * FROM queue.pull(?, ?, p_worker_id := 'w')", namespace, queue);
    }

    private String state(String namespace, long id) {
        List<Map<String, Object>> rows = db.rows("SELECT state FROM queue.inspect(?, ?)", namespace, id);
        return rows.isEmpty() ? "missing" : (String) rows.get(0).get("state");
    }

    private List<Map<String, Object>> audit(String namespace) {
        return db.rows("SELECT actor, action, subject, ids, count FROM queue.list_audit_log(?)", namespace);
    }

    /** A message of a fresh namespace brought to {@code start}; returns (namespace, id, lease token or null). */
    private Object[] messageIn(String start) {
        String namespace = newNamespace();
        if (start.equals("missing")) {
            return new Object[] {namespace, 987654321L, null};
        }
        long id = push(namespace, "jobs");
        Long token = null;
        if (!start.equals("pending")) {
            token = (Long) pull(namespace, "jobs").get(0).get("lease_token");
        }
        if (start.equals("dead")) {
            assertThat(db.value("SELECT queue.fail(?, ?, 'given up')", namespace, id)).isEqualTo(true);
        }
        if (start.equals("completed")) {
            assertThat(db.value("SELECT queue.ack(?, ?)", namespace, id)).isEqualTo(true);
        }
        return new Object[] {namespace, id, token};
    }

    // ------------------------------------------------------------------ pause and resume

    @Test
    void aPausedQueueIsClaimedByNoPullUntilResumed() {
        String ns = newNamespace();
        long paused = push(ns, "email");
        long other = push(ns, "sms");

        assertThat(db.value("SELECT queue.pause_queue(?, 'email')", ns)).isEqualTo(true);
        assertThat(db.value("SELECT queue.pause_queue(?, 'email')", ns)).isEqualTo(false);

        assertThat(pull(ns, "email")).isEmpty();
        assertThat(db.rows("SELECT * FROM queue.pull_batch(?, 'email', 10)", ns)).isEmpty();
        assertThat(db.rows("SELECT * FROM queue.pull_any(?, ARRAY['email', 'sms'], 10)", ns))
                .extracting(r -> r.get("id")).containsExactly(other);
        assertThat(state(ns, paused)).isEqualTo("pending");
        assertThat(db.rows("SELECT queue FROM queue.list_paused_queues(?)", ns))
                .extracting(r -> r.get("queue")).containsExactly("email");

        assertThat(db.value("SELECT queue.resume_queue(?, 'email')", ns)).isEqualTo(true);
        assertThat(db.value("SELECT queue.resume_queue(?, 'email')", ns)).isEqualTo(false);
        assertThat(db.rows("SELECT * FROM queue.list_paused_queues(?)", ns)).isEmpty();
        assertThat(pull(ns, "email")).extracting(r -> r.get("id")).containsExactly(paused);
    }

    @Test
    void pauseAndResumeAreRecordedWithTheActorAndOnlyWhenTheyChangeSomething() throws SQLException {
        String ns = newNamespace();
        try (Connection connection = db.connect()) {
            SqlTestDatabase.rows(connection, "SELECT queue.set_actor('ops-alice')");
            SqlTestDatabase.rows(connection, "SELECT queue.pause_queue(?, 'email')", ns);
            SqlTestDatabase.rows(connection, "SELECT queue.pause_queue(?, 'email')", ns);
            List<Map<String, Object>> listed = SqlTestDatabase.rows(connection, "SELECT * FROM queue.list_paused_queues(?)", ns);
            assertThat(listed).hasSize(1);
            assertThat(listed.get(0).get("paused_by")).isEqualTo("ops-alice");
            assertThat(listed.get(0).get("paused_at")).isInstanceOf(OffsetDateTime.class);
            SqlTestDatabase.rows(connection, "SELECT queue.resume_queue(?, 'email')", ns);
            SqlTestDatabase.rows(connection, "SELECT queue.resume_queue(?, 'email')", ns);
        }

        assertThat(audit(ns)).extracting(r -> r.get("action") + " " + r.get("subject") + " by " + r.get("actor"))
                .containsExactly("pause_queue email by ops-alice", "resume_queue email by ops-alice");
    }

    @Test
    void resumeWakesTheQueuesListeners() throws SQLException {
        String ns = newNamespace();
        db.value("SELECT queue.pause_queue(?, 'email')", ns);
        try (Connection listener = db.connect(); Statement statement = listener.createStatement()) {
            statement.execute("LISTEN \"queue_wakeup\"");

            db.value("SELECT queue.resume_queue(?, 'email')", ns);

            PGNotification[] received = listener.unwrap(PGConnection.class).getNotifications(30_000);
            assertThat(received).isNotEmpty();
            assertThat(received[0].getParameter()).isEqualTo(ns + "/email");
        }
    }

    @Test
    void aPauseWaitsForAClaimUnderWayAndLaterClaimsSeeIt() throws Exception {
        String ns = newNamespace();
        long first = push(ns, "email");
        long second = push(ns, "email");
        try (Connection claimer = db.connect()) {
            claimer.setAutoCommit(false);
            assertThat(SqlTestDatabase.rows(claimer, "SELECT * FROM queue.pull(?, 'email')", ns))
                    .extracting(r -> r.get("id")).containsExactly(first);

            CompletableFuture<Object> pause = CompletableFuture.supplyAsync(
                    () -> db.value("SELECT queue.pause_queue(?, 'email')", ns));
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> db.count(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                    + " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())") > 0);
            assertThat(pause).isNotDone();

            claimer.commit();
            assertThat(pause.get(30, TimeUnit.SECONDS)).isEqualTo(true);
            assertThat(SqlTestDatabase.rows(claimer, "SELECT * FROM queue.pull(?, 'email')", ns)).isEmpty();
            claimer.commit();
        }
        assertThat(state(ns, first)).isEqualTo("running");
        assertThat(state(ns, second)).isEqualTo("pending");
    }

    @Test
    void aRunningMessageOfAPausedQueueIsSettledAsUsual() {
        Object[] message = messageIn("running");
        String ns = (String) message[0];
        db.value("SELECT queue.pause_queue(?, 'jobs')", ns);

        assertThat(db.value("SELECT queue.nack(?, ?, 'again', interval '0')", ns, message[1])).isEqualTo(true);
        assertThat(state(ns, (Long) message[1])).isEqualTo("pending");
        assertThat(pull(ns, "jobs")).isEmpty();
    }

    // ------------------------------------------------------------------ cancel

    @ParameterizedTest(name = "cancel of a {0} message -> {1}, then {2}")
    @CsvSource({
            "pending,   true,  missing",
            "running,   true,  missing",
            "dead,      false, dead",
            "completed, false, missing",
            "missing,   false, missing",
    })
    void cancelActsOnPendingAndRunningMessagesOnly(String start, boolean expected, String after) {
        Object[] message = messageIn(start);
        String ns = (String) message[0];
        long id = (Long) message[1];
        Map<String, String> before = db.footprint();

        assertThat(db.value("SELECT queue.cancel(?, ?)", ns, id)).isEqualTo(expected);

        assertThat(state(ns, id)).isEqualTo(after);
        if (expected) {
            assertThat(audit(ns)).extracting(r -> r.get("action") + " " + r.get("subject") + " " + r.get("count"))
                    .containsExactly("cancel jobs 1");
            assertThat(db.rows("SELECT ids FROM queue.list_audit_log(?)", ns).get(0).get("ids").toString()).contains(
                    Long.toString(id));
            assertThat(db.value("SELECT queue.cancel(?, ?)", ns, id)).isEqualTo(false);
        } else {
            assertThat(db.footprint()).isEqualTo(before);
        }
    }

    @ParameterizedTest(name = "{0} by the holder of a cancelled message says false")
    @ValueSource(strings = {
            "SELECT queue.ack(?, ?, p_lease_token := ?)",
            "SELECT queue.nack(?, ?, 'x', p_lease_token := ?)",
            "SELECT queue.fail(?, ?, 'x', p_lease_token := ?)",
            "SELECT queue.extend_visibility(?, ?, interval '1 minute', p_lease_token := ?)",
            "SELECT queue.snooze(?, ?, interval '1 minute', p_lease_token := ?)",
    })
    void theHolderOfACancelledMessageCannotBringItBack(String settle) {
        Object[] message = messageIn("running");
        String ns = (String) message[0];
        assertThat(db.value("SELECT queue.cancel(?, ?)", ns, message[1])).isEqualTo(true);
        Map<String, String> before = db.footprint();

        assertThat(db.value(settle, ns, message[1], message[2])).isEqualTo(false);

        assertThat(db.footprint()).isEqualTo(before);
    }

    @Test
    void anotherNamespaceCannotCancelAMessage() {
        Object[] message = messageIn("pending");
        Map<String, String> before = db.footprint();

        assertThat(db.value("SELECT queue.cancel(?, ?)", newNamespace(), message[1])).isEqualTo(false);

        assertThat(db.footprint()).isEqualTo(before);
    }

    // ------------------------------------------------------------------ snooze

    @ParameterizedTest(name = "snooze of a {0} message -> {1}, then {2}")
    @CsvSource({
            "pending,   false, pending",
            "running,   true,  pending",
            "dead,      false, dead",
            "completed, false, missing",
            "missing,   false, missing",
    })
    void snoozeActsOnARunningMessageOnly(String start, boolean expected, String after) {
        Object[] message = messageIn(start);
        String ns = (String) message[0];
        long id = (Long) message[1];
        Map<String, String> before = db.footprint();

        assertThat(db.value("SELECT queue.snooze(?, ?, interval '10 minutes')", ns, id)).isEqualTo(expected);

        assertThat(state(ns, id)).isEqualTo(after);
        if (!expected) {
            assertThat(db.footprint()).isEqualTo(before);
        }
    }

    @Test
    void aSnoozedMessageIsDueLaterWithItsAttemptTakenBackAndNoErrorRecorded() {
        Object[] message = messageIn("running");
        String ns = (String) message[0];
        long id = (Long) message[1];

        assertThat(db.value("SELECT queue.snooze(?, ?, p_delay := interval '10 minutes', p_lease_token := ?)", ns, id,
                message[2])).isEqualTo(true);

        Map<String, Object> row = db.rows("SELECT attempts, last_error, run_at > now() + interval '9 minutes' AS later, "
                + "worker_id FROM queue.inspect(?, ?)", ns, id).get(0);
        assertThat(row.get("attempts")).isEqualTo(0);
        assertThat(row.get("last_error")).isNull();
        assertThat(row.get("later")).isEqualTo(true);
        assertThat(row.get("worker_id")).isNull();
        assertThat(db.rows("SELECT * FROM queue.inspect_attempts(?, ?)", ns, id)).isEmpty();
        assertThat(pull(ns, "jobs")).isEmpty();
    }

    @Test
    void snoozeToATimeInThePastIsDueNow() {
        Object[] message = messageIn("running");
        String ns = (String) message[0];

        assertThat(db.value("SELECT queue.snooze(?, ?, p_run_at := now() - interval '1 hour')", ns, message[1])).isEqualTo(true);

        List<Map<String, Object>> again = pull(ns, "jobs");
        assertThat(again).extracting(r -> r.get("id")).containsExactly(message[1]);
        assertThat(again.get(0).get("attempts")).isEqualTo(1);
    }

    @Test
    void snoozeWithAStaleLeaseTokenChangesNothing() {
        Object[] message = messageIn("running");
        String ns = (String) message[0];
        long id = (Long) message[1];
        db.rows("UPDATE queue.messages SET lease_until = now() - interval '1 second' WHERE id = ?", id);
        long current = (Long) pull(ns, "jobs").get(0).get("lease_token");
        Map<String, String> before = db.footprint();

        assertThat(db.value("SELECT queue.snooze(?, ?, interval '1 minute', p_lease_token := ?)", ns, id, message[2]))
                .isEqualTo(false);

        assertThat(db.footprint()).isEqualTo(before);
        assertThat(db.value("SELECT queue.snooze(?, ?, interval '1 minute', p_lease_token := ?)", ns, id, current))
                .isEqualTo(true);
    }

    // ------------------------------------------------------------------ bad input

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            SELECT queue.pause_queue('bad name', 'q')                                  | QU001 | invalid p_namespace
            SELECT queue.pause_queue('acme', 'bad queue')                              | QU001 | invalid p_queue: expected 1 to 64 characters
            SELECT queue.pause_queue('acme', NULL)                                     | QU001 | invalid p_queue
            SELECT queue.resume_queue('acme', 'a/b')                                   | QU001 | got: "a/b"
            SELECT * FROM queue.list_paused_queues('')                                 | QU001 | invalid p_namespace
            SELECT queue.cancel('acme', NULL)                                          | QU001 | invalid p_id: expected a message id, got: null
            SELECT queue.cancel('bad name', 1)                                         | QU001 | invalid p_namespace
            SELECT queue.snooze('acme', 1)                                             | QU001 | invalid p_delay
            SELECT queue.snooze('acme', 1, interval '1 minute', now())                 | QU001 | invalid p_run_at
            SELECT queue.snooze('acme', 1, interval '-1 second')                       | QU001 | invalid p_delay: expected 0 to 365 days, got: -00:00:01
            SELECT queue.snooze('acme', 1, interval '366 days')                        | QU001 | invalid p_delay: expected 0 to 365 days, got: 366 days
            SELECT queue.snooze('acme', 1, p_run_at := timestamptz '1900-01-01 00:00:00+00') | QU001 | invalid p_run_at
            SELECT queue.snooze('acme', NULL, interval '1 minute')                     | QU001 | invalid p_id
            """)
    void aBadArgumentIsRefusedWithItsNameAndValueAndNothingChanges(String sql, String sqlState, String message) {
        Map<String, String> before = db.footprint();

        PSQLException error = db.error(sql);

        assertThat(error.getSQLState()).as(error.getMessage()).isEqualTo(sqlState);
        assertThat(error.getServerErrorMessage().getMessage()).contains(message);
        assertThat(db.footprint()).isEqualTo(before);
    }

    // ------------------------------------------------------------------ the tenant gate

    @Test
    void aTenantPausesCancelsAndSnoozesInItsOwnNamespaceOnly() throws SQLException {
        String acme = roles.login("acmeflow");
        String acmeNs = newNamespace();
        String globexNs = newNamespace();
        db.value("SELECT queue.grant_tenant(?, ?)", acmeNs, acme);
        long theirs = push(globexNs, "email");
        db.value("SELECT queue.pause_queue(?, 'email')", globexNs);
        long ours = push(acmeNs, "email");
        Map<String, String> before = db.footprint();

        try (Connection connection = roles.connectAs(acme)) {
            for (String sql : List.of(
                    "SELECT queue.pause_queue('" + globexNs + "', 'sms')",
                    "SELECT queue.resume_queue('" + globexNs + "', 'email')",
                    "SELECT * FROM queue.list_paused_queues('" + globexNs + "')",
                    "SELECT queue.cancel('" + globexNs + "', " + theirs + ")",
                    "SELECT queue.snooze('" + globexNs + "', " + theirs + ", interval '1 minute')",
                    "SELECT queue.engine_pause_topic('" + globexNs + "', 'sms', true, NULL, false, 'x')",
                    "SELECT * FROM queue.engine_paused_topics('" + globexNs + "')",
                    "SELECT queue.engine_cancel('" + globexNs + "', " + theirs + ", NULL, 'x')",
                    "SELECT queue._engine_cancel('" + globexNs + "', " + theirs + ", NULL, 'x')")) {
                PSQLException error = catchThrowableOfType(() -> SqlTestDatabase.rows(connection, sql), PSQLException.class);
                assertThat((Throwable) error).as(sql).isNotNull();
                assertThat(error.getSQLState()).as(sql).isIn("QU005", "42501");
            }
            assertThat(db.footprint()).isEqualTo(before);

            // its own namespace: allowed, and a wrong id of another tenant finds nothing
            assertThat(SqlTestDatabase.rows(connection, "SELECT queue.pause_queue(?, 'email') AS p", acmeNs).get(0).get("p"))
                    .isEqualTo(true);
            assertThat(SqlTestDatabase.rows(connection, "SELECT queue.cancel(?, ?) AS c", acmeNs, theirs).get(0).get("c"))
                    .isEqualTo(false);
            assertThat(SqlTestDatabase.rows(connection, "SELECT queue.cancel(?, ?) AS c", acmeNs, ours).get(0).get("c"))
                    .isEqualTo(true);
        }
        assertThat(state(globexNs, theirs)).isEqualTo("pending");
        assertThat(db.rows("SELECT queue FROM queue.list_paused_queues(?)", globexNs))
                .extracting(r -> r.get("queue")).containsExactly("email");
    }
}
