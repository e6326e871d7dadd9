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
            List<Future<List<String>>> results = new ArrayList<>();
            for (int i = 0; i < replicas; i++) {
                // each replica has a MyBatis configuration of its own, as separate processes would
                SqlSessionFactory sessions = MyBatisSupport.sessionFactory(pool, schema);
                results.add(executor.submit(() -> {
                    go.await(10, TimeUnit.SECONDS);
                    return SchemaMigrator.migrate(sessions, schema);
                }));
            }
            go.countDown();
            List<String> appliedByAll = new ArrayList<>();
            for (Future<List<String>> result : results) {
                appliedByAll.addAll(result.get(60, TimeUnit.SECONDS));
            }

            assertThat(appliedByAll).containsExactlyInAnyOrderElementsOf(everything());
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
    void theFilesAreTheListedOnesInFlywayNamingWithOnlyTheSchemaPlaceholderAndSplittable() throws Exception {
        Path directory = Paths.get(getClass().getClassLoader().getResource("db/queue").toURI());
        List<String> files;
        try (Stream<Path> listing = Files.list(directory)) {
            files = listing.map(p -> p.getFileName().toString()).sorted().toList();
        }
        List<String> resources = new ArrayList<>(resources());
        assertThat(files).containsExactlyInAnyOrderElementsOf(
                resources.stream().map(r -> r.substring("db/queue/".length())).toList());
        Pattern placeholder = Pattern.compile("\\$\\{([^}]*)}");
        for (String resource : resources) {
            String script = SchemaMigrator.read(resource);
            Matcher matcher = placeholder.matcher(script);
            while (matcher.find()) {
                assertThat(matcher.group(1)).as("placeholder in %s", resource).isEqualTo("schema");
            }
            // tools that split scripts at semicolons (Liquibase's splitStatements) must not split inside a comment
            assertThat(script.lines().filter(line -> line.strip().startsWith("--")))
                    .as("comment lines of %s", resource).noneMatch(line -> line.contains(";"));
        }
    }

    @Test
    void aChangedFunctionFileIsAppliedAgainAndNothingElse() {
        String schema = newSchema();
        SchemaMigrator.migrate(MyBatisSupport.sessionFactory(pool, schema), schema);
        String q = "\"" + schema + "\"";
        // what an upgrade that changed the claim's file finds: another checksum (and here, a function gone)
        execute("UPDATE " + q + ".schema_functions SET checksum = 0 WHERE file = 'R__claim.sql'");
        execute("DROP FUNCTION " + q + ".pull_any(text, text[], integer, text, interval)");

        assertThat(SchemaMigrator.migrate(MyBatisSupport.sessionFactory(pool, schema), schema))
                .containsExactly("R__claim.sql");
        assertThat(query("SELECT to_regprocedure('" + q + ".pull_any(text, text[], integer, text, interval)') IS NOT NULL"))
                .containsExactly(true);
        assertThat(SchemaMigrator.migrate(MyBatisSupport.sessionFactory(pool, schema), schema)).isEmpty();
    }

    @Test
    void aSchemaOfTheBaselineGetsTheWakeMarksAsMigrationTwo() {
        String schema = newSchema();
        SchemaMigrator.migrate(MyBatisSupport.sessionFactory(pool, schema), schema);
        String q = "\"" + schema + "\"";
        // what an install of the 0.1.0 baseline holds: version 1 only, and function files of other content
        execute("DROP TABLE " + q + ".wake_marks");
        execute("DELETE FROM " + q + ".schema_version WHERE version = 2");
        execute("UPDATE " + q + ".schema_functions SET checksum = 0");

        List<String> applied = SchemaMigrator.migrate(MyBatisSupport.sessionFactory(pool, schema), schema);
        assertThat(applied.get(0)).isEqualTo("2");
        assertThat(applied).contains("R__publish.sql");
        try (PostgresQueue queue = PostgresQueue.create(pool, PostgresQueueConfig.defaults().schema(schema).listen(false))) {
            queue.namespace("acme").publish("email", "{}");
        }
        assertThat(query("SELECT sum(mark)::bigint FROM " + q + ".wake_marks WHERE namespace = 'acme'")).containsExactly(1L);
    }

    @Test
    void aSchemaNewerThanTheLibraryIsRefusedNamingBothVersionsAndKeepsItsFunctions() {
        String schema = newSchema();
        SchemaMigrator.migrate(MyBatisSupport.sessionFactory(pool, schema), schema);
        String q = "\"" + schema + "\"";
        int newer = SchemaMigrator.latestVersion() + 1;
        execute("INSERT INTO " + q + ".schema_version (version, description, checksum) VALUES (" + newer + ", 'later', 0)");
        execute("UPDATE " + q + ".schema_functions SET checksum = 0");

        assertThatThrownBy(() -> SchemaMigrator.migrate(MyBatisSupport.sessionFactory(pool, schema), schema))
                .isInstanceOf(StoreNotReadyException.class)
                .hasMessageContaining(schema).hasMessageContaining("version " + newer)
                .hasMessageContaining("library's " + SchemaMigrator.latestVersion());
        assertThat(query("SELECT count(*) FROM " + q + ".schema_functions WHERE checksum = 0"))
                .as("no function file applied").containsExactly((long) SchemaMigrator.FUNCTION_FILES.size());
        PostgresQueueConfig config = PostgresQueueConfig.defaults().schema(schema).migrateOnStart(false).listen(false);
        assertThatThrownBy(() -> PostgresQueue.create(pool, config)).isInstanceOf(StoreNotReadyException.class)
                .hasMessageContaining("version " + newer);
    }

    @Test
    void aSchemaOfAPreReleaseSnapshotIsRefusedWithWhatToDo() {
        String schema = newSchema();
        String q = "\"" + schema + "\"";
        // what a snapshot's migrator left: its 27 versions recorded, its tables holding a message
        for (int version = 1; version <= SnapshotMigrations.LAST; version++) {
            execute(SnapshotMigrations.script(version).replace("${schema}", schema));
        }
        execute("CREATE TABLE " + q + ".schema_version (version integer NOT NULL PRIMARY KEY, description text NOT NULL,"
                + " checksum bigint NOT NULL, installed_at timestamptz NOT NULL DEFAULT now())");
        execute("INSERT INTO " + q + ".schema_version (version, description, checksum)"
                + " SELECT v, CASE v WHEN 1 THEN 'messages' ELSE 'v' || v END, 0 FROM generate_series(1, "
                + SnapshotMigrations.LAST + ") v");
        execute("SELECT " + q + ".push('acme', 'email', '{}')");

        assertThatThrownBy(() -> SchemaMigrator.migrate(MyBatisSupport.sessionFactory(pool, schema), schema))
                .isInstanceOf(StoreNotReadyException.class)
                .hasMessageContaining(schema).hasMessageContaining("1 to " + SnapshotMigrations.LAST)
                .hasMessageContaining("version " + SchemaMigrator.latestVersion()).hasMessageContaining("drop the schema");
        assertThat(query("SELECT count(*) FROM " + q + ".messages")).as("nothing lost").containsExactly(1L);
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
    void everyTableOfTenantDataHasItsPolicyAfterAMigration() {
        String schema = newSchema();
        SchemaMigrator.migrate(MyBatisSupport.sessionFactory(pool, schema), schema);
        assertThat(query("SELECT count(*) FROM pg_policies WHERE schemaname = '" + schema + "' AND policyname = 'tenant_isolation'"))
                .containsExactly(19L);
    }

    private static List<Object> allVersions() {
        return SchemaMigrator.MIGRATIONS.stream().map(m -> (Object) m.version()).toList();
    }

    /** What one migration of a new schema applies: every version and every function file. */
    private static List<String> everything() {
        List<String> all = new ArrayList<>();
        SchemaMigrator.MIGRATIONS.forEach(m -> all.add(String.valueOf(m.version())));
        SchemaMigrator.FUNCTION_FILES.forEach(f -> all.add(f.file()));
        return all;
    }

    /** Every file of db/queue/, in the order the queue's migrator applies them. */
    private static List<String> resources() {
        List<String> all = new ArrayList<>();
        SchemaMigrator.MIGRATIONS.forEach(m -> all.add(m.resource()));
        SchemaMigrator.FUNCTION_FILES.forEach(f -> all.add(f.resource()));
        all.add(SchemaMigrator.AFTER_MIGRATE);
        return all;
    }

    /** What Flyway does with the placeholder schema=&lt;name&gt;: replace it and run each file in order. */
    private void applyLikeFlyway(String schema) {
        for (String resource : resources()) {
            execute(SchemaMigrator.read(resource).replace("${schema}", schema));
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
