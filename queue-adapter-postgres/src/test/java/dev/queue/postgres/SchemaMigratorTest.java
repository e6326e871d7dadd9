package dev.queue.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.queue.api.Delivery;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.Namespace;
import dev.queue.api.Pull;
import dev.queue.api.StoreNotReadyException;
import org.apache.ibatis.session.SqlSessionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Versioned migrations: applied once under the advisory lock, even by replicas starting together. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SchemaMigratorTest {

    private HikariDataSource pool;
    private final List<String> schemas = new ArrayList<>();

    @BeforeAll
    void createPool() {
        pool = PostgresTestServer.newPool("migrations", 8);
    }

    @AfterAll
    void dropSchemas() {
        schemas.forEach(PostgresTestServer::dropSchema);
        pool.close();
    }

    private String newSchema() {
        String schema = PostgresTestServer.freshSchema("migr");
        schemas.add(schema);
        return schema;
    }

    @Test
    void fourReplicasMigratingAtOnceApplyEveryVersionExactlyOnce() throws Exception {
        String schema = newSchema();
        int replicas = 4;
        ExecutorService executor = Executors.newFixedThreadPool(replicas);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<List<Integer>>> results = new ArrayList<>();
            for (int i = 0; i < replicas; i++) {
                // each replica has a MyBatis configuration of its own, as separate processes would
                SqlSessionFactory sessions = MyBatisSupport.sessionFactory(pool, schema);
                results.add(executor.submit(() -> {
                    go.await(10, TimeUnit.SECONDS);
                    return SchemaMigrator.migrate(sessions, schema);
                }));
            }
            go.countDown();
            List<Integer> appliedByAll = new ArrayList<>();
            for (Future<List<Integer>> result : results) {
                appliedByAll.addAll(result.get(60, TimeUnit.SECONDS));
            }

            assertThat(appliedByAll).containsExactlyInAnyOrderElementsOf(
                    SchemaMigrator.MIGRATIONS.stream().map(SchemaMigrator.Migration::version).toList());
            assertThat(query("SELECT version FROM \"" + schema + "\".schema_version ORDER BY version"))
                    .containsExactlyElementsOf(allVersions());
            assertThat(SchemaMigrator.migrate(MyBatisSupport.sessionFactory(pool, schema), schema)).isEmpty();
        } finally {
            executor.shutdownNow();
        }
    }

    @Test
    void aQueueThatDoesNotMigrateRefusesAnUnmigratedSchemaAndAcceptsAMigratedOne() {
        String schema = newSchema();
        PostgresQueueConfig config = PostgresQueueConfig.defaults().schema(schema).migrateOnStart(false).listen(false);

        assertThatThrownBy(() -> PostgresQueue.create(pool, config))
                .isInstanceOf(StoreNotReadyException.class)
                .hasMessageContaining(schema)
                .hasMessageContaining("migrateOnStart");

        applyLikeFlyway(schema);
        try (PostgresQueue queue = PostgresQueue.create(pool, config)) {
            queue.defaultNamespace().publish("t", "{}");
            assertThat(queue.defaultNamespace().stats().pending()).isEqualTo(1);
        }
        assertThat(query("SELECT to_regclass('\"" + schema + "\".schema_version') IS NULL")).containsExactly(true);
    }

    @Test
    void theMigrationFilesAreTheListedVersionsInFlywayNamingWithOnlyTheSchemaPlaceholderAndSplittable() throws Exception {
        Path directory = Paths.get(getClass().getClassLoader().getResource("db/queue").toURI());
        List<String> files;
        try (Stream<Path> listing = Files.list(directory)) {
            files = listing.map(p -> p.getFileName().toString()).sorted().toList();
        }
        assertThat(files).containsExactlyElementsOf(SchemaMigrator.MIGRATIONS.stream()
                .map(m -> m.resource().substring("db/queue/".length())).sorted().toList());
        Pattern placeholder = Pattern.compile("\\$\\{([^}]*)}");
        for (SchemaMigrator.Migration migration : SchemaMigrator.MIGRATIONS) {
            String script = SchemaMigrator.read(migration.resource());
            Matcher matcher = placeholder.matcher(script);
            while (matcher.find()) {
                assertThat(matcher.group(1)).as("placeholder in %s", migration.resource()).isEqualTo("schema");
            }
            // tools that split scripts at semicolons (Liquibase's splitStatements) must not split inside a comment
            assertThat(script.lines().filter(line -> line.strip().startsWith("--")))
                    .as("comment lines of %s", migration.resource()).noneMatch(line -> line.contains(";"));
        }
    }

    @Test
    void theSchemaBacksTheStateMachineWithConstraints() {
        String schema = newSchema();
        SchemaMigrator.migrate(MyBatisSupport.sessionFactory(pool, schema), schema);
        String insert = "INSERT INTO \"" + schema + "\".messages (namespace, topic, state, payload, priority, attempts,"
                + " max_attempts, run_at, published_at, worker, lease_token, lease_until) VALUES ";
        String good = "('n', 't', 'running', '{}', 0, 1, 3, now(), now(), 'w', 1, now())";
        execute(insert + good);

        for (String bad : List.of(
                "('n', 't', 'done', '{}', 0, 0, 3, now(), now(), null, null, null)",
                "('n', 't', 'running', '{}', 0, 1, 3, now(), now(), 'w', null, now())",
                "('n', 't', 'running', '{}', 0, 0, 3, now(), now(), 'w', 1, now())",
                "('n', 't', 'pending', '{}', 0, 0, 3, now(), now(), 'w', 1, now())",
                "('n', 't', 'pending', '{}', 10, 0, 3, now(), now(), null, null, null)",
                "('n', 't', 'pending', '{}', 0, -1, 3, now(), now(), null, null, null)",
                "('n', 't', 'pending', '{}', 0, 0, 0, now(), now(), null, null, null)",
                "('n', 't', 'pending', '{not json', 0, 0, 3, now(), now(), null, null, null)")) {
            assertThatThrownBy(() -> execute(insert + bad)).as(bad).isInstanceOf(IllegalStateException.class);
        }
        assertThat(query("SELECT count(*) FROM \"" + schema + "\".messages")).containsExactly(1L);
        assertThat(query("SELECT indexdef FROM pg_indexes WHERE schemaname = '" + schema + "' AND indexname = 'messages_claim_idx'"))
                .singleElement().asString().contains("(namespace, topic, priority, run_at, id)").endsWith("WHERE (state = 'pending'::text)");
        assertThat(query("SELECT indexdef FROM pg_indexes WHERE schemaname = '" + schema + "' AND indexname = 'messages_unique_key_idx'"))
                .singleElement().asString().startsWith("CREATE UNIQUE INDEX").endsWith("WHERE (unique_key IS NOT NULL)");
        // identifiers compare byte by byte (V6): every namespace and topic column, whatever the database's collation
        assertThat(query("SELECT count(*) FROM information_schema.columns WHERE table_schema = '" + schema + "'"
                + " AND column_name IN ('namespace', 'topic', 'unique_key') AND collation_name IS DISTINCT FROM 'C'"))
                .containsExactly(0L);
        assertThat(query("SELECT array_to_string(reloptions, ',') FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                + " WHERE n.nspname = '" + schema + "' AND c.relname = 'messages'"))
                .singleElement().asString().contains("fillfactor=50").contains("autovacuum_vacuum_scale_factor=0.01").contains("vacuum_truncate=false");
    }

    @Test
    void anInstallationAtVersionFiveKeepsItsMessagesThroughTheCollationMigration() {
        String schema = newSchema();
        SchemaMigrator.migrate(MyBatisSupport.sessionFactory(pool, schema), schema);
        // back to what version 5 left: V6 run the other way (identifier columns in the database's default
        // collation), 6 not recorded
        String q = "\"" + schema + "\"";
        // the row-level security policies of version 11 depend on the namespace columns: a version 5 had none
        execute("DO $$ DECLARE p record; BEGIN FOR p IN SELECT policyname, tablename FROM pg_policies WHERE schemaname = '"
                + schema + "' LOOP EXECUTE format('DROP POLICY %I ON %I.%I', p.policyname, '" + schema
                + "', p.tablename); END LOOP; END $$");
        execute(SchemaMigrator.read("db/queue/V6__identifier_collation.sql").replace("${schema}", schema)
                .replace("COLLATE \"C\"", "COLLATE \"default\""));
        execute("DELETE FROM " + q + ".schema_version WHERE version = 6");
        PostgresQueueConfig config = PostgresQueueConfig.defaults().schema(schema).listen(false);
        MessageId kept;
        try (PostgresQueue before = PostgresQueue.create(pool, PostgresQueueConfig.defaults().schema(schema).listen(false).migrateOnStart(false))) {
            kept = before.namespace("Billing").publish(Message.to("Invoice.Paid").uniqueKey("inv-1").json("{\"n\":1}")).id();
        }

        try (PostgresQueue upgraded = PostgresQueue.create(pool, config)) {
            assertThat(query("SELECT version FROM " + q + ".schema_version ORDER BY version")).containsExactlyElementsOf(allVersions());
            Namespace billing = upgraded.namespace("Billing");
            // the key still deduplicates, the message is still claimable by its namespace and topic
            assertThat(billing.publish(Message.to("Invoice.Paid").uniqueKey("inv-1").json("{\"n\":2}")).id()).isEqualTo(kept);
            Delivery delivery = billing.pullOne(Pull.from("Invoice.Paid")).orElseThrow();
            assertThat(delivery.id()).isEqualTo(kept);
            assertThat(delivery.payload(Map.class)).isEqualTo(Map.of("n", 1));
        }
        assertThat(query("SELECT count(*) FROM information_schema.columns WHERE table_schema = '" + schema + "'"
                + " AND column_name IN ('namespace', 'topic', 'unique_key', 'name') AND table_name <> 'schema_version'"
                + " AND collation_name IS DISTINCT FROM 'C'")).containsExactly(0L);
        // the migrator secured the schema again after applying version 6: every tenant table has its policy back
        assertThat(query("SELECT count(*) FROM pg_policies WHERE schemaname = '" + schema + "' AND policyname = 'tenant_isolation'"))
                .containsExactly(17L);
    }

    private static List<Object> allVersions() {
        return SchemaMigrator.MIGRATIONS.stream().map(m -> (Object) m.version()).toList();
    }

    /** What Flyway does with the placeholder schema=&lt;name&gt;: replace it and run each file in order. */
    private void applyLikeFlyway(String schema) {
        for (SchemaMigrator.Migration migration : SchemaMigrator.MIGRATIONS) {
            execute(SchemaMigrator.read(migration.resource()).replace("${schema}", schema));
        }
    }

    private void execute(String sql) {
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    private List<Object> query(String sql) {
        return StoreFixture.firstColumn(pool, sql);
    }
}
