package dev.queue.postgres.sql;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.postgresql.util.PSQLException;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The gates of the engine ({@code engine_*}) and {@code get_queue_policy}, called by a tenant's login as a hostile
 * tenant would: another namespace is refused ({@code QU005}), so is a namespace other than the session's tenant
 * ({@code QU002}), NULL for every namespace narrows to that tenant, and every argument out of its bound (docs/sql.md,
 * Bounds of the gates) is refused with {@code QU001} or {@code QU004} naming it, before anything is locked or stored.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlEngineGateInputTest {

    /** A text of 2 MB, as a SQL expression. */
    private static final String HUGE = "repeat('a', 2000000)";

    private SqlTenantRoles roles;
    private SqlTestDatabase db;
    private String acme;
    private String twoNamespaces;

    @BeforeAll
    void createTenants() {
        roles = SqlTenantRoles.create("gateinput");
        db = roles.db;
        acme = roles.login("acme");
        db.value("SELECT queue.grant_tenant('acme', ?)", acme);
        twoNamespaces = roles.login("acmeinitech");
        db.value("SELECT queue.grant_tenant('acme', ?)", twoNamespaces);
        db.value("SELECT queue.grant_tenant('initech', ?)", twoNamespaces);
        for (String ns : List.of("acme", "globex", "initech")) {
            db.value("SELECT queue.push(?, 'email', '{}')", ns);
            db.value("SELECT queue.push(?, 'email', '{}')", ns);
            db.rows("SELECT * FROM queue.pull(?, 'email', 'w')", ns);
            db.value("SELECT queue.create_schedule(?, 'nightly', 'email', '{}', p_every_interval := '1 hour')", ns);
        }
        // one expired lease and one due schedule in each namespace
        db.rows("UPDATE queue.messages SET lease_until = now() - interval '1 minute' WHERE state = 'running'");
        db.rows("UPDATE queue.schedules SET next_run_at = now() - interval '1 minute'");
    }

    @AfterAll
    void dropTenants() {
        roles.close();
    }

    /** One call of each gate, valid but for the namespace ({@code %1$s}, a SQL literal). */
    private static List<String> gateCalls() {
        String ids = "ARRAY[1]::bigint[], ARRAY[1]::bigint[]";
        return List.of(
                "SELECT * FROM queue.engine_claim(%1$s, ARRAY['email'], 'w', 1, 42, 30000000, NULL, false, NULL, NULL, NULL, NULL)",
                "SELECT * FROM queue.engine_take_head_sweeps(%1$s, ARRAY['email'], 0, NULL)",
                "SELECT queue.engine_next_due(%1$s, ARRAY['email'], NULL)",
                "SELECT * FROM queue.engine_dead_letters(%1$s, NULL, NULL, 0, 10)",
                "SELECT * FROM queue.engine_redrive_audited(%1$s, 'email', NULL, 0, 10, NULL, false, NULL)",
                "SELECT * FROM queue.engine_purge_audited(%1$s, 'email', NULL, 10, NULL)",
                "SELECT queue.engine_pause_topic(%1$s, 'email', true, NULL, false, NULL)",
                "SELECT * FROM queue.engine_paused_topics(%1$s)",
                "SELECT * FROM queue.engine_wake_marks(ARRAY[%1$s])",
                "SELECT queue.engine_wake(%1$s, 'email')",
                "SELECT queue.engine_set_ordering(%1$s, 'email', 'continue', NULL, false, NULL)",
                "SELECT queue.engine_ordering(%1$s, 'email')",
                "SELECT queue.engine_set_topic_limits(%1$s, 'email', 5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false, NULL)",
                "SELECT * FROM queue.engine_topic_limits(%1$s)",
                "SELECT * FROM queue.engine_find(%1$s, 1)",
                "SELECT * FROM queue.engine_attempts(%1$s, 1)",
                "SELECT * FROM queue.engine_publish(ARRAY[%1$s], ARRAY['email'], ARRAY['{}'], ARRAY['{}'], ARRAY[0], ARRAY[3], "
                        + "ARRAY[NULL::text], ARRAY[NULL::bigint], ARRAY[NULL::bigint], NULL, false, NULL, NULL)",
                "SELECT * FROM queue.engine_publish_fast(ARRAY[%1$s], ARRAY['email'], ARRAY['{}'], ARRAY['{}'], ARRAY[0], "
                        + "ARRAY[3], ARRAY[NULL::bigint], ARRAY[NULL::bigint], ARRAY[]::text[], NULL, NULL)",
                "SELECT queue.engine_publish_one(%1$s, 'email', '{}', '{}', 0, 3, NULL, NULL, NULL, NULL, NULL)",
                "SELECT * FROM queue.engine_rescue(%1$s, 10, NULL, false, NULL)",
                "SELECT queue.engine_schedule_insert(%1$s, 'hourly', NULL, 3600000000, 'UTC', 'email', '{}', '{}', 0, 3, "
                        + "NULL, NULL, 'FIRE_ONCE', 1, 0, false, now(), NULL, now(), now(), NULL)",
                "SELECT queue.engine_schedule_replace(%1$s, 'nightly', '0 3 * * *', NULL, 'Europe/Paris', 'email', '{}', "
                        + "'{\"k\":\"v\"}', 0, 3, NULL, NULL, 'FIRE_EACH', 5, 0, NULL, now(), now(), NULL)",
                "SELECT queue.engine_schedule_pause(%1$s, 'nightly', true, NULL, now(), NULL)",
                "SELECT queue.engine_schedule_delete(%1$s, 'nightly')",
                "SELECT * FROM queue.engine_schedules(%1$s, NULL)",
                "SELECT * FROM queue.engine_lock_due_schedules(%1$s, 10, NULL)",
                "SELECT queue.engine_schedule_ran(%1$s, 'nightly', NULL, now())",
                "SELECT queue.engine_next_schedule_run(%1$s)",
                "SELECT * FROM queue.engine_complete(%1$s, " + ids + ", false, NULL, false)",
                "SELECT * FROM queue.engine_retry(%1$s, " + ids + ", 0, 'x', NULL, false)",
                "SELECT * FROM queue.engine_bury(%1$s, " + ids + ", 'x', NULL, NULL)",
                "SELECT * FROM queue.engine_extend(%1$s, " + ids + ", 30000000, NULL)",
                "SELECT * FROM queue.engine_release(%1$s, " + ids + ", false)",
                "SELECT * FROM queue.engine_snooze(%1$s, " + ids + ", 0, NULL, NULL, false)",
                "SELECT queue.engine_cancel(%1$s, 1, NULL, NULL)",
                "SELECT * FROM queue.engine_stats(%1$s, NULL)",
                "SELECT queue.engine_record_rates(ARRAY[%1$s], ARRAY['email'], ARRAY[1::bigint], NULL)",
                "SELECT * FROM queue.get_queue_policy(%1$s, 'email')");
    }

    @Test
    void theCallsBelowCoverEveryGate() {
        Set<String> called = new TreeSet<>();
        for (String sql : gateCalls()) {
            called.add(sql.replaceAll("^.*queue\\.(\\w+)\\(.*$", "$1"));
        }
        List<Map<String, Object>> gates = db.rows("SELECT DISTINCT p.proname::text AS name FROM pg_proc p "
                + "WHERE p.pronamespace = 'queue'::regnamespace AND p.proname LIKE 'engine\\_%'");
        assertThat(gates).hasSize(37);
        for (Map<String, Object> gate : gates) {
            assertThat(called).contains((String) gate.get("name"));
        }
    }

    @Test
    void everyGateRefusesAnotherNamespaceAndOneThatIsNotTheSessionsTenant() throws SQLException {
        Map<String, String> before = footprint();
        List<String> wrong = new ArrayList<>();
        // setup, namespace passed, SQLSTATE expected
        String[][] cases = {
                {"SELECT 1", "'globex'", "QU005"},
                {"SELECT queue.set_tenant('acme')", "'globex'", "QU002"},
                {"SELECT queue.set_tenant('acme')", "NULL", "QU002"},
                {"SELECT queue.set_tenant('globex')", "'globex'", "QU005"},
                {"SELECT queue.set_tenant('globex')", "'acme'", "QU002"},
        };
        for (String[] c : cases) {
            try (Connection connection = roles.connectAs(acme)) {
                SqlTestDatabase.rows(connection, c[0]);
                for (String call : gateCalls()) {
                    String sql = call.formatted(c[1]);
                    if (c[1].equals("NULL") && (sql.contains("engine_rescue") || sql.contains("engine_lock_due_schedules")
                            || sql.contains("engine_next_schedule_run") || sql.contains("ARRAY[NULL]"))) {
                        // NULL is every namespace there: the tenant's (below); an array's NULL element is refused
                        // with the array's shape, first
                        continue;
                    }
                    String state = stateOf(connection, sql);
                    if (!c[2].equals(state)) {
                        wrong.add(c[0] + ", " + sql + " -> " + state + ", expected " + c[2]);
                    }
                }
            }
        }
        assertThat(wrong).isEmpty();
        assertThat(footprint()).isEqualTo(before);
    }

    @Test
    void everyGateServesTheLoginsOwnNamespaceAlsoWithItsTenantSet() throws SQLException {
        List<String> failed = new ArrayList<>();
        for (String setup : List.of("SELECT 1", "SELECT queue.set_tenant('acme')")) {
            try (Connection connection = roles.connectAs(acme)) {
                SqlTestDatabase.rows(connection, setup);
                connection.setAutoCommit(false);
                for (String call : gateCalls()) {
                    String sql = call.formatted("'acme'");
                    try {
                        SqlTestDatabase.rows(connection, "SAVEPOINT s");
                        SqlTestDatabase.rows(connection, sql);
                    } catch (PSQLException e) {
                        failed.add(setup + ", " + sql + " -> " + e.getSQLState() + " " + e.getServerErrorMessage().getMessage());
                        SqlTestDatabase.rows(connection, "ROLLBACK TO SAVEPOINT s");
                    }
                }
                connection.rollback();
            }
        }
        assertThat(failed).isEmpty();
    }

    @Test
    void nullForEveryNamespaceIsTheSessionsTenant() throws SQLException {
        try (Connection connection = roles.connectAs(twoNamespaces)) {
            connection.setAutoCommit(false);
            SqlTestDatabase.rows(connection, "SELECT queue.set_tenant('acme', true)");
            assertThat(SqlTestDatabase.rows(connection, "SELECT namespace FROM queue.engine_lock_due_schedules(NULL, 10, NULL)"))
                    .extracting(r -> r.get("namespace")).containsExactly("acme");
            assertThat(SqlTestDatabase.rows(connection, "SELECT queue.engine_next_schedule_run(NULL) = "
                    + "(SELECT next_run_at FROM queue.engine_schedules('acme', 'nightly')) AS same"))
                    .extracting(r -> r.get("same")).containsExactly(true);
            assertThat(SqlTestDatabase.rows(connection, "SELECT requeued FROM queue.engine_rescue(NULL, 1000, NULL, false, NULL)"))
                    .extracting(r -> r.get("requeued")).containsExactly(1L);
            connection.commit();
            assertThat(db.rows("SELECT namespace FROM queue.messages WHERE state = 'running' ORDER BY 1"))
                    .extracting(r -> r.get("namespace")).containsExactly("globex", "initech");

            // a tenant the login may not use is refused, not narrowed to nothing
            SqlTestDatabase.rows(connection, "SELECT queue.set_tenant('globex', true)");
            for (String sql : List.of("SELECT * FROM queue.engine_rescue(NULL, 1000, NULL, false, NULL)",
                    "SELECT * FROM queue.engine_lock_due_schedules(NULL, 10, NULL)",
                    "SELECT queue.engine_next_schedule_run(NULL)")) {
                SqlTestDatabase.rows(connection, "SAVEPOINT s");
                assertThat(stateOf(connection, sql)).as(sql).isEqualTo("QU005");
                SqlTestDatabase.rows(connection, "ROLLBACK TO SAVEPOINT s");
            }
            connection.rollback();

            // without a tenant: every namespace granted to the login (row-level security), never another
            assertThat(SqlTestDatabase.rows(connection, "SELECT requeued FROM queue.engine_rescue(NULL, 1000, NULL, false, NULL)"))
                    .extracting(r -> r.get("requeued")).containsExactly(1L);
            assertThat(SqlTestDatabase.rows(connection, "SELECT DISTINCT namespace FROM queue.engine_lock_due_schedules(NULL, 10, NULL) ORDER BY 1"))
                    .extracting(r -> r.get("namespace")).containsExactly("acme", "initech");
            connection.commit();
            assertThat(db.rows("SELECT namespace FROM queue.messages WHERE state = 'running'"))
                    .extracting(r -> r.get("namespace")).containsExactly("globex");
        } finally {
            db.rows("UPDATE queue.messages SET state = 'running', worker = 'w', lease_token = 1, "
                    + "lease_until = now() - interval '1 minute' WHERE id IN (SELECT min(id) FROM queue.messages GROUP BY namespace)");
        }
    }

    /** Each call out of bounds, the SQLSTATE and the parameter its error names. */
    private static List<String[]> outOfBounds() {
        String tenThousandAndOne = "(SELECT array_agg(g::bigint) FROM generate_series(1, 10001) g)";
        String publish = "SELECT * FROM queue.engine_publish(%s, %s, %s, %s, %s, %s, NULL, NULL, NULL, %s, false, NULL, %s)";
        String one = "ARRAY['acme']";
        String schedule = "SELECT queue.engine_schedule_insert('acme', %s, %s, %s, %s, 'email', %s, %s, %s, 3, NULL, NULL, %s, %s, 0, "
                + "false, now(), NULL, %s, now(), NULL)";
        Object[] good = {"'s2'", "NULL", "3600000000", "'UTC'", "'{}'", "'{}'", "0", "'FIRE_ONCE'", "1", "now()"};
        List<String[]> cases = new ArrayList<>(List.of(
                // the issue's call: 100,000 topics, each an advisory lock
                c("QU001", "p_topics", "SELECT count(*) FROM queue.engine_claim('acme', (SELECT array_agg('q'||g) FROM "
                        + "generate_series(1,100000) g), 'w', 1, 4242, 30000000, now(), false, NULL::int[], NULL::bigint[], "
                        + "NULL::bigint[], NULL::boolean[])"),
                c("QU001", "p_topics", claim("ARRAY[['email'],['sms']]", "1", "30000000", "NULL")),
                c("QU001", "p_topics", claim("ARRAY[]::text[]", "1", "30000000", "NULL")),
                c("QU001", "p_topics", claim("ARRAY['email', NULL]", "1", "30000000", "NULL")),
                c("QU001", "p_topics[2]", claim("ARRAY['email', " + HUGE + "]", "1", "30000000", "NULL")),
                c("QU001", "p_limit", claim("ARRAY['email']", "0", "30000000", "NULL")),
                c("QU001", "p_limit", claim("ARRAY['email']", "2147483647", "30000000", "NULL")),
                c("QU001", "p_limit", claim("ARRAY['email']", "NULL", "30000000", "NULL")),
                c("QU001", "p_lease_micros", claim("ARRAY['email']", "1", "9223372036854775807", "NULL")),
                c("QU001", "p_lease_micros", claim("ARRAY['email']", "1", "-1", "NULL")),
                c("QU001", "p_now", claim("ARRAY['email']", "1", "30000000", "'infinity'")),
                c("QU001", "p_now", claim("ARRAY['email']", "1", "30000000", "'294276-01-01'")),
                c("QU001", "p_namespace", "SELECT * FROM queue.engine_claim(" + HUGE + ", ARRAY['email'], 'w', 1, 42, 30000000, "
                        + "NULL, false, NULL, NULL, NULL, NULL)"),
                c("QU001", "p_worker", "SELECT * FROM queue.engine_claim('acme', ARRAY['email'], " + HUGE + ", 1, 42, 30000000, "
                        + "NULL, false, NULL, NULL, NULL, NULL)"),
                c("QU001", "p_lease_token", "SELECT * FROM queue.engine_claim('acme', ARRAY['email'], 'w', 1, NULL, 30000000, "
                        + "NULL, false, NULL, NULL, NULL, NULL)"),
                c("QU001", "p_after_priorities", "SELECT * FROM queue.engine_claim('acme', ARRAY['email'], 'w', 1, 42, 30000000, "
                        + "NULL, false, ARRAY[1, 2], NULL, NULL, NULL)"),
                c("QU001", "p_after_priorities[1]", "SELECT * FROM queue.engine_claim('acme', ARRAY['email'], 'w', 1, 42, 30000000, "
                        + "NULL, false, ARRAY[2147483647], ARRAY[0::bigint], ARRAY[1::bigint], NULL)"),
                c("QU001", "p_after_run_at_micros[1]", "SELECT * FROM queue.engine_claim('acme', ARRAY['email'], 'w', 1, 42, "
                        + "30000000, NULL, false, ARRAY[1], ARRAY[9223372036854775807], ARRAY[1::bigint], NULL)"),
                c("QU001", "p_after_ids[1]", "SELECT * FROM queue.engine_claim('acme', ARRAY['email'], 'w', 1, 42, 30000000, "
                        + "NULL, false, ARRAY[1], NULL, ARRAY[1::bigint], NULL)"),
                c("QU001", "p_gap_micros", "SELECT * FROM queue.engine_take_head_sweeps('acme', ARRAY['email'], -1, NULL)"),
                c("QU001", "p_topics", "SELECT * FROM queue.engine_take_head_sweeps('acme', "
                        + "(SELECT array_agg('q'||g) FROM generate_series(1,65) g), 0, NULL)"),
                c("QU001", "p_topics", "SELECT queue.engine_next_due('acme', NULL, NULL)"),
                c("QU001", "p_limit", "SELECT * FROM queue.engine_dead_letters('acme', NULL, NULL, 0, 1001)"),
                c("QU001", "p_topic", "SELECT * FROM queue.engine_dead_letters('acme', " + HUGE + ", NULL, 0, 10)"),
                c("QU001", "p_ids", "SELECT * FROM queue.engine_redrive_audited('acme', NULL, " + tenThousandAndOne
                        + ", 0, 10, NULL, false, NULL)"),
                c("QU001", "p_ids", "SELECT * FROM queue.engine_redrive_audited('acme', NULL, ARRAY[[1,2],[3,4]]::bigint[], 0, 10, "
                        + "NULL, false, NULL)"),
                c("QU001", "p_ids", "SELECT * FROM queue.engine_redrive_audited('acme', NULL, ARRAY[1, NULL]::bigint[], 0, 10, "
                        + "NULL, false, NULL)"),
                c("QU001", "p_ids", "SELECT * FROM queue.engine_redrive_audited('acme', 'email', ARRAY[1]::bigint[], 0, 10, "
                        + "NULL, false, NULL)"),
                c("QU001", "p_actor", "SELECT * FROM queue.engine_redrive_audited('acme', 'email', NULL, 0, 10, NULL, false, "
                        + HUGE + ")"),
                c("QU001", "p_limit", "SELECT * FROM queue.engine_purge_audited('acme', NULL, NULL, 0, NULL)"),
                c("QU001", "p_paused", "SELECT queue.engine_pause_topic('acme', 'email', NULL, NULL, false, NULL)"),
                c("QU001", "p_topic", "SELECT queue.engine_pause_topic('acme', '', true, NULL, false, NULL)"),
                c("QU001", "p_behind_dead_letter", "SELECT queue.engine_set_ordering('acme', 'email', 'maybe', NULL, false, NULL)"),
                c("QU001", "p_max_running", "SELECT queue.engine_set_topic_limits('acme', 'email', 0, NULL, NULL, NULL, NULL, "
                        + "NULL, NULL, NULL, NULL, false, NULL)"),
                c("QU001", "p_rate_period_micros", "SELECT queue.engine_set_topic_limits('acme', 'email', NULL, NULL, NULL, NULL, "
                        + "10, NULL, NULL, NULL, NULL, false, NULL)"),
                c("QU001", "p_partition_kind", "SELECT queue.engine_set_topic_limits('acme', 'email', NULL, 'tenant', 'h', 2, "
                        + "NULL, NULL, NULL, NULL, NULL, false, NULL)"),
                c("QU001", "p_id", "SELECT * FROM queue.engine_find('acme', NULL)"),
                c("QU001", "p_id", "SELECT * FROM queue.engine_attempts('acme', NULL)"),
                c("QU001", "p_namespaces", publish.formatted("(SELECT array_agg('acme'::text) FROM generate_series(1, 10001))",
                        "ARRAY['email']", "ARRAY['{}']", "ARRAY['{}']", "ARRAY[0]", "ARRAY[3]", "NULL", "NULL")),
                c("QU001", "p_namespaces", publish.formatted("ARRAY[['acme']]", "ARRAY['email']", "ARRAY['{}']", "ARRAY['{}']",
                        "ARRAY[0]", "ARRAY[3]", "NULL", "NULL")),
                c("QU005", "\"globex\"", publish.formatted("ARRAY['acme', 'globex']", "ARRAY['email', 'email']",
                        "ARRAY['{}', '{}']", "ARRAY['{}', '{}']", "ARRAY[0, 0]", "ARRAY[3, 3]", "NULL", "NULL")),
                c("QU001", "p_namespaces[2]", publish.formatted("ARRAY['acme', " + HUGE + "]", "ARRAY['email', 'email']",
                        "ARRAY['{}', '{}']", "ARRAY['{}', '{}']", "ARRAY[0, 0]", "ARRAY[3, 3]", "NULL", "NULL")),
                c("QU001", "p_topics", publish.formatted(one, "ARRAY['email', 'sms']", "ARRAY['{}']", "ARRAY['{}']", "ARRAY[0]",
                        "ARRAY[3]", "NULL", "NULL")),
                c("QU004", "p_payloads[1]", publish.formatted(one, "ARRAY['email']", "ARRAY['{']", "ARRAY['{}']", "ARRAY[0]",
                        "ARRAY[3]", "NULL", "NULL")),
                c("QU004", "p_payloads[1]", publish.formatted(one, "ARRAY['email']", "ARRAY['\"\\u0000\"']", "ARRAY['{}']",
                        "ARRAY[0]", "ARRAY[3]", "NULL", "NULL")),
                c("QU004", "p_payloads[1]", publish.formatted(one, "ARRAY['email']", "ARRAY[NULL::text]", "ARRAY['{}']",
                        "ARRAY[0]", "ARRAY[3]", "NULL", "NULL")),
                c("QU001", "p_headers[1]", publish.formatted(one, "ARRAY['email']", "ARRAY['{}']", "ARRAY['[1]']", "ARRAY[0]",
                        "ARRAY[3]", "NULL", "NULL")),
                c("QU001", "p_headers[1]", publish.formatted(one, "ARRAY['email']", "ARRAY['{}']", "ARRAY['{x']", "ARRAY[0]",
                        "ARRAY[3]", "NULL", "NULL")),
                c("QU001", "p_headers[1]", publish.formatted(one, "ARRAY['email']", "ARRAY['{}']",
                        "ARRAY[(SELECT json_object_agg('h' || g, 'v')::text FROM generate_series(1, 33) g)]", "ARRAY[0]",
                        "ARRAY[3]", "NULL", "NULL")),
                c("QU001", "p_headers[1] name", publish.formatted(one, "ARRAY['email']", "ARRAY['{}']",
                        "ARRAY['{\"no spaces\":\"v\"}']", "ARRAY[0]", "ARRAY[3]", "NULL", "NULL")),
                c("QU001", "p_priorities[1]", publish.formatted(one, "ARRAY['email']", "ARRAY['{}']", "ARRAY['{}']",
                        "ARRAY[2147483647]", "ARRAY[3]", "NULL", "NULL")),
                c("QU001", "p_max_attempts[1]", publish.formatted(one, "ARRAY['email']", "ARRAY['{}']", "ARRAY['{}']",
                        "ARRAY[0]", "ARRAY[-2147483648]", "NULL", "NULL")),
                c("QU001", "p_ordering_keys", publish.formatted(
                        "(SELECT array_agg('acme'::text) FROM generate_series(1, 1001))",
                        "(SELECT array_agg('email'::text) FROM generate_series(1, 1001))",
                        "(SELECT array_agg('{}'::text) FROM generate_series(1, 1001))",
                        "(SELECT array_agg('{}'::text) FROM generate_series(1, 1001))",
                        "(SELECT array_agg(0) FROM generate_series(1, 1001))",
                        "(SELECT array_agg(3) FROM generate_series(1, 1001))", "NULL",
                        "(SELECT array_agg('k' || g) FROM generate_series(1, 1001) g)")),
                c("QU001", "p_ordering_keys[1]", publish.formatted(one, "ARRAY['email']", "ARRAY['{}']", "ARRAY['{}']",
                        "ARRAY[0]", "ARRAY[3]", "NULL", "ARRAY[repeat('k', 256)]")),
                c("QU001", "p_now", publish.formatted(one, "ARRAY['email']", "ARRAY['{}']", "ARRAY['{}']", "ARRAY[0]",
                        "ARRAY[3]", "'-infinity'", "NULL")),
                c("QU001", "p_unique_keys[1]", "SELECT * FROM queue.engine_publish(ARRAY['acme'], ARRAY['email'], ARRAY['{}'], "
                        + "ARRAY['{}'], ARRAY[0], ARRAY[3], ARRAY[''], NULL, NULL, NULL, false, NULL, NULL)"),
                c("QU001", "p_run_at_us[1]", "SELECT * FROM queue.engine_publish(ARRAY['acme'], ARRAY['email'], ARRAY['{}'], "
                        + "ARRAY['{}'], ARRAY[0], ARRAY[3], NULL, ARRAY[9223372036854775807], NULL, NULL, false, NULL, NULL)"),
                c("QU001", "p_delay_us[1]", "SELECT * FROM queue.engine_publish(ARRAY['acme'], ARRAY['email'], ARRAY['{}'], "
                        + "ARRAY['{}'], ARRAY[0], ARRAY[3], NULL, NULL, ARRAY[-1::bigint], NULL, false, NULL, NULL)"),
                c("QU001", "p_notify_keys[1]", "SELECT * FROM queue.engine_publish_fast(ARRAY['acme'], ARRAY['email'], ARRAY['{}'], "
                        + "ARRAY['{}'], ARRAY[0], ARRAY[3], NULL, NULL, ARRAY['globex/email'], NULL, NULL)"),
                c("QU001", "p_notify_key", "SELECT queue.engine_publish_one('acme', 'email', '{}', '{}', 0, 3, NULL, NULL, "
                        + "'globex/email', NULL, NULL)"),
                c("QU004", "p_payload", "SELECT queue.engine_publish_one('acme', 'email', NULL, '{}', 0, 3, NULL, NULL, NULL, "
                        + "NULL, NULL)"),
                c("QU001", "p_priority", "SELECT queue.engine_publish_one('acme', 'email', '{}', '{}', -1, 3, NULL, NULL, NULL, "
                        + "NULL, NULL)"),
                c("QU001", "p_limit", "SELECT * FROM queue.engine_rescue('acme', 100000, NULL, false, NULL)"),
                c("QU001", "p_expired_since", "SELECT * FROM queue.engine_rescue(NULL, 10, NULL, false, 'infinity')"),
                c("QU001", "p_name", schedule.formatted(with(good, 0, HUGE))),
                c("QU001", "p_cron", schedule.formatted(with(with(good, 1, "'not a cron'"), 2, "NULL"))),
                c("QU001", "p_cron", schedule.formatted(with(good, 1, "'* * * * *'"))),
                c("QU001", "p_interval_micros", schedule.formatted(with(good, 2, "0"))),
                c("QU001", "p_time_zone", schedule.formatted(with(good, 3, "'Mars/Olympus_Mons'"))),
                c("QU001", "p_time_zone", schedule.formatted(with(good, 3, HUGE))),
                c("QU004", "p_payload", schedule.formatted(with(good, 4, "'{'"))),
                c("QU001", "p_headers name", schedule.formatted(with(good, 5, "'{\"queue-x\":\"v\"}'"))),
                c("QU001", "p_priority", schedule.formatted(with(good, 6, "2147483647"))),
                c("QU001", "p_missed_policy", schedule.formatted(with(good, 7, "'NEVER'"))),
                c("QU001", "p_missed_bound", schedule.formatted(with(good, 8, "0"))),
                c("QU001", "p_created_at", schedule.formatted(with(good, 9, "NULL"))),
                c("QU001", "p_paused", "SELECT queue.engine_schedule_pause('acme', 'nightly', NULL, NULL, now(), NULL)"),
                c("QU001", "p_updated_at", "SELECT queue.engine_schedule_pause('acme', 'nightly', true, NULL, 'infinity', NULL)"),
                c("QU001", "p_name", "SELECT queue.engine_schedule_delete('acme', NULL)"),
                c("QU001", "p_limit", "SELECT * FROM queue.engine_lock_due_schedules('acme', 1001, NULL)"),
                c("QU001", "p_next_run_at", "SELECT queue.engine_schedule_ran('acme', 'nightly', '-infinity', NULL)"),
                c("QU001", "p_ids", "SELECT * FROM queue.engine_complete('acme', " + tenThousandAndOne + ", " + tenThousandAndOne
                        + ", false, NULL, false)"),
                c("QU001", "p_ids", "SELECT * FROM queue.engine_complete('acme', ARRAY[[1]]::bigint[], ARRAY[[1]]::bigint[], false, "
                        + "NULL, false)"),
                c("QU001", "p_tokens", "SELECT * FROM queue.engine_complete('acme', ARRAY[1, 2]::bigint[], ARRAY[1]::bigint[], "
                        + "false, NULL, false)"),
                c("QU001", "p_delay_micros", "SELECT * FROM queue.engine_retry('acme', ARRAY[1]::bigint[], ARRAY[1]::bigint[], "
                        + "9223372036854775807, 'x', NULL, false)"),
                c("QU001", "p_failed_by", "SELECT * FROM queue.engine_bury('acme', ARRAY[1]::bigint[], ARRAY[1]::bigint[], 'x', "
                        + "NULL, " + HUGE + ")"),
                c("QU001", "p_lease_micros", "SELECT * FROM queue.engine_extend('acme', ARRAY[1]::bigint[], ARRAY[1]::bigint[], 0, "
                        + "NULL)"),
                c("QU001", "p_ids", "SELECT * FROM queue.engine_release('acme', NULL, NULL, false)"),
                c("QU001", "p_run_at", "SELECT * FROM queue.engine_snooze('acme', ARRAY[1]::bigint[], ARRAY[1]::bigint[], NULL, "
                        + "'infinity', NULL, false)"),
                c("QU001", "p_delay_micros", "SELECT * FROM queue.engine_snooze('acme', ARRAY[1]::bigint[], ARRAY[1]::bigint[], "
                        + "-5, NULL, NULL, false)"),
                c("QU001", "p_id", "SELECT queue.engine_cancel('acme', NULL, NULL, NULL)"),
                c("QU001", "p_now", "SELECT * FROM queue.engine_stats('acme', '1900-01-01')"),
                c("QU001", "p_published[1]", "SELECT queue.engine_record_rates(ARRAY['acme'], ARRAY['email'], ARRAY[-1::bigint], NULL)"),
                c("QU001", "p_topics", "SELECT queue.engine_record_rates(ARRAY['acme'], ARRAY['email', 'sms'], ARRAY[1::bigint], NULL)"),
                c("QU001", "p_namespace", "SELECT * FROM queue.get_queue_policy(NULL, 'email')"),
                c("QU001", "p_namespace", "SELECT * FROM queue.get_queue_policy('', 'email')"),
                c("QU001", "p_namespace", "SELECT * FROM queue.get_queue_policy(" + HUGE + ", 'email')"),
                c("QU001", "p_queue", "SELECT * FROM queue.get_queue_policy('acme', " + HUGE + ")"),
                c("QU001", "p_queue", "SELECT * FROM queue.get_queue_policy('acme', NULL)")));
        return cases;
    }

    private static String claim(String topics, String limit, String leaseMicros, String now) {
        return "SELECT * FROM queue.engine_claim('acme', " + topics + ", 'w', " + limit + ", 42, " + leaseMicros + ", " + now
                + ", false, NULL, NULL, NULL, NULL)";
    }

    private static Object[] with(Object[] values, int index, String value) {
        Object[] copy = values.clone();
        copy[index] = value;
        return copy;
    }

    private static String[] c(String state, String parameter, String sql) {
        return new String[] {state, parameter, sql};
    }

    @Test
    void everyArgumentOutOfItsBoundIsATypedErrorNamingItAndChangesNothing() throws SQLException {
        Map<String, String> before = footprint();
        List<String> wrong = new ArrayList<>();
        try (Connection connection = roles.connectAs(acme)) {
            for (String[] c : outOfBounds()) {
                PSQLException error = catchThrowableOfType(() -> SqlTestDatabase.rows(connection, c[2]), PSQLException.class);
                String shown = c[2].length() > 160 ? c[2].substring(0, 160) + "..." : c[2];
                if (error == null) {
                    wrong.add(shown + " -> accepted");
                } else if (!c[0].equals(error.getSQLState())
                        || !error.getServerErrorMessage().getMessage().contains(c[1])
                        || error.getServerErrorMessage().getMessage().length() > 1000) {
                    wrong.add(shown + " -> " + error.getSQLState() + " " + error.getServerErrorMessage().getMessage()
                            + " (expected " + c[0] + " naming " + c[1] + ")");
                }
            }
        }
        assertThat(wrong).isEmpty();
        assertThat(footprint()).isEqualTo(before);
    }

    @Test
    void theIssuesLockExhaustingClaimIsRefusedAtOnce() throws SQLException {
        try (Connection connection = roles.connectAs(acme)) {
            long started = System.nanoTime();
            PSQLException error = catchThrowableOfType(() -> SqlTestDatabase.rows(connection, "SELECT count(*) FROM "
                    + "queue.engine_claim('acme', (SELECT array_agg('q'||g) FROM generate_series(1,100000) g), 'w', 1, 4242, "
                    + "30000000, now(), false, NULL::int[], NULL::bigint[], NULL::bigint[], NULL::boolean[])"),
                    PSQLException.class);
            long millis = (System.nanoTime() - started) / 1_000_000;
            assertThat(error.getSQLState()).isEqualTo("QU001");
            assertThat(error.getServerErrorMessage().getMessage()).startsWith("invalid p_topics");
            // about half a second to "53200 out of shared memory" before
            assertThat(millis).as("milliseconds to refuse").isLessThan(2_000);
            // within the bound, a claim's locks are its topics'
            connection.setAutoCommit(false);
            SqlTestDatabase.rows(connection, "SELECT count(*) FROM queue.engine_claim('acme', (SELECT array_agg('q'||g) FROM "
                    + "generate_series(1,64) g), 'w', 1, 4242, 30000000, now(), false, NULL, NULL, NULL, NULL)");
            assertThat(SqlTestDatabase.rows(connection, "SELECT count(*) AS n FROM pg_locks "
                    + "WHERE pid = pg_backend_pid() AND locktype = 'advisory'")).extracting(r -> r.get("n")).containsExactly(64L);
            connection.rollback();
        }
    }

    @Test
    void theValuesTheJavaQueueSendsPass() throws SQLException {
        try (Connection connection = roles.connectAs(acme)) {
            connection.setAutoCommit(false);
            // a fired schedule's message carries the queue's own headers
            assertThat(SqlTestDatabase.rows(connection, "SELECT * FROM queue.engine_publish(ARRAY['acme'], ARRAY['email'], "
                    + "ARRAY['{\"a\":1}'], ARRAY['{\"queue-schedule\":\"nightly\",\"queue-due-at\":\"2030-01-01T00:00:00Z\"}'], "
                    + "ARRAY[9], ARRAY[1000], ARRAY['schedule:nightly:2030-01-01T00:00:00Z'], ARRAY[253402300799000000], "
                    + "ARRAY[NULL::bigint], NULL, true, NULL, NULL)")).hasSize(1);
            // a claim's positions: one element per topic, none known
            assertThat(SqlTestDatabase.rows(connection, "SELECT * FROM queue.engine_claim('acme', ARRAY['email', 'sms'], 'w', "
                    + "1000, 42, 86400000000, NULL, true, ARRAY[NULL, NULL]::int[], ARRAY[NULL, NULL]::bigint[], "
                    + "ARRAY[NULL, NULL]::bigint[], ARRAY[NULL, NULL]::boolean[])")).isNotEmpty();
            // a flush with no publish (the minute's snapshot), a snooze until a past time, a retry's longest delay
            SqlTestDatabase.rows(connection, "SELECT queue.engine_record_rates(ARRAY[]::text[], ARRAY[]::text[], "
                    + "ARRAY[]::bigint[], NULL)");
            SqlTestDatabase.rows(connection, "SELECT * FROM queue.engine_snooze('acme', ARRAY[1]::bigint[], ARRAY[1]::bigint[], "
                    + "NULL, '1970-01-01Z', NULL, true)");
            SqlTestDatabase.rows(connection, "SELECT * FROM queue.engine_retry('acme', ARRAY[1]::bigint[], ARRAY[1]::bigint[], "
                    + "63072000000000, NULL, NULL, true)");
            // 10,000 leases at once
            SqlTestDatabase.rows(connection, "SELECT * FROM queue.engine_complete('acme', (SELECT array_agg(g::bigint) FROM "
                    + "generate_series(1, 10000) g), (SELECT array_agg(g::bigint) FROM generate_series(1, 10000) g), NULL, NULL, "
                    + "true)");
            connection.rollback();
        }
    }

    /** The SQLSTATE of the statement's error, null when it succeeds. */
    private static String stateOf(Connection connection, String sql) {
        PSQLException error = catchThrowableOfType(() -> SqlTestDatabase.rows(connection, sql), PSQLException.class);
        return error == null ? null : error.getSQLState();
    }

    /** What the functions write, the tables of the claim's looks and the rates included. */
    private Map<String, String> footprint() {
        Map<String, String> contents = new LinkedHashMap<>(db.footprint());
        for (String table : List.of("head_sweeps", "topic_published", "topic_completed", "attempt_errors")) {
            contents.put(table, (String) db.value("SELECT count(*) || ':' || coalesce(md5(string_agg(t::text, '|' "
                    + "ORDER BY t::text)), '') FROM queue." + table + " t"));
        }
        return contents;
    }
}
