package dev.queue.postgres.sql;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.postgresql.util.PSQLException;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * A hostile tenant: a role granted only {@code acme} tries everything it can think of against {@code globex},
 * through every function and through direct SQL on every table and sequence. Each attempt is refused or sees
 * nothing, and globex's rows (of every table) are the same afterwards.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlHostileTenantTest {

    /** The SQLSTATEs of a refusal: the queue's own (not granted, tenant mismatch, bad name) and PostgreSQL's. */
    private static final Set<String> REFUSALS = Set.of("QU005", "QU002", "QU001", "42501");

    private SqlTenantRoles roles;
    private SqlTestDatabase db;
    private String acme;
    private String globex;
    private String stranger;
    private long globexPending;
    private long globexRunning;
    private long globexExpired;
    private long globexDead;

    @BeforeAll
    void createTenants() {
        roles = SqlTenantRoles.create("sqlhostile");
        db = roles.db;
        acme = roles.login("acme");
        globex = roles.login("globex");
        // executes the functions like a tenant, but holds no grant at all
        stranger = roles.login("stranger", "queue_tenant");
        db.value("SELECT queue.grant_tenant('acme', ?)", acme);
        db.value("SELECT queue.grant_tenant('globex', ?)", globex);

        db.rows("SELECT queue.set_queue_policy('globex', 'email', p_max_attempts := 7, p_archive_completed := true)");
        globexPending = ((Number) db.value("SELECT queue.push('globex', 'email', '{\"secret\":1}')")).longValue();
        long acked = ((Number) db.value("SELECT queue.push('globex', 'email', '{\"secret\":2}')")).longValue();
        globexRunning = ((Number) db.value("SELECT queue.push('globex', 'email', '{\"secret\":3}')")).longValue();
        globexExpired = ((Number) db.value("SELECT queue.push('globex', 'email', '{\"secret\":4}')")).longValue();
        globexDead = ((Number) db.value("SELECT queue.push('globex', 'email', '{\"secret\":5}')")).longValue();
        db.rows("UPDATE queue.messages SET run_at = now() + interval '1 hour' WHERE id = ?", globexPending);
        for (int i = 0; i < 4; i++) {
            db.rows("SELECT * FROM queue.pull('globex', 'email', 'globex-worker')");
        }
        db.value("SELECT queue.ack('globex', ?)", acked);
        db.value("SELECT queue.nack('globex', ?, 'first try failed', interval '0')", globexDead);
        db.rows("SELECT * FROM queue.pull('globex', 'email', 'globex-worker')");
        db.value("SELECT queue.fail('globex', ?, 'gave up')", globexDead);
        db.rows("UPDATE queue.messages SET lease_until = now() - interval '1 minute' WHERE id = ?", globexExpired);
        db.value("SELECT queue.create_schedule('globex', 'nightly', 'email', '{}', p_every_interval := '1 hour')");
        db.rows("UPDATE queue.schedules SET next_run_at = now() - interval '1 minute' WHERE namespace = 'globex'");
        assertThat(db.value("SELECT state FROM queue.inspect('globex', ?)", globexRunning)).isEqualTo("running");
        assertThat(db.value("SELECT state FROM queue.inspect('globex', ?)", globexDead)).isEqualTo("dead");
        assertThat(db.count("SELECT count(*) FROM queue.attempt_errors WHERE namespace = 'globex'")).isEqualTo(2);
        assertThat(db.count("SELECT count(*) FROM queue.completed_messages WHERE namespace = 'globex'")).isEqualTo(1);
    }

    @AfterAll
    void dropTenants() {
        roles.close();
    }

    /** Attempts that must be refused with a SQLSTATE of {@link #REFUSALS}. */
    private List<String> refusedAttempts() {
        List<String> sql = new ArrayList<>();
        for (String ns : List.of("globex", "GLOBEX", "Globex", "acme-globex", "*")) {
            String n = "'" + ns + "'";
            sql.add("SELECT queue.push(" + n + ", 'email', '{}')");
            sql.add("SELECT * FROM queue.push_batch(" + n + ", 'email', ARRAY['{}']::json[])");
            sql.add("SELECT * FROM queue.pull(" + n + ", 'email')");
            sql.add("SELECT * FROM queue.pull_batch(" + n + ", 'email', 10)");
            sql.add("SELECT * FROM queue.pull_any(" + n + ", ARRAY['email'])");
            sql.add("SELECT queue.ack(" + n + ", " + globexRunning + ")");
            sql.add("SELECT * FROM queue.ack_batch(" + n + ", ARRAY[" + globexRunning + "]::bigint[])");
            sql.add("SELECT queue.nack(" + n + ", " + globexRunning + ", 'x')");
            sql.add("SELECT queue.fail(" + n + ", " + globexRunning + ", 'x')");
            sql.add("SELECT queue.extend_visibility(" + n + ", " + globexRunning + ", interval '1 hour')");
            sql.add("SELECT * FROM queue.get_stats(" + n + ")");
            sql.add("SELECT * FROM queue.get_queue_stats(" + n + ")");
            sql.add("SELECT * FROM queue.inspect(" + n + ", " + globexDead + ")");
            sql.add("SELECT * FROM queue.inspect_attempts(" + n + ", " + globexDead + ")");
            sql.add("SELECT * FROM queue.list_dead_letters(" + n + ")");
            sql.add("SELECT * FROM queue.redrive_dead_letters(" + n + ")");
            sql.add("SELECT * FROM queue.redrive_dead_letters(" + n + ", p_ids := ARRAY[" + globexDead + "]::bigint[])");
            sql.add("SELECT queue.purge_dead_letters(" + n + ")");
            sql.add("SELECT * FROM queue.rescue_expired(" + n + ")");
            sql.add("SELECT queue.create_schedule(" + n + ", 'nightly', 'email', '{}', p_every_interval := '1 minute')");
            sql.add("SELECT queue.update_schedule(" + n + ", 'nightly', p_priority := 9)");
            sql.add("SELECT queue.delete_schedule(" + n + ", 'nightly')");
            sql.add("SELECT * FROM queue.list_schedules(" + n + ")");
            sql.add("SELECT queue.pause_schedule(" + n + ", 'nightly')");
            sql.add("SELECT queue.resume_schedule(" + n + ", 'nightly')");
            sql.add("SELECT * FROM queue.tick_schedules(" + n + ")");
            sql.add("SELECT * FROM queue.set_queue_policy(" + n + ", 'email', p_max_attempts := 1)");
            sql.add("SELECT * FROM queue.set_queue_policy(" + n + ", '*', p_max_attempts := 1)");
            sql.add("SELECT * FROM queue.list_audit_log(" + n + ")");
            sql.add("SELECT queue.pause_queue(" + n + ", 'email')");
            sql.add("SELECT queue.resume_queue(" + n + ", 'email')");
            sql.add("SELECT * FROM queue.list_paused_queues(" + n + ")");
            sql.add("SELECT queue.cancel(" + n + ", " + globexPending + ")");
            sql.add("SELECT queue.cancel(" + n + ", " + globexRunning + ")");
            sql.add("SELECT queue.snooze(" + n + ", " + globexRunning + ", interval '1 minute')");
            sql.add("SELECT queue.engine_pause_topic(" + n + ", 'email', true, NULL, false, 'x')");
            sql.add("SELECT * FROM queue.engine_paused_topics(" + n + ")");
            sql.add("SELECT queue.engine_cancel(" + n + ", " + globexPending + ", NULL, 'x')");
            sql.add("SELECT * FROM queue.engine_snooze(" + n + ", ARRAY[" + globexRunning + "]::bigint[], ARRAY[0]::bigint[], 0, NULL, NULL, false)");
        }
        // crafted names: quotes, LIKE wildcards, spaces, case, unicode look-alikes (Cyrillic e, full-width letters)
        for (String ns : List.of("globex''", "globex'' OR ''1''=''1", "glob%", "glob_x", "%", "_", "globex ", " globex",
                "glob\u0435x", "\uff47lobex", "globex\u200b", "globex/", "globex;")) {
            String n = "'" + ns + "'";
            sql.add("SELECT queue.push(" + n + ", 'email', '{}')");
            sql.add("SELECT * FROM queue.pull(" + n + ", 'email')");
            sql.add("SELECT * FROM queue.list_dead_letters(" + n + ")");
            sql.add("SELECT queue.purge_dead_letters(" + n + ")");
            sql.add("SELECT * FROM queue.get_stats(" + n + ")");
            sql.add("SELECT * FROM queue.inspect(" + n + ", " + globexDead + ")");
        }
        sql.add("SELECT * FROM queue.set_queue_policy('*', '*', p_max_attempts := 1)");
        sql.add("SELECT * FROM queue.set_queue_policy('*', 'email', p_max_attempts := 1)");
        // administration
        sql.add("SELECT queue.grant_tenant('globex', current_user)");
        sql.add("SELECT queue.grant_tenant('globex', session_user)");
        sql.add("SELECT queue.revoke_tenant('globex', '" + globex + "')");
        sql.add("SELECT * FROM queue.list_tenant_grants()");
        sql.add("CALL queue.setup_roles()");
        // internal functions: no EXECUTE for tenants
        sql.add("SELECT queue._secure_schema()");
        sql.add("SELECT queue._check_access('globex')");
        sql.add("SELECT queue._insert_message('globex', 'email', '{}', '{}', 0, 1, NULL, now(), false)");
        sql.add("SELECT * FROM queue._complete('globex', ARRAY[" + globexRunning + "]::bigint[], NULL)");
        sql.add("SELECT queue._bury(" + globexRunning + ", 'x', NULL)");
        sql.add("SELECT queue._held('globex', " + globexRunning + ", NULL)");
        sql.add("SELECT * FROM queue._claim('globex', ARRAY['email'], 'w', interval '1 minute', 10)");
        sql.add("SELECT queue._engine_cancel('globex', " + globexPending + ", NULL, 'x')");
        sql.add("SELECT queue._engine_pause_topic('globex', 'email', true, NULL, false, 'x')");
        sql.add("SELECT queue._record_attempt(" + globexDead + ", 'globex', 1, 'x', 'w', now(), now(), 'retry', NULL)");
        // becoming someone else
        sql.add("SET ROLE " + globex);
        sql.add("SET ROLE queue_owner");
        sql.add("SET ROLE queue_app");
        sql.add("SET ROLE queue_operator");
        sql.add("SET ROLE postgres");
        sql.add("SET SESSION AUTHORIZATION " + globex);
        sql.add("SET SESSION AUTHORIZATION postgres");
        // creating objects where the functions look
        sql.add("CREATE FUNCTION queue.is_trusted_too() RETURNS boolean LANGUAGE sql AS 'SELECT true'");
        sql.add("CREATE TABLE queue.shadow (namespace text)");
        // direct SQL on every table and sequence
        for (String table : roles.relations("r")) {
            String t = "queue." + table;
            sql.add("SELECT count(*) FROM " + t);
            sql.add("SELECT * FROM " + t + " WHERE ctid = '(0,1)'");
            sql.add("INSERT INTO " + t + " DEFAULT VALUES");
            String column = roles.firstColumn(table);
            sql.add("UPDATE " + t + " SET " + column + " = " + column);
            sql.add("DELETE FROM " + t);
            sql.add("TRUNCATE " + t);
            sql.add("ALTER TABLE " + t + " DISABLE ROW LEVEL SECURITY");
            if (roles.tenantTables().contains(table) && !table.equals("tenant_grants")) {
                sql.add("DROP POLICY tenant_isolation ON " + t);
            }
        }
        for (String sequence : roles.relations("S")) {
            String s = "queue." + sequence;
            sql.add("SELECT nextval('" + s + "')");
            sql.add("SELECT setval('" + s + "', 1)");
            sql.add("SELECT last_value FROM " + s);
        }
        return sql;
    }

    private static String refusal(Connection connection, String sql) {
        PSQLException error = catchThrowableOfType(() -> SqlTestDatabase.rows(connection, sql), PSQLException.class);
        return error == null ? null : error.getSQLState() + " " + error.getServerErrorMessage().getMessage();
    }

    @Test
    void everyAttemptOnAnotherNamespaceIsRefusedAndLeavesItsRowsAsTheyWere() throws SQLException {
        Map<String, String> before = roles.dumpExcept("acme");
        List<String> attempts = refusedAttempts();
        List<String> accepted = new ArrayList<>();
        for (String login : List.of(acme, stranger)) {
            for (String setup : List.of("SELECT 1", "SELECT queue.set_tenant('globex')",
                    "SELECT set_config('queue.tenant_id', 'globex', false)")) {
                // one connection for all: each attempt is a statement of its own (auto-commit), and one that
                // changed the session (a SET ROLE accepted) is reported below anyway
                try (Connection connection = roles.connectAs(login)) {
                    SqlTestDatabase.rows(connection, setup);
                    for (String sql : attempts) {
                        String refusal = refusal(connection, sql);
                        if (refusal == null || !REFUSALS.contains(refusal.substring(0, 5))) {
                            accepted.add(login + " after " + setup + ": " + sql + " -> " + refusal);
                        }
                    }
                }
            }
        }
        assertThat(accepted).as("attempts not refused").isEmpty();
        assertThat(roles.dumpExcept("acme")).isEqualTo(before);
    }

    @Test
    void theRefusalNamesTheNamespaceAndTheRoleWithTheQueuesSqlState() throws SQLException {
        try (Connection connection = roles.connectAs(acme)) {
            PSQLException error = catchThrowableOfType(
                    () -> SqlTestDatabase.rows(connection, "SELECT queue.push('globex', 'email', '{}')"), PSQLException.class);
            assertThat(error.getSQLState()).isEqualTo("QU005");
            assertThat(error.getServerErrorMessage().getMessage())
                    .isEqualTo("namespace \"globex\" is not granted to role \"" + acme + "\"");
        }
        try (Connection connection = roles.connectAs(acme)) {
            SqlTestDatabase.rows(connection, "SELECT queue.set_tenant('globex')");
            PSQLException error = catchThrowableOfType(
                    () -> SqlTestDatabase.rows(connection, "SELECT * FROM queue.get_stats('globex')"), PSQLException.class);
            assertThat(error.getSQLState()).isEqualTo("QU005");
        }
    }

    /** Calls that are not refused, since they name the caller's own namespace or none, must find nothing of globex. */
    @Test
    void callsWithTheirOwnNamespaceOrNoneSeeNothingOfAnotherAndChangeNothing() throws SQLException {
        Map<String, String> before = roles.dumpExcept("acme");
        try (Connection connection = roles.connectAs(acme)) {
            for (long id : List.of(globexPending, globexRunning, globexExpired, globexDead)) {
                assertThat(SqlTestDatabase.rows(connection, "SELECT queue.ack('acme', ?) AS r", id)).extracting(r -> r.get("r")).containsExactly(false);
                assertThat(SqlTestDatabase.rows(connection, "SELECT * FROM queue.ack_batch('acme', ARRAY[?]::bigint[])", id))
                        .extracting(r -> r.get("acked")).containsExactly(false);
                assertThat(SqlTestDatabase.rows(connection, "SELECT queue.nack('acme', ?, 'x', interval '0') AS r", id)).extracting(r -> r.get("r")).containsExactly(false);
                assertThat(SqlTestDatabase.rows(connection, "SELECT queue.fail('acme', ?, 'x') AS r", id)).extracting(r -> r.get("r")).containsExactly(false);
                assertThat(SqlTestDatabase.rows(connection, "SELECT queue.extend_visibility('acme', ?, interval '1 hour') AS r", id))
                        .extracting(r -> r.get("r")).containsExactly(false);
                assertThat(SqlTestDatabase.rows(connection, "SELECT * FROM queue.inspect('acme', ?)", id)).isEmpty();
                assertThat(SqlTestDatabase.rows(connection, "SELECT * FROM queue.inspect_attempts('acme', ?)", id)).isEmpty();
                assertThat(SqlTestDatabase.rows(connection, "SELECT redriven FROM queue.redrive_dead_letters('acme', p_ids := ARRAY[?]::bigint[])", id))
                        .extracting(r -> r.get("redriven")).containsExactly(0);
                assertThat(SqlTestDatabase.rows(connection, "SELECT queue.purge_dead_letters('acme', p_ids := ARRAY[?]::bigint[]) AS r", id))
                        .extracting(r -> r.get("r")).containsExactly(0);
            }
            assertThat(SqlTestDatabase.rows(connection, "SELECT * FROM queue.pull('acme', 'email')")).isEmpty();
            assertThat(SqlTestDatabase.rows(connection, "SELECT * FROM queue.list_dead_letters('acme')")).isEmpty();
            assertThat(SqlTestDatabase.rows(connection, "SELECT * FROM queue.get_queue_stats('acme')")).isEmpty();
            assertThat(SqlTestDatabase.rows(connection, "SELECT * FROM queue.list_schedules('acme')")).isEmpty();
            assertThat(SqlTestDatabase.rows(connection, "SELECT * FROM queue.list_audit_log('acme')"))
                    .extracting(r -> r.get("action")).containsOnly("grant_tenant");
            PSQLException notFound = catchThrowableOfType(() -> SqlTestDatabase.rows(connection,
                    "SELECT queue.pause_schedule('acme', 'nightly')"), PSQLException.class);
            assertThat(notFound.getSQLState()).isEqualTo("QU003");
            // no namespace: row-level security keeps the functions to acme's rows (globex's lease has expired and
            // its schedule is due, yet neither is touched)
            assertThat(SqlTestDatabase.rows(connection, "SELECT * FROM queue.rescue_expired()"))
                    .extracting(r -> r.get("requeued") + "/" + r.get("dead_lettered")).containsExactly("0/0");
            assertThat(SqlTestDatabase.rows(connection, "SELECT * FROM queue.tick_schedules()")).isEmpty();
            assertThat(SqlTestDatabase.rows(connection, "SELECT queue.delete_queue_policy('*', 'email') AS r"))
                    .extracting(r -> r.get("r")).containsExactly(false);
            // another namespace's policy is refused like its messages (issue 45), not answered with the defaults
            PSQLException refused = catchThrowableOfType(() -> SqlTestDatabase.rows(connection,
                    "SELECT max_attempts FROM queue.get_queue_policy('globex', 'email')"), PSQLException.class);
            assertThat(refused.getSQLState()).isEqualTo("QU005");
            assertThat(SqlTestDatabase.rows(connection, "SELECT queue.is_trusted() AS t, queue.granted_namespaces() AS g"))
                    .extracting(r -> r.get("t") + " " + r.get("g")).containsExactly("false {acme}");
            assertThat(SqlTestDatabase.rows(connection, "SELECT queue.may_use('globex') AS r")).extracting(r -> r.get("r")).containsExactly(false);
        }
        try (Connection connection = roles.connectAs(stranger)) {
            assertThat(SqlTestDatabase.rows(connection, "SELECT * FROM queue.rescue_expired()"))
                    .extracting(r -> r.get("requeued") + "/" + r.get("dead_lettered")).containsExactly("0/0");
            assertThat(SqlTestDatabase.rows(connection, "SELECT * FROM queue.tick_schedules()")).isEmpty();
            assertThat(SqlTestDatabase.rows(connection, "SELECT queue.granted_namespaces() AS g")).extracting(r -> r.get("g").toString())
                    .containsExactly("{}");
        }
        assertThat(roles.dumpExcept("acme")).isEqualTo(before);
    }

    @Test
    void healthShowsATenantNoOtherNamespaceAndNoOtherLoginsSession() throws SQLException {
        // initech: a due message nobody subscribes; the superuser's transaction: open while health runs
        db.value("SELECT queue.push('initech', 'reports', '{\"secret\":6}')");
        String options = "p_max_pending_age := interval '0', p_max_transaction_age := interval '0'";
        try (Connection holder = db.connect()) {
            holder.setAutoCommit(false);
            SqlTestDatabase.rows(holder, "SELECT txid_current() AS x");
            List<Map<String, Object>> operatorView = db.rows("SELECT code, namespace, evidence::text AS evidence FROM queue.health("
                    + options + ")");
            assertThat(operatorView).extracting(r -> r.get("code") + " " + r.get("namespace"))
                    .contains("no_subscriber initech", "long_transaction null");
            assertThat(operatorView).filteredOn(r -> "long_transaction".equals(r.get("code")))
                    .extracting(r -> (String) r.get("evidence")).anyMatch(e -> e.contains("\"user\""));
            try (Connection connection = roles.connectAs(acme)) {
                List<Map<String, Object>> tenantView = SqlTestDatabase.rows(connection,
                        "SELECT code, namespace, message, evidence::text AS evidence, advice FROM queue.health(" + options + ")");
                assertThat(tenantView).extracting(r -> r.get("namespace")).allMatch(n -> n == null || n.equals("acme"));
                List<Map<String, Object>> horizon = tenantView.stream()
                        .filter(r -> "long_transaction".equals(r.get("code"))).toList();
                assertThat(horizon).isNotEmpty();
                assertThat(horizon).extracting(r -> (String) r.get("evidence"))
                        .allMatch(e -> !e.contains("\"user\"") && !e.contains("\"query\"") && !e.contains("application_name"));
                assertThat(horizon).extracting(r -> (String) r.get("message")).allMatch(m -> m.startsWith("a transaction of another login"));
            }
            holder.rollback();
        }
    }

    @Test
    void theFunctionsRunAsAnOwnerThatRowLevelSecurityBinds() {
        assertThat(db.rows("SELECT r.rolname::text AS owner, r.rolsuper AS s, r.rolbypassrls AS b FROM pg_namespace n "
                + "JOIN pg_roles r ON r.oid = n.nspowner WHERE n.nspname = 'queue'"))
                .extracting(r -> r.get("owner") + " " + r.get("s") + " " + r.get("b")).containsExactly("queue_owner false false");
        assertThat(db.count("SELECT count(*) FROM pg_proc p WHERE p.pronamespace = 'queue'::regnamespace "
                + "AND p.proowner <> 'queue_owner'::regrole")).isZero();
        assertThat(db.count("SELECT count(*) FROM pg_proc p WHERE p.pronamespace = 'queue'::regnamespace "
                + "AND left(p.proname, 1) <> '_' AND p.prokind = 'f' AND NOT p.prosecdef")).isZero();
        assertThat(db.count("SELECT count(*) FROM pg_proc p WHERE p.pronamespace = 'queue'::regnamespace "
                + "AND has_function_privilege('public', p.oid, 'EXECUTE')")).isZero();
        for (String table : roles.tenantTables()) {
            if (table.equals("tenant_grants")) {
                continue;
            }
            assertThat(db.rows("SELECT relrowsecurity AND relforcerowsecurity AS f FROM pg_class WHERE oid = ?::regclass",
                    "queue." + table)).as(table).extracting(r -> r.get("f")).containsExactly(true);
        }
    }
}
