package dev.queue.postgres.sql;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.postgresql.util.PSQLException;

import java.sql.Connection;
import java.sql.SQLException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** The audit log's retention and its pruning in bounded batches (migration 17). */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlAuditRetentionTest {

    private SqlTenantRoles roles;
    private SqlTestDatabase db;

    @BeforeAll
    void createSchema() {
        roles = SqlTenantRoles.create("sqlaudit");
        db = roles.db;
    }

    @AfterAll
    void dropSchema() {
        roles.close();
    }

    @Test
    void rowsOlderThanTheRetentionGoInBoundedBatchesOldestFirstAndThePruningIsRecorded() throws SQLException {
        db.rows("DELETE FROM queue.audit_log");
        db.rows("INSERT INTO queue.audit_log (at, namespace, actor, action, subject, ids, count) "
                + "SELECT now() - interval '100 days' + g * interval '1 minute', 'acme', 'ops', 'purge_dead_letters', "
                + "'email', NULL, 1 FROM generate_series(1, 25) g");
        db.rows("INSERT INTO queue.audit_log (at, namespace, actor, action, subject, ids, count) "
                + "SELECT now() - interval '1 day', 'acme', 'ops', 'redrive_dead_letters', 'email', NULL, 1 "
                + "FROM generate_series(1, 3)");
        assertThat(db.value("SELECT queue.prune_audit_log()")).as("no retention: kept for ever").isEqualTo(0);

        try (Connection alice = db.connect()) {
            SqlTestDatabase.rows(alice, "SELECT queue.set_actor('alice')");
            assertThat(one(alice, "SELECT queue.set_audit_retention(interval '90 days')::text")).isEqualTo("90 days");
            assertThat(one(alice, "SELECT queue.get_audit_retention()::text")).isEqualTo("90 days");

            assertThat(one(alice, "SELECT queue.prune_audit_log(10)")).isEqualTo(10);
            assertThat(db.value("SELECT min(at) > now() - interval '100 days' + interval '10 minutes' "
                    + "FROM queue.audit_log WHERE action = 'purge_dead_letters'")).as("the oldest went first").isEqualTo(true);
            assertThat(one(alice, "SELECT queue.prune_audit_log(10)")).isEqualTo(10);
            assertThat(one(alice, "SELECT queue.prune_audit_log(10)")).isEqualTo(5);
            assertThat(one(alice, "SELECT queue.prune_audit_log(10)")).isEqualTo(0);
        }

        assertThat(db.count("SELECT count(*) FROM queue.audit_log WHERE action = 'purge_dead_letters'")).isZero();
        assertThat(db.count("SELECT count(*) FROM queue.audit_log WHERE action = 'redrive_dead_letters'")).isEqualTo(3);
        assertThat(db.rows("SELECT actor, count FROM queue.audit_log WHERE action = 'prune_audit_log' ORDER BY id"))
                .extracting(r -> r.get("actor") + ":" + r.get("count")).containsExactly("alice:10", "alice:10", "alice:5");
        assertThat(db.rows("SELECT actor, subject FROM queue.audit_log WHERE action = 'set_audit_retention'"))
                .extracting(r -> r.get("actor") + ":" + r.get("subject")).containsExactly("alice:90 days");

        assertThat(db.value("SELECT queue.set_audit_retention(NULL)")).isNull();
        assertThat(db.value("SELECT queue.get_audit_retention()")).isNull();
    }

    @Test
    void badInputIsRefusedNamingTheArgumentAndChangesNothing() {
        db.rows("SELECT queue.set_audit_retention(interval '30 days')");
        long rows = db.count("SELECT count(*) FROM queue.audit_log");

        PSQLException limit = db.error("SELECT queue.prune_audit_log(0)");
        PSQLException tooShort = db.error("SELECT queue.set_audit_retention(interval '1 minute')");

        assertThat(limit.getSQLState()).isEqualTo("QU001");
        assertThat(limit.getMessage()).contains("p_limit", "0");
        assertThat(tooShort.getSQLState()).isEqualTo("QU001");
        assertThat(tooShort.getMessage()).contains("p_retention", "00:01:00");
        assertThat(db.value("SELECT queue.get_audit_retention()::text")).isEqualTo("30 days");
        assertThat(db.count("SELECT count(*) FROM queue.audit_log")).isEqualTo(rows);
        db.rows("SELECT queue.set_audit_retention(NULL)");
    }

    @Test
    void aTenantCannotPruneTheLogNorChangeItsRetention() throws SQLException {
        String acme = roles.login("acme");
        db.value("SELECT queue.grant_tenant('acme', ?)", acme);
        try (Connection connection = roles.connectAs(acme)) {
            PSQLException prune = catchThrowableOfType(
                    () -> SqlTestDatabase.rows(connection, "SELECT queue.prune_audit_log()"), PSQLException.class);
            PSQLException retention = catchThrowableOfType(
                    () -> SqlTestDatabase.rows(connection, "SELECT queue.set_audit_retention(interval '1 day')"),
                    PSQLException.class);
            PSQLException direct = catchThrowableOfType(
                    () -> SqlTestDatabase.rows(connection, "DELETE FROM queue.audit_log"), PSQLException.class);

            assertThat(prune.getSQLState()).isEqualTo("QU005");
            assertThat(prune.getMessage()).contains("prune_audit_log");
            assertThat(retention.getSQLState()).isEqualTo("QU005");
            assertThat(direct.getSQLState()).isEqualTo("42501");
        }
    }

    private static Object one(Connection connection, String sql) throws SQLException {
        return SqlTestDatabase.rows(connection, sql).get(0).values().iterator().next();
    }
}
