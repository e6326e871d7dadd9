package dev.queue.postgres.sql;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.postgresql.util.PSQLException;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The administrator's slip of issue 45: a tenant's login, granted {@code acme}, is also given every privilege on
 * every table, sequence and routine of the schema ({@code GRANT ALL ON ALL TABLES ...}). It still reaches nothing of
 * {@code globex}: no row of any table through direct SQL (row-level security has no policy for it, so it sees and
 * writes no row at all, not even its own), no edit of the grants that would hand it another tenant, no internal
 * function (each refuses it with QU005), no TRUNCATE; the gates still refuse globex, and its own namespace still
 * works through the public functions. The next migration revokes what row-level security cannot bind.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlCarelessAdministratorTest {

    /** What a careless administrator runs for the tenant's login. */
    static List<String> everyPrivilegeOfTheSchema(String login) {
        return List.of(
                "GRANT ALL ON ALL TABLES IN SCHEMA queue TO " + login,
                "GRANT ALL ON ALL SEQUENCES IN SCHEMA queue TO " + login,
                "GRANT EXECUTE ON ALL ROUTINES IN SCHEMA queue TO " + login,
                "GRANT USAGE ON SCHEMA queue TO " + login);
    }

    /**
     * Internal functions that compute from their arguments only, or check the caller's own arguments and rights the
     * way the public functions do (may_use, is_trusted), so they need no caller check: everything else internal
     * refuses a login outside the queue's roles. The argument and caller checks, {@code _check_*}, are of that kind
     * by their name; any other new internal function must be classified here or refuse such a login.
     */
    static final Set<String> PURE = Set.of(
            "_shown", "_invalid", "_micros", "_error_text", "_instant_text", "_shown_time", "_shown_age",
            "_flow_lock_key", "_bucket_tokens", "_limit_partition", "_rate_alone", "_slots_alone",
            "_rules_invalid", "_cron_split", "_cron_invalid", "_cron_number", "_cron_parse_element", "_cron_parse_field",
            "_cron_next_value", "_cron_month_days", "_cron_resolve", "_cron_change", "_cron_closest",
            "_cron_next_execution", "_cron_time_zone",
            "_schedule_next_after", "_schedule_latest", "_schedule_changed", "_schedule_not_found", "_prepare_schedule",
            "_minute_of", "_rates_kept", "_worker_alive", "_notify_wanted", "_run_at", "_is_name", "_is_text",
            "_is_engine_caller");

    /**
     * Internal functions that only read, with the caller's rights, a table whose row-level security binds that login
     * as it binds a plain SELECT: they show the login nothing it could not read itself. {@code _queue_policy} runs once
     * per completed message, where a caller check would cost every completion.
     */
    static final Set<String> READ_UNDER_ROW_SECURITY = Set.of("_queue_policy");

    private SqlTenantRoles roles;
    private SqlTestDatabase db;
    private String acme;
    private String globex;
    private long globexPending;
    private long globexRunning;

    @BeforeAll
    void createTenantsAndTheSlip() throws SQLException {
        roles = SqlTenantRoles.create("sqlcareless");
        db = roles.db;
        acme = roles.login("acme");
        globex = roles.login("globex");
        db.value("SELECT queue.grant_tenant('acme', ?)", acme);
        db.value("SELECT queue.grant_tenant('globex', ?)", globex);
        fillEveryTableWithGlobex();
        for (String grant : everyPrivilegeOfTheSchema(acme)) {
            db.rows(grant);
        }
    }

    /** globex in every table, so that each has a row to steal, change or copy. */
    private void fillEveryTableWithGlobex() throws SQLException {
        db.rows("SELECT queue.set_queue_policy('globex', 'email', p_max_attempts := 2, p_archive_completed := true)");
        globexPending = ((Number) db.value("SELECT queue.push('globex', 'email', '{\"secret\":1}')")).longValue();
        db.rows("UPDATE queue.messages SET run_at = now() + interval '1 hour' WHERE id = ?", globexPending);
        long acked = ((Number) db.value("SELECT queue.push('globex', 'email', '{\"secret\":2}')")).longValue();
        long retried = ((Number) db.value("SELECT queue.push('globex', 'email', '{\"secret\":3}')")).longValue();
        globexRunning = ((Number) db.value("SELECT queue.push('globex', 'email', '{\"secret\":4}')")).longValue();
        for (int i = 0; i < 3; i++) {
            db.rows("SELECT * FROM queue.pull('globex', 'email', 'globex-worker')");
        }
        db.value("SELECT queue.ack('globex', ?)", acked);
        db.value("SELECT queue.nack('globex', ?, 'first try failed', interval '0')", retried);
        db.rows("SELECT * FROM queue.pull('globex', 'email', 'globex-worker')");
        db.value("SELECT queue.fail('globex', ?, 'gave up')", retried);
        db.value("SELECT queue.create_schedule('globex', 'nightly', 'email', '{}', p_every_interval := '1 hour')");
        db.value("SELECT queue.pause_queue('globex', 'paused')");
        db.rows("SELECT queue.set_queue_ordering('globex', 'email', 'continue')");
        db.value("SELECT queue.set_queue_limits('globex', 'limited', p_max_running := 5, p_rate_limit := 100, "
                + "p_rate_period := interval '1 second')");
        db.value("SELECT queue.push('globex', 'limited', '{}')");
        db.rows("SELECT * FROM queue.pull('globex', 'limited', 'globex-worker')");
        db.value("SELECT queue.set_queue_limits('globex', 'seated', p_max_running := 2)");
        db.value("SELECT queue.push('globex', 'seated', '{}')");
        db.rows("SELECT * FROM queue.pull('globex', 'seated', 'globex-worker')");
        db.rows("SELECT * FROM queue.engine_take_head_sweeps('globex', ARRAY['email'], 0, now())");
        db.rows("SELECT queue.record_rates()");
        db.rows("SELECT queue.set_audit_retention(interval '400 days')");
        try (Connection connection = roles.connectAs(globex)) {
            SqlTestDatabase.rows(connection, "SELECT queue.worker_heartbeat('globex-process', 'host', 1, now(), "
                    + "p_subscriptions := '[{\"namespace\":\"globex\",\"topics\":[\"email\"],\"worker\":\"globex-worker\","
                    + "\"concurrency\":1,\"in_flight\":1}]')");
        }
        List<String> empty = new ArrayList<>();
        for (String table : roles.relations("r")) {
            if (db.count("SELECT count(*) FROM queue." + table) == 0) {
                empty.add(table);
            }
        }
        assertThat(empty).as("tables without a row to attack: give them one here").isEmpty();
    }

    @AfterAll
    void dropTenants() {
        roles.close();
    }

    /** Every row of every table as the superuser sees it, but acme's own rows of tenant data. */
    private Map<String, String> everythingButAcme() {
        Map<String, String> dump = new LinkedHashMap<>();
        List<String> tenantTables = roles.tenantTables();
        for (String table : roles.relations("r")) {
            boolean acmesOwn = tenantTables.contains(table) && !table.equals("tenant_grants");
            dump.put(table, (String) db.value("SELECT count(*) || ':' || coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '') "
                    + "FROM queue." + table + " t" + (acmesOwn ? " WHERE t.namespace <> 'acme'" : "")));
        }
        return dump;
    }

    private static String sqlState(Connection connection, String sql, Object... params) {
        PSQLException error = catchThrowableOfType(() -> SqlTestDatabase.rows(connection, sql, params), PSQLException.class);
        return error == null ? null : error.getSQLState();
    }

    private static int updated(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            return statement.executeUpdate(sql);
        }
    }

    @Test
    void directSqlReadsNoRowOfAnyTableAndWritesNone() throws SQLException {
        Map<String, String> before = everythingButAcme();
        List<String> broken = new ArrayList<>();
        try (Connection connection = roles.connectAs(acme)) {
            for (String table : roles.relations("r")) {
                String t = "queue." + table;
                String column = roles.firstColumn(table);
                long rows = ((Number) SqlTestDatabase.rows(connection, "SELECT count(*) AS n FROM " + t).get(0).get("n")).longValue();
                if (rows != 0) {
                    broken.add(table + ": read " + rows + " rows");
                }
                if (!SqlTestDatabase.rows(connection, "SELECT * FROM " + t + " FOR UPDATE").isEmpty()) {
                    broken.add(table + ": locked rows");
                }
                if (updated(connection, "UPDATE " + t + " SET " + column + " = " + column) != 0) {
                    broken.add(table + ": updated rows");
                }
                if (updated(connection, "DELETE FROM " + t) != 0) {
                    broken.add(table + ": deleted rows");
                }
                // a copy of a row the superuser sees, written back by the tenant: refused by the policies' absence
                // (queue_policies: by its trigger before that, which refuses a tenant's '*')
                String row = (String) db.value("SELECT row_to_json(t)::text FROM " + t + " t ORDER BY t::text LIMIT 1");
                String insert = sqlState(connection, "INSERT INTO " + t + " OVERRIDING SYSTEM VALUE "
                        + "SELECT * FROM json_populate_record(NULL::" + t + ", ?::json)", row);
                if (!"42501".equals(insert) && !(table.equals("queue_policies") && "QU005".equals(insert))) {
                    broken.add(table + ": insert gave " + insert);
                }
                String truncate = sqlState(connection, "TRUNCATE " + t);
                if (!"QU005".equals(truncate)) {
                    broken.add(table + ": truncate gave " + truncate);
                }
            }
            // the slip of the issue: the tenant hands itself another tenant by editing its grant
            assertThat(updated(connection, "UPDATE queue.tenant_grants SET namespace = 'globex' WHERE namespace = 'acme'")).isZero();
            assertThat(sqlState(connection, "INSERT INTO queue.tenant_grants VALUES ('globex', current_user, now(), 'me')"))
                    .isEqualTo("42501");
            assertThat(SqlTestDatabase.rows(connection, "SELECT queue.may_use('globex') AS g, queue.granted_namespaces()::text AS n"))
                    .extracting(r -> r.get("g") + " " + r.get("n")).containsExactly("false {acme}");
        }
        assertThat(broken).isEmpty();
        assertThat(everythingButAcme()).isEqualTo(before);
    }

    @Test
    void everyInternalFunctionRefusesTheLoginButThePureOnes() throws SQLException {
        List<Map<String, Object>> functions = db.rows("""
                SELECT p.proname::text AS name, p.prorettype = 'trigger'::regtype AS trigger, p.prosecdef AS definer,
                       format(CASE WHEN p.prorettype = 'trigger'::regtype THEN 'SELECT queue.%I(%s)' ELSE 'SELECT * FROM queue.%I(%s)' END,
                              p.proname,
                              coalesce((SELECT string_agg('NULL::' || CASE a.t WHEN 'anyarray'::regtype THEN 'text[]'
                                                                             WHEN 'anyelement'::regtype THEN 'text'
                                                                             ELSE format_type(a.t, NULL) END, ', ' ORDER BY a.n)
                                        FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY AS a(t, n)), '')) AS call
                FROM pg_proc p WHERE p.pronamespace = 'queue'::regnamespace AND p.prokind = 'f'
                  AND starts_with(p.proname, '_')
                ORDER BY 1""");
        assertThat(functions).hasSizeGreaterThan(100);
        Map<String, String> before = everythingButAcme();
        List<String> unclassified = new ArrayList<>();
        List<String> guardedPure = new ArrayList<>();
        int refused = 0;
        try (Connection connection = roles.connectAs(acme)) {
            for (Map<String, Object> function : functions) {
                String name = (String) function.get("name");
                PSQLException error = catchThrowableOfType(
                        () -> SqlTestDatabase.rows(connection, (String) function.get("call")), PSQLException.class);
                if ((Boolean) function.get("trigger")) {
                    assertThat((Throwable) error).as(name).isNotNull();
                    assertThat(error.getServerErrorMessage().getMessage()).as(name).contains("trigger functions can only be called as triggers");
                    continue;
                }
                if (READ_UNDER_ROW_SECURITY.contains(name)) {
                    assertThat((Boolean) function.get("definer")).as(name + " runs with the caller's rights").isFalse();
                }
                boolean guarded = error != null && "QU005".equals(error.getSQLState())
                        && error.getServerErrorMessage().getMessage().contains("is internal to schema queue");
                // the guard itself refuses, of course
                boolean pure = (PURE.contains(name) || READ_UNDER_ROW_SECURITY.contains(name) || name.startsWith("_check_"))
                        && !name.equals("_check_engine_caller");
                if (guarded) {
                    refused++;
                    assertThat(error.getServerErrorMessage().getMessage()).as(name).contains(acme);
                    if (pure) {
                        guardedPure.add(name);
                    }
                } else if (!pure) {
                    unclassified.add(name + " -> " + (error == null ? "ran" : error.getSQLState() + " " + error.getMessage()));
                }
            }
        }
        assertThat(unclassified).as("internal functions a tenant's login may run").isEmpty();
        assertThat(guardedPure).as("listed as pure, but refuse the login").isEmpty();
        assertThat(refused).isGreaterThan(50);
        // the error names the function and the role
        PSQLException error = catchThrowableOfType(() -> {
            try (Connection connection = roles.connectAs(acme)) {
                SqlTestDatabase.rows(connection, "SELECT * FROM queue._engine_find('globex', ?)", globexRunning);
            }
        }, PSQLException.class);
        assertThat(error.getServerErrorMessage().getMessage()).isEqualTo("_engine_find is internal to schema queue: role "
                + acme + " is not a member of its owner, queue_app or queue_operator");
        assertThat(everythingButAcme()).isEqualTo(before);
    }

    @Test
    void theTrustedRolesStillCallTheEngineDirectly() throws SQLException {
        String fleet = roles.login("fleet", "queue_app");
        String ops = roles.login("ops", "queue_operator");
        for (String login : List.of(fleet, ops)) {
            try (Connection connection = roles.connectAs(login)) {
                assertThat(SqlTestDatabase.rows(connection, "SELECT state FROM queue._engine_find('globex', ?)", globexRunning))
                        .extracting(r -> r.get("state")).containsExactly("running");
                assertThat(SqlTestDatabase.rows(connection, "SELECT count(*) AS n FROM queue.workers"))
                        .extracting(r -> r.get("n")).containsExactly(1L);
            }
        }
    }

    @Test
    void theGatesStillRefuseGlobexAndAcmesOwnNamespaceWorksThroughTheFunctions() throws SQLException {
        Map<String, String> before = everythingButAcme();
        try (Connection connection = roles.connectAs(acme)) {
            for (String sql : List.of(
                    "SELECT queue.push('globex', 'email', '{}')",
                    "SELECT * FROM queue.pull('globex', 'email')",
                    "SELECT * FROM queue.engine_find('globex', " + globexRunning + ")",
                    "SELECT queue.engine_cancel('globex', " + globexPending + ", NULL, 'x')",
                    "SELECT * FROM queue.engine_snooze('globex', ARRAY[" + globexRunning + "]::bigint[], ARRAY[0]::bigint[], 0, NULL, NULL, false)",
                    "SELECT * FROM queue.engine_paused_topics('globex')",
                    "SELECT queue.grant_tenant('globex', current_user)",
                    "SELECT * FROM queue.list_tenant_grants()")) {
                assertThat(sqlState(connection, sql)).as(sql).isEqualTo("QU005");
            }
            long id = ((Number) SqlTestDatabase.rows(connection, "SELECT queue.push('acme', 'email', '{\"mine\":1}') AS id")
                    .get(0).get("id")).longValue();
            assertThat(SqlTestDatabase.rows(connection, "SELECT state FROM queue.engine_find('acme', ?)", id))
                    .extracting(r -> r.get("state")).containsExactly("pending");
            assertThat(SqlTestDatabase.rows(connection, "SELECT id FROM queue.pull('acme', 'email', 'acme-worker')"))
                    .extracting(r -> ((Number) r.get("id")).longValue()).containsExactly(id);
            assertThat(SqlTestDatabase.rows(connection, "SELECT queue.ack('acme', ?) AS acked", id))
                    .extracting(r -> r.get("acked")).containsExactly(true);
            // without a namespace: row-level security narrows to acme
            SqlTestDatabase.rows(connection, "SELECT * FROM queue.rescue_expired()");
            SqlTestDatabase.rows(connection, "SELECT queue.set_tenant('globex')");
            assertThat(sqlState(connection, "SELECT * FROM queue.get_stats('globex')")).isEqualTo("QU005");
        }
        assertThat(everythingButAcme()).isEqualTo(before);
    }

    /** In a database of its own: the migration changes the privileges the other tests start from. */
    @Test
    void theNextMigrationRevokesWhatRowLevelSecurityCannotBindAndSaysSo() throws SQLException {
        try (SqlTenantRoles own = SqlTenantRoles.create("sqlrevoke")) {
            String tenant = own.login("acme");
            own.db.value("SELECT queue.grant_tenant('acme', ?)", tenant);
            for (String grant : everyPrivilegeOfTheSchema(tenant)) {
                own.db.rows(grant);
            }
            // before the migration: a sequence is the one thing the slip lets it break (setval), never read
            try (Connection connection = own.connectAs(tenant)) {
                assertThat(sqlState(connection, "SELECT setval('queue.message_ids', 1000)")).isNull();
                assertThat(sqlState(connection, "TRUNCATE queue.messages")).isEqualTo("QU005");
            }
            List<String> warnings = new ArrayList<>();
            try (Connection connection = own.db.connect(); Statement statement = connection.createStatement()) {
                statement.execute("SELECT queue._secure_schema()");
                for (SQLWarning w = statement.getWarnings(); w != null; w = w.getNextWarning()) {
                    warnings.add(w.getMessage());
                }
            }
            // MAINTAIN too on PostgreSQL 17
            assertThat(warnings).anyMatch(w -> w.startsWith("revoked ") && w.contains("REFERENCES, TRIGGER, TRUNCATE on queue.messages from " + tenant + ":"));
            assertThat(warnings).anyMatch(w -> w.startsWith("revoked UPDATE on queue.message_ids from " + tenant + ":"));
            for (String table : own.relations("r")) {
                assertThat(own.db.value("SELECT has_table_privilege(?, ?, 'TRUNCATE') OR has_table_privilege(?, ?, 'TRIGGER') "
                                + "OR has_table_privilege(?, ?, 'REFERENCES')", tenant, "queue." + table, tenant, "queue." + table,
                        tenant, "queue." + table)).as(table).isEqualTo(false);
                // what row-level security binds stays as the administrator left it
                assertThat(own.db.value("SELECT has_table_privilege(?, ?, 'SELECT, INSERT, UPDATE, DELETE')",
                        tenant, "queue." + table)).as(table).isEqualTo(true);
            }
            try (Connection connection = own.connectAs(tenant)) {
                assertThat(sqlState(connection, "SELECT setval('queue.message_ids', 1)")).isEqualTo("42501");
                assertThat(sqlState(connection, "CREATE TRIGGER steal AFTER INSERT ON queue.messages FOR EACH ROW "
                        + "EXECUTE FUNCTION queue._refuse_truncate()")).isEqualTo("42501");
            }
            // a second run has nothing left to revoke
            try (Connection connection = own.db.connect(); Statement statement = connection.createStatement()) {
                statement.execute("SELECT queue._secure_schema()");
                for (SQLWarning w = statement.getWarnings(); w != null; w = w.getNextWarning()) {
                    assertThat(w.getMessage()).doesNotStartWith("revoked");
                }
            }
        }
    }
}
