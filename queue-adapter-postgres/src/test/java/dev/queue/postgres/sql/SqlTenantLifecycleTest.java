package dev.queue.postgres.sql;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.postgresql.util.PSQLException;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** What granted roles can do: a tenant's whole lifecycle in its namespace, the app and operator roles, grants. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlTenantLifecycleTest {

    private SqlTenantRoles roles;
    private SqlTestDatabase db;
    private String acme;

    @BeforeAll
    void createTenants() {
        roles = SqlTenantRoles.create("sqltenantlife");
        db = roles.db;
        acme = roles.login("acme");
        db.value("SELECT queue.grant_tenant('acme', ?)", acme);
        db.value("SELECT queue.push('globex', 'email', '{}')");
    }

    @AfterAll
    void dropTenants() {
        roles.close();
    }

    private static List<Map<String, Object>> rows(Connection connection, String sql, Object... params) throws SQLException {
        return SqlTestDatabase.rows(connection, sql, params);
    }

    private static Object value(Connection connection, String sql, Object... params) throws SQLException {
        List<Map<String, Object>> rows = rows(connection, sql, params);
        assertThat(rows).as(sql).hasSize(1);
        return rows.get(0).values().iterator().next();
    }

    @Test
    void aTenantRoleRunsTheWholeLifecycleInItsNamespaceAndTheTrailRecordsIt() throws SQLException {
        try (Connection c = roles.connectAs(acme)) {
            rows(c, "SELECT queue.set_actor('alice')");
            assertThat(value(c, "SELECT queue.granted_namespaces()").toString()).isEqualTo("{acme}");
            assertThat(rows(c, "SELECT * FROM queue.set_queue_policy('acme', 'email', p_max_attempts := 5)")).hasSize(1);
            long id = ((Number) value(c, "SELECT queue.push('acme', 'email', '{\"n\":1}')")).longValue();
            Map<String, Object> first = rows(c, "SELECT * FROM queue.pull('acme', 'email', 'w1')").get(0);
            assertThat(first.get("id")).isEqualTo(id);
            assertThat(first.get("max_attempts")).isEqualTo(5);
            assertThat(value(c, "SELECT queue.extend_visibility('acme', ?, interval '1 minute')", id)).isEqualTo(true);
            assertThat(value(c, "SELECT queue.nack('acme', ?, 'boom', interval '0')", id)).isEqualTo(true);
            assertThat(rows(c, "SELECT * FROM queue.pull('acme', 'email', 'w2')").get(0).get("id")).isEqualTo(id);
            assertThat(value(c, "SELECT queue.fail('acme', ?, 'gave up')", id)).isEqualTo(true);
            assertThat(rows(c, "SELECT * FROM queue.push_batch('acme', 'email', ARRAY['{\"n\":2}', '{\"n\":3}']::json[])")).hasSize(2);

            assertThat(rows(c, "SELECT state, published_by, failed_by FROM queue.inspect('acme', ?)", id))
                    .extracting(r -> r.values().toString()).containsExactly("[dead, alice, alice]");
            assertThat(rows(c, "SELECT * FROM queue.inspect_attempts('acme', ?)", id))
                    .extracting(r -> r.get("attempt") + " " + r.get("error") + " " + r.get("worker_id") + " " + r.get("actor"))
                    .containsExactly("1 boom w1 alice", "2 gave up w2 alice");
            assertThat(rows(c, "SELECT id FROM queue.list_dead_letters('acme')")).extracting(r -> r.get("id")).containsExactly(id);
            assertThat(value(c, "SELECT redriven FROM queue.redrive_dead_letters('acme', p_ids := ARRAY[?]::bigint[])", id)).isEqualTo(1);
            assertThat(rows(c, "SELECT * FROM queue.inspect_attempts('acme', ?)", id)).hasSize(2);

            List<Map<String, Object>> pulled = rows(c, "SELECT * FROM queue.pull_batch('acme', 'email', 10, 'w3')");
            assertThat(pulled).hasSize(3);
            for (Map<String, Object> row : pulled) {
                assertThat(value(c, "SELECT queue.ack('acme', ?, ?)", row.get("id"), row.get("lease_token"))).isEqualTo(true);
            }
            assertThat(rows(c, "SELECT * FROM queue.inspect_attempts('acme', ?)", id)).as("completed without archive").isEmpty();
            assertThat(rows(c, "SELECT queue, completed, total FROM queue.get_queue_stats('acme')"))
                    .extracting(r -> r.values().toString()).containsExactly("[email, 3, 3]");

            long dead = ((Number) value(c, "SELECT queue.push('acme', 'email', '{}')")).longValue();
            rows(c, "SELECT * FROM queue.pull('acme', 'email')");
            value(c, "SELECT queue.fail('acme', ?, 'no')", dead);
            assertThat(value(c, "SELECT queue.purge_dead_letters('acme')")).isEqualTo(1);
            assertThat(rows(c, "SELECT * FROM queue.inspect_attempts('acme', ?)", dead)).as("purged").isEmpty();

            assertThat(value(c, "SELECT queue.create_schedule('acme', 'nightly', 'email', '{}', p_every_interval := '1 hour')"))
                    .isEqualTo("created");
            assertThat(value(c, "SELECT queue.update_schedule('acme', 'nightly', p_priority := 3)")).isEqualTo("updated");
            assertThat(value(c, "SELECT queue.pause_schedule('acme', 'nightly')")).isEqualTo(true);
            assertThat(value(c, "SELECT queue.resume_schedule('acme', 'nightly')")).isEqualTo(true);
            // as if created an hour ago: its first run (an hour after creation) is due now
            db.rows("UPDATE queue.schedules SET created_at = created_at - interval '1 hour', next_run_at = created_at "
                    + "WHERE namespace = 'acme'");
            assertThat(rows(c, "SELECT * FROM queue.tick_schedules()")).extracting(r -> r.get("namespace")).containsExactly("acme");
            assertThat(rows(c, "SELECT name FROM queue.list_schedules('acme')")).hasSize(1);
            assertThat(value(c, "SELECT queue.delete_schedule('acme', 'nightly')")).isEqualTo(true);
            assertThat(value(c, "SELECT queue.delete_queue_policy('acme', 'email')")).isEqualTo(true);

            assertThat(rows(c, "SELECT action, actor, login, subject FROM queue.list_audit_log('acme') WHERE action <> 'grant_tenant'"))
                    .extracting(r -> r.values().toString())
                    .containsExactly(
                            "[policy_set, alice, " + acme + ", email]",
                            "[redrive_dead_letters, alice, " + acme + ", null]",
                            "[purge_dead_letters, alice, " + acme + ", null]",
                            "[schedule_created, alice, " + acme + ", nightly]",
                            "[schedule_updated, alice, " + acme + ", nightly]",
                            "[schedule_paused, alice, " + acme + ", nightly]",
                            "[schedule_resumed, alice, " + acme + ", nightly]",
                            "[schedule_deleted, alice, " + acme + ", nightly]",
                            "[policy_deleted, alice, " + acme + ", email]");
        }
    }

    @Test
    void anAppRoleUsesEveryNamespaceThroughTheFunctionsAndTheTablesWithoutGrants() throws SQLException {
        String app = roles.login("fleet", "queue_app");
        try (Connection c = roles.connectAs(app)) {
            assertThat(value(c, "SELECT queue.is_trusted()")).isEqualTo(true);
            long id = ((Number) value(c, "SELECT queue.push('anyone', 'q', '{}')")).longValue();
            assertThat(rows(c, "SELECT id FROM queue.inspect('anyone', ?)", id)).hasSize(1);
            assertThat(((Number) value(c, "SELECT count(*) FROM queue.messages WHERE namespace IN ('anyone', 'globex')")).longValue())
                    .isGreaterThanOrEqualTo(2);
            PSQLException error = catchThrowableOfType(() -> rows(c, "SELECT queue.grant_tenant('anyone', session_user)"),
                    PSQLException.class);
            assertThat(error.getSQLState()).isEqualTo("QU005");
            assertThat(catchThrowableOfType(() -> rows(c, "SELECT * FROM queue.tenant_grants"), PSQLException.class).getSQLState())
                    .isEqualTo("42501");
        }
    }

    @Test
    void anOperatorGrantsAndRevokesAndAGrantToAGroupRoleReachesItsMembers() throws SQLException {
        String operator = roles.login("ops", "queue_operator");
        String team = roles.login("beta_team");
        String member = roles.login("beta_worker", team);
        try (Connection ops = roles.connectAs(operator)) {
            assertThat(value(ops, "SELECT queue.grant_tenant('beta', ?)", team)).isEqualTo(true);
            assertThat(value(ops, "SELECT queue.grant_tenant('beta', ?)", team)).isEqualTo(false);
            assertThat(rows(ops, "SELECT role_name FROM queue.list_tenant_grants() WHERE namespace = 'beta'"))
                    .extracting(r -> r.get("role_name")).containsExactly(team);
        }
        try (Connection c = roles.connectAs(member)) {
            assertThat(value(c, "SELECT queue.push('beta', 'q', '{}')")).isNotNull();
        }
        try (Connection ops = roles.connectAs(operator)) {
            assertThat(value(ops, "SELECT queue.revoke_tenant('beta', ?)", team)).isEqualTo(true);
        }
        try (Connection c = roles.connectAs(member)) {
            PSQLException error = catchThrowableOfType(() -> rows(c, "SELECT queue.push('beta', 'q', '{}')"), PSQLException.class);
            assertThat(error.getSQLState()).isEqualTo("QU005");
            assertThat(error.getServerErrorMessage().getMessage()).contains("\"beta\"").contains(member);
        }
        PSQLException unknown = catchThrowableOfType(() -> {
            try (Connection ops = roles.connectAs(operator)) {
                rows(ops, "SELECT queue.grant_tenant('beta', 'no_such_role_anywhere')");
            }
        }, PSQLException.class);
        assertThat(unknown.getSQLState()).isEqualTo("QU001");
        assertThat(unknown.getServerErrorMessage().getMessage()).contains("no_such_role_anywhere");
    }

    /**
     * Row-level security costs a trusted login no function call: for the app role (as current user, so the policies
     * apply) the policy of the trusted roles folds the condition to true when the statement is planned (migration
     * 21). For the owner (under which the tenants' gates run) the policy calls its functions once per statement
     * (InitPlans), not once per row: 200 rows counted with one call of is_trusted().
     */
    @Test
    void thePolicyCallsNoFunctionForTrustedRolesAndOncePerStatementForTheOwner() throws SQLException {
        String app = roles.login("counter", "queue_app");
        db.rows("SELECT * FROM queue.push_batch('counted', 'q', array_fill('{}'::json, ARRAY[200]))");
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            rows(c, "SET LOCAL track_functions = 'all'");
            rows(c, "SET LOCAL ROLE " + app);
            assertThat(value(c, "SELECT count(*) FROM queue.messages WHERE namespace = 'counted'")).isEqualTo(200L);
            String plan = plan(c, "SELECT * FROM queue.messages WHERE namespace = 'counted'");
            rows(c, "RESET ROLE");
            assertThat(plan).doesNotContain("InitPlan").doesNotContain("is_trusted");
            assertThat(rows(c, "SELECT funcname::text AS f, calls FROM pg_stat_xact_user_functions "
                    + "WHERE schemaname = 'queue' ORDER BY 1")).isEmpty();
            c.rollback();
        }
        try (Connection c = db.connect()) {
            // the owner, under which the tenants' gates run, keeps the policy with its functions
            c.setAutoCommit(false);
            rows(c, "SET LOCAL track_functions = 'all'");
            rows(c, "SET LOCAL ROLE queue_owner");
            assertThat(value(c, "SELECT count(*) FROM queue.messages WHERE namespace = 'counted'")).isEqualTo(200L);
            String plan = plan(c, "SELECT * FROM queue.messages WHERE namespace = 'counted'");
            rows(c, "RESET ROLE");
            assertThat(plan).contains("InitPlan");
            assertThat(rows(c, "SELECT funcname::text AS f, calls FROM pg_stat_xact_user_functions "
                    + "WHERE schemaname = 'queue' ORDER BY 1"))
                    .extracting(r -> r.get("f") + " " + r.get("calls")).containsExactly("is_trusted 1");
            c.rollback();
        }
    }

    private static String plan(Connection c, String query) throws SQLException {
        return rows(c, "EXPLAIN (COSTS OFF) " + query).stream()
                .map(r -> r.values().iterator().next().toString()).reduce("", (a, b) -> a + b + "\n");
    }

    @Test
    void setupRolesIsIdempotent() {
        db.rows("CALL queue.setup_roles()");
        db.rows("CALL queue.setup_roles()");
        assertThat(db.count("SELECT count(*) FROM pg_roles WHERE rolname IN ('queue_owner', 'queue_app', 'queue_operator', 'queue_tenant')"))
                .isEqualTo(4);
    }
}
