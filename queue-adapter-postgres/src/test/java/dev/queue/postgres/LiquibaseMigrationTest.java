package dev.queue.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.queue.api.Delivery;
import dev.queue.api.Outcome;
import dev.queue.api.Pull;
import liquibase.Contexts;
import liquibase.LabelExpression;
import liquibase.Liquibase;
import liquibase.database.Database;
import liquibase.database.DatabaseFactory;
import liquibase.database.jvm.JdbcConnection;
import liquibase.resource.ClassLoaderResourceAccessor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The upgrade path of an application that migrates with Liquibase: the changelog the adapter ships
 * ({@code db/queue-liquibase/changelog.xml}) over the same files, with the changelog property {@code schema}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LiquibaseMigrationTest {

    private static final String CHANGELOG = "db/queue-liquibase/changelog.xml";

    private HikariDataSource pool;
    private final List<String> schemas = new ArrayList<>();

    @BeforeAll
    void createPool() {
        pool = PostgresTestServer.newPool("liquibase", 4);
    }

    @AfterAll
    void dropSchemas() {
        schemas.forEach(PostgresTestServer::dropSchema);
        pool.close();
    }

    @Test
    @SuppressWarnings("deprecation") // Liquibase's facade; its replacement, CommandScope, needs more set-up for the same
    void liquibaseInstallsASchemaTheQueueRunsOnAndAReRunChangesOnlyWhatChanged() throws Exception {
        String schema = PostgresTestServer.freshSchema("liquibase");
        schemas.add(schema);
        // Liquibase keeps its own tables in the queue's schema, so several schemas of one database do not share them
        PostgresTestServer.execute("CREATE SCHEMA \"" + schema + "\"");

        update(schema);

        assertThat(StoreFixture.firstColumn(pool, "SELECT count(*) FROM \"" + schema + "\".databasechangelog"))
                .containsExactly((long) (SchemaMigrator.MIGRATIONS.size() + SchemaMigrator.FUNCTION_FILES.size() + 1));
        assertThat(StoreFixture.firstColumn(pool, "SELECT count(*) FROM pg_policies WHERE schemaname = '" + schema
                + "' AND policyname = 'tenant_isolation'")).containsExactly(19L);
        PostgresQueueConfig config = PostgresQueueConfig.defaults().schema(schema).migrateOnStart(false).listen(false);
        try (PostgresQueue queue = PostgresQueue.create(pool, config)) {
            queue.namespace("acme").publish("email", "{\"to\":\"a@example.com\"}");
            Delivery delivery = queue.namespace("acme").pullOne(Pull.from("email")).orElseThrow();
            assertThat(delivery.json()).contains("a@example.com");
            assertThat(queue.namespace("acme").ack(delivery)).isEqualTo(Outcome.ACKED);
        }

        // a second update runs only the changeset that runs always
        update(schema);
        assertThat(StoreFixture.firstColumn(pool, "SELECT count(*) FROM \"" + schema + "\".databasechangelog"
                + " WHERE exectype = 'RERAN'")).containsExactly(1L);
    }

    @SuppressWarnings("deprecation")
    private void update(String schema) throws Exception {
        try (Connection connection = pool.getConnection()) {
            Database database = DatabaseFactory.getInstance().findCorrectDatabaseImplementation(new JdbcConnection(connection));
            database.setDefaultSchemaName(schema);
            database.setLiquibaseSchemaName(schema);
            Liquibase liquibase = new Liquibase(CHANGELOG, new ClassLoaderResourceAccessor(), database);
            liquibase.setChangeLogParameter("schema", schema);
            liquibase.update(new Contexts(), new LabelExpression());
        }
    }
}
