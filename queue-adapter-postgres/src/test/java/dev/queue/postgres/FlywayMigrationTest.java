package dev.queue.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.queue.api.Delivery;
import dev.queue.api.Pull;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The upgrade path of an application that migrates with Flyway: the files of {@code db/queue/} as its versioned,
 * repeatable and callback migrations, with the placeholder {@code schema}. A queue that does not migrate runs on
 * what Flyway installed, and a release that changed a function file is applied by re-running that file only.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FlywayMigrationTest {

    private HikariDataSource pool;
    private final List<String> schemas = new ArrayList<>();

    @BeforeAll
    void createPool() {
        pool = PostgresTestServer.newPool("flyway", 4);
    }

    @AfterAll
    void dropSchemas() {
        schemas.forEach(PostgresTestServer::dropSchema);
        pool.close();
    }

    @Test
    void flywayInstallsASchemaTheQueueRunsOnWithoutMigrating() {
        String schema = newSchema();

        MigrateResult result = flyway(schema, "classpath:db/queue").migrate();

        assertThat(result.migrationsExecuted).isEqualTo(SchemaMigrator.MIGRATIONS.size() + SchemaMigrator.FUNCTION_FILES.size());
        // afterMigrate.sql secured the schema: every table of tenant data has its policy
        assertThat(StoreFixture.firstColumn(pool, "SELECT count(*) FROM pg_policies WHERE schemaname = '" + schema
                + "' AND policyname = 'tenant_isolation'")).containsExactly(19L);
        PostgresQueueConfig config = PostgresQueueConfig.defaults().schema(schema).migrateOnStart(false).listen(false);
        try (PostgresQueue queue = PostgresQueue.create(pool, config)) {
            queue.namespace("acme").publish("email", "{\"to\":\"a@example.com\"}");
            Delivery delivery = queue.namespace("acme").pullOne(Pull.from("email")).orElseThrow();
            assertThat(delivery.json()).contains("a@example.com");
            assertThat(queue.namespace("acme").ack(delivery)).isEqualTo(dev.queue.api.Outcome.ACKED);
            assertThat(queue.namespace("acme").stats().pending()).isZero();
        }
        assertThat(flyway(schema, "classpath:db/queue").migrate().migrationsExecuted).as("nothing left to do").isZero();
    }

    @Test
    void anUpgradeThatChangedAFunctionFileReappliesThatFileOnly(@TempDir Path release) throws Exception {
        String schema = newSchema();
        flyway(schema, "classpath:db/queue").migrate();
        copyFiles(release);
        // the next release's claim: here the same body with its comment changed, re-created in place
        Path claim = release.resolve("R__claim.sql");
        Files.writeString(claim, Files.readString(claim) + "\n-- changed in the next release\n");
        StoreFixture.firstColumn(pool, "SELECT count(*) FROM (SELECT \"" + schema + "\".push('acme', 'email', '{}')) p");

        MigrateResult result = flyway(schema, "filesystem:" + release).migrate();

        assertThat(result.migrations).singleElement().satisfies(m -> assertThat(m.filepath).endsWith("R__claim.sql"));
        assertThat(StoreFixture.firstColumn(pool, "SELECT count(*) FROM \"" + schema + "\".pull('acme', 'email')"))
                .as("the message published before the upgrade is claimed after it").containsExactly(1L);
    }

    private Flyway flyway(String schema, String location) {
        return Flyway.configure().dataSource(pool).schemas(schema).locations(location)
                .placeholders(Map.of("schema", schema)).load();
    }

    private String newSchema() {
        String schema = PostgresTestServer.freshSchema("flyway");
        schemas.add(schema);
        return schema;
    }

    private static void copyFiles(Path target) throws IOException, URISyntaxException {
        Path source = Paths.get(FlywayMigrationTest.class.getClassLoader().getResource("db/queue").toURI());
        try (Stream<Path> files = Files.list(source)) {
            for (Path file : files.toList()) {
                Files.copy(file, target.resolve(file.getFileName()));
            }
        }
    }
}
