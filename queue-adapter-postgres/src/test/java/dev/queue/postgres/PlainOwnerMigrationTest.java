package dev.queue.postgres;

import dev.queue.api.Delivery;
import dev.queue.api.Pull;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every table of the schema forces row-level security, the migrator's records (schema_version, schema_functions)
 * included: the role that migrates must still read and write them. Here an ordinary login (no superuser, no
 * BYPASSRLS) that owns the schema without setup_roles(), then the same login once setup_roles() made it a member of
 * the owner role: each migrates, upgrades a changed function file and runs a queue as the owner.
 */
class PlainOwnerMigrationTest {

    @Test
    void aPlainOwnerMigratesUpgradesAndRunsTheQueueUnderRowLevelSecurity() {
        String schema = PostgresTestServer.freshSchema("plainowner");
        String login = "plainowner_" + Integer.toString(ThreadLocalRandom.current().nextInt(1 << 30), 36);
        PostgresTestServer.execute("CREATE ROLE " + login + " LOGIN CREATEROLE PASSWORD '" + TenantRoles.PASSWORD + "'");
        PostgresTestServer.execute("GRANT CREATE ON DATABASE \"" + database() + "\" TO " + login);
        PGSimpleDataSource owner = new PGSimpleDataSource();
        owner.setUrl(TenantRoles.url());
        owner.setUser(login);
        owner.setPassword(TenantRoles.PASSWORD);
        String q = "\"" + schema + "\"";
        try {
            assertThat(SchemaMigrator.migrate(MyBatisSupport.sessionFactory(owner, schema), schema)).isNotEmpty();
            assertThat(StoreFixture.firstColumn(owner, "SELECT count(*) FROM " + q + ".schema_version")).containsExactly((long) SchemaMigrator.MIGRATIONS.size());
            upgradeAndRun(owner, schema);

            // the same login, now a member of the owner role that owns everything
            try (java.sql.Connection connection = owner.getConnection(); java.sql.Statement statement = connection.createStatement()) {
                statement.execute("CALL " + q + ".setup_roles()");
            } catch (java.sql.SQLException e) {
                throw new IllegalStateException(e);
            }
            assertThat(StoreFixture.firstColumn(owner, "SELECT relowner::regrole::text FROM pg_class WHERE oid = '"
                    + q + ".schema_functions'::regclass")).containsExactly(schema + "_owner");
            upgradeAndRun(owner, schema);
        } finally {
            PostgresTestServer.dropSchema(schema);
            for (String role : List.of(schema + "_tenant", schema + "_operator", schema + "_app", schema + "_owner", login)) {
                PostgresTestServer.execute("DO $$ BEGIN IF to_regrole('" + role + "') IS NOT NULL THEN "
                        + "EXECUTE 'DROP OWNED BY " + role + "'; EXECUTE 'DROP ROLE " + role + "'; END IF; END $$");
            }
        }
    }

    /** What an upgrade that changed the claim's file finds, applied by the owner, then a queue on the owner's login. */
    private static void upgradeAndRun(PGSimpleDataSource owner, String schema) {
        PostgresTestServer.execute("UPDATE \"" + schema + "\".schema_functions SET checksum = 0 WHERE file = 'R__claim.sql'");
        assertThat(SchemaMigrator.migrate(MyBatisSupport.sessionFactory(owner, schema), schema)).containsExactly("R__claim.sql");
        assertThat(SchemaMigrator.migrate(MyBatisSupport.sessionFactory(owner, schema), schema)).isEmpty();
        try (PostgresQueue queue = PostgresQueue.create(owner, PostgresQueueConfig.defaults().schema(schema).listen(false))) {
            var acme = queue.namespace("acme");
            acme.publish("email", "{}");
            Delivery delivery = acme.pullOne(Pull.from("email")).orElseThrow();
            assertThat(acme.ack(delivery)).isEqualTo(dev.queue.api.Outcome.ACKED);
        }
    }

    private static String database() {
        return String.valueOf(StoreFixture.firstColumn(PostgresTestServer.dataSource(), "SELECT current_database()").get(0));
    }
}
