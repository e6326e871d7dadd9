package dev.queue.postgres.sql;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.postgresql.util.PSQLException;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The tables that hold no tenant's data, by name: a new table without a namespace column fails here until it is
 * classified. Row-level security is forced on them as on every table, with one policy, queue_roles, for the queue's
 * own roles only (the grants: the owner and the operator role), so a tenant's login given every privilege on them
 * still reads no row and writes none. No policy of the schema names any other role.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlTablesWithoutTenantDataTest {

    /**
     * The grants (the trust root: only the owner and operator may change them), the worker registry, the schema's
     * settings and the built-in migrator's records.
     */
    static final Set<String> NO_TENANT_DATA = Set.of("tenant_grants", "workers", "settings", "schema_version",
            "schema_functions");

    private SqlTenantRoles roles;
    private SqlTestDatabase db;
    private String acme;

    @BeforeAll
    void create() throws SQLException {
        roles = SqlTenantRoles.create("sqlnotenant");
        db = roles.db;
        acme = roles.login("acme");
        db.value("SELECT queue.grant_tenant('acme', ?)", acme);
        db.rows("SELECT queue.set_audit_retention(interval '400 days')");
        try (Connection connection = roles.connectAs(acme)) {
            SqlTestDatabase.rows(connection, "SELECT queue.worker_heartbeat('acme-process', 'host', 1, now(), "
                    + "p_subscriptions := '[{\"namespace\":\"acme\",\"topics\":[\"email\"],\"worker\":\"w\",\"concurrency\":1,\"in_flight\":0}]')");
        }
        for (String grant : SqlCarelessAdministratorTest.everyPrivilegeOfTheSchema(acme)) {
            db.rows(grant);
        }
    }

    @AfterAll
    void drop() {
        roles.close();
    }

    @Test
    void everyTableWithoutANamespaceColumnIsListed() {
        Set<String> without = new TreeSet<>(roles.relations("r"));
        without.removeAll(roles.tenantTables());
        without.add("tenant_grants");
        assertThat(without).as("tables holding no tenant data: classify a new one in NO_TENANT_DATA")
                .containsExactlyInAnyOrderElementsOf(NO_TENANT_DATA);
    }

    @Test
    void theyHaveForcedRowLevelSecurityWithAPolicyForTheQueuesRolesOnly() {
        for (String table : NO_TENANT_DATA) {
            assertThat(db.value("SELECT relrowsecurity AND relforcerowsecurity FROM pg_class WHERE oid = ?::regclass",
                    "queue." + table)).as(table).isEqualTo(true);
            assertThat(db.rows("SELECT policyname::text AS p, array_to_string(ARRAY(SELECT unnest(roles) ORDER BY 1), ',') AS r, "
                            + "qual, with_check FROM pg_policies WHERE schemaname = 'queue' AND tablename = ?", table))
                    .as(table).extracting(r -> r.get("p") + " " + r.get("r") + " " + r.get("qual") + " " + r.get("with_check"))
                    .containsExactly(table.equals("tenant_grants") ? "queue_roles queue_operator,queue_owner true true"
                            : "queue_roles queue_app,queue_operator,queue_owner true true");
        }
        // and no table of the schema has a policy for anyone but the queue's roles (PUBLIC, a tenant)
        assertThat(db.rows("SELECT tablename::text || ' ' || policyname::text AS p FROM pg_policies "
                + "WHERE schemaname = 'queue' AND NOT roles <@ ARRAY['queue_owner', 'queue_app', 'queue_operator']::name[]"))
                .isEmpty();
        assertThat(db.count("SELECT count(*) FROM pg_class WHERE relnamespace = 'queue'::regnamespace AND relkind = 'r' "
                + "AND NOT (relrowsecurity AND relforcerowsecurity)")).isZero();
    }

    @Test
    void aTenantWithEveryPrivilegeNeitherReadsNorWritesThem() throws SQLException {
        List<String> broken = new ArrayList<>();
        Map<String, String> before = contents();
        try (Connection connection = roles.connectAs(acme)) {
            for (String table : NO_TENANT_DATA) {
                String t = "queue." + table;
                assertThat(db.count("SELECT count(*) FROM " + t)).as(table + " has a row to attack").isPositive();
                String column = roles.firstColumn(table);
                if (!SqlTestDatabase.rows(connection, "SELECT * FROM " + t).isEmpty()) {
                    broken.add(table + ": read");
                }
                try (Statement statement = connection.createStatement()) {
                    if (statement.executeUpdate("UPDATE " + t + " SET " + column + " = " + column) != 0) {
                        broken.add(table + ": updated");
                    }
                    if (statement.executeUpdate("DELETE FROM " + t) != 0) {
                        broken.add(table + ": deleted");
                    }
                }
                String row = (String) db.value("SELECT row_to_json(t)::text FROM " + t + " t ORDER BY t::text LIMIT 1");
                String insert = state(connection, "INSERT INTO " + t + " SELECT * FROM json_populate_record(NULL::" + t
                        + ", ?::json)", row);
                if (!"42501".equals(insert)) {
                    broken.add(table + ": insert gave " + insert);
                }
                String truncate = state(connection, "TRUNCATE " + t);
                if (!"QU005".equals(truncate)) {
                    broken.add(table + ": truncate gave " + truncate);
                }
            }
        }
        assertThat(broken).isEmpty();
        assertThat(contents()).isEqualTo(before);
    }

    @Test
    void theAppRoleReadsThemButTheGrantsWhichTheOperatorKeeps() throws SQLException {
        String fleet = roles.login("fleet", "queue_app");
        String ops = roles.login("ops", "queue_operator");
        try (Connection connection = roles.connectAs(fleet)) {
            for (String table : List.of("workers", "settings", "schema_version", "schema_functions")) {
                assertThat(SqlTestDatabase.rows(connection, "SELECT * FROM queue." + table)).as(table).isNotEmpty();
            }
            assertThat(state(connection, "SELECT * FROM queue.tenant_grants")).isEqualTo("42501");
        }
        try (Connection connection = roles.connectAs(ops)) {
            assertThat(SqlTestDatabase.rows(connection, "SELECT role_name::text AS r FROM queue.tenant_grants"))
                    .extracting(r -> r.get("r")).containsExactly(acme);
        }
    }

    private Map<String, String> contents() {
        Map<String, String> contents = new java.util.TreeMap<>();
        for (String table : NO_TENANT_DATA) {
            contents.put(table, (String) db.value("SELECT count(*) || ':' || md5(string_agg(t::text, '|' ORDER BY t::text)) "
                    + "FROM queue." + table + " t"));
        }
        return contents;
    }

    private static String state(Connection connection, String sql, Object... params) {
        PSQLException error = catchThrowableOfType(() -> SqlTestDatabase.rows(connection, sql, params), PSQLException.class);
        return error == null ? null : error.getSQLState();
    }
}
