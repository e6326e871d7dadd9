package dev.queue.postgres;

import dev.queue.api.StoreNotReadyException;
import org.apache.ibatis.session.SqlSession;
import org.apache.ibatis.session.SqlSessionFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.CRC32;

/**
 * Installs and upgrades the queue's schema from {@code db/queue/}: versioned migrations ({@code V<n>__<name>.sql},
 * tables and other DDL, each applied once and recorded in {@code schema_version}), then the function files
 * ({@code R__<area>.sql}, every function of the engine once, re-applied whenever their content changes and recorded
 * in {@code schema_functions}), then {@code afterMigrate.sql}, which grants and secures whatever the schema now
 * holds. Everything runs in one transaction that first takes a transaction-level advisory lock keyed by the schema
 * name: replicas starting at the same moment queue up on the lock, and each finds what the first one recorded.
 * The files are plain SQL with a {@code ${schema}} placeholder and follow Flyway's naming, so Flyway (versioned,
 * repeatable and callback files) and Liquibase can apply the same files instead.
 *
 * <p>A schema newer than this library is refused, so an older replica in a rolling deploy cannot put its older
 * function bodies back; so is a schema installed by a pre-release snapshot, which this library does not upgrade.
 */
final class SchemaMigrator {

    /** A versioned script of {@code db/queue/}; its version and description follow Flyway's {@code V<n>__<name>.sql}. */
    record Migration(int version, String description) {

        String resource() {
            return "db/queue/V" + version + "__" + description + ".sql";
        }
    }

    /** A file of functions of one area of the engine, Flyway's repeatable {@code R__<area>.sql}. */
    record FunctionFile(String area) {

        String resource() {
            return "db/queue/R__" + area + ".sql";
        }

        String file() {
            return "R__" + area + ".sql";
        }
    }

    /**
     * In order. A change to tables is a new file here and in {@code db/queue/}; applied files never change. A
     * release that changes a function file also adds a version (its file may hold only a comment saying what
     * changed): the version is what tells an older replica that the schema is newer than it.
     */
    static final List<Migration> MIGRATIONS = List.of(
            new Migration(1, "baseline"),
            new Migration(2, "wake_marks"),
            new Migration(3, "limit_slots"));

    /**
     * In the order this migrator applies them. No file calls into another while it is applied, so any order works,
     * which lets Flyway apply them in the order of their names.
     */
    static final List<FunctionFile> FUNCTION_FILES = Stream.of(
                    "input_checks", "rules", "tenants", "audit", "queue_policies", "publish", "claim", "settle",
                    "rescue", "dead_letters", "schedules", "flow_control", "stats", "operator")
            .map(FunctionFile::new).toList();

    /** Grants and secures the schema over what it holds; Flyway runs it after every migrate as a callback. */
    static final String AFTER_MIGRATE = "db/queue/afterMigrate.sql";

    /** The descriptions of the first versions of pre-release snapshots, which had no baseline. */
    private static final String SNAPSHOT_FIRST_VERSION = "messages";

    private static final Logger LOG = LoggerFactory.getLogger(SchemaMigrator.class);

    private SchemaMigrator() {
    }

    static int latestVersion() {
        return MIGRATIONS.get(MIGRATIONS.size() - 1).version();
    }

    /**
     * Brings the schema to this library's version; returns the versions and function files this call applied
     * (often none): versions as their numbers, function files as their file names.
     */
    static List<String> migrate(SqlSessionFactory sessions, String schema) {
        try (SqlSession session = sessions.openSession(false)) {
            try {
                MaintenanceMapper mapper = session.getMapper(MaintenanceMapper.class);
                mapper.lockMigrations(schema);
                mapper.createSchema();
                mapper.createSchemaVersion();
                mapper.createSchemaFunctions();
                Map<Integer, MaintenanceMapper.Version> applied = mapper.appliedVersions().stream()
                        .collect(Collectors.toMap(MaintenanceMapper.Version::version, Function.identity()));
                refuseUnsupported(schema, applied);
                List<String> appliedNow = new ArrayList<>();
                for (Migration migration : MIGRATIONS) {
                    String script = read(migration.resource());
                    long checksum = checksum(script);
                    MaintenanceMapper.Version done = applied.get(migration.version());
                    if (done != null) {
                        if (done.checksum() != checksum) {
                            LOG.warn("schema {}: migration {} was applied from a different file (checksum {} in the "
                                    + "database, {} now); applied migrations must not change", schema,
                                    migration.resource(), done.checksum(), checksum);
                        }
                        continue;
                    }
                    execute(session, script, schema);
                    mapper.recordVersion(migration.version(), migration.description(), checksum);
                    appliedNow.add(String.valueOf(migration.version()));
                }
                Map<String, Long> functions = mapper.appliedFunctionFiles().stream().collect(Collectors.toMap(
                        MaintenanceMapper.FunctionFile::file, MaintenanceMapper.FunctionFile::checksum));
                for (FunctionFile file : FUNCTION_FILES) {
                    String script = read(file.resource());
                    long checksum = checksum(script);
                    if (Long.valueOf(checksum).equals(functions.get(file.file()))) {
                        continue;
                    }
                    execute(session, script, schema);
                    mapper.recordFunctionFile(file.file(), checksum);
                    appliedNow.add(file.file());
                }
                if (!appliedNow.isEmpty()) {
                    execute(session, read(AFTER_MIGRATE), schema);
                }
                session.commit();
                if (!appliedNow.isEmpty()) {
                    LOG.info("schema {}: applied {}", schema, appliedNow);
                }
                return appliedNow;
            } catch (Exception e) {
                session.rollback(true);
                throw e;
            }
        } catch (StoreNotReadyException e) {
            throw e;
        } catch (Exception e) {
            throw PostgresErrors.translate("the migration of schema " + schema, e);
        }
    }

    /** Refuses a schema of a pre-release snapshot and one newer than this library, naming both versions. */
    private static void refuseUnsupported(String schema, Map<Integer, MaintenanceMapper.Version> applied) {
        MaintenanceMapper.Version first = applied.get(1);
        if (first != null && SNAPSHOT_FIRST_VERSION.equals(first.description())) {
            int snapshot = applied.keySet().stream().max(Integer::compare).orElse(1);
            throw new StoreNotReadyException("schema \"" + schema + "\" was installed by a 0.1.0 pre-release snapshot "
                    + "(its migrations 1 to " + snapshot + "), which this library (schema version " + latestVersion()
                    + ", the 0.1.0 baseline) does not upgrade: drain or export its messages, drop the schema and "
                    + "let the queue install it again (docs/operations.md, \"Upgrades\")");
        }
        int newest = applied.keySet().stream().max(Integer::compare).orElse(0);
        if (newest > latestVersion()) {
            throw new StoreNotReadyException("schema \"" + schema + "\" is at version " + newest
                    + ", newer than this library's " + latestVersion() + ": a newer release migrated it, and this one "
                    + "would put older functions back; run the newer release (docs/operations.md, \"Upgrades\")");
        }
    }

    private static void execute(SqlSession session, String script, String schema) throws java.sql.SQLException {
        try (Statement statement = session.getConnection().createStatement()) {
            statement.execute(script.replace("${schema}", schema));
        }
    }

    /** For {@code migrateOnStart(false)}: fails clearly when the schema has not been migrated. */
    static void verify(SqlSessionFactory sessions, String schema) {
        Boolean present;
        try (SqlSession session = sessions.openSession(true)) {
            MaintenanceMapper mapper = session.getMapper(MaintenanceMapper.class);
            present = mapper.tablesPresent();
            if (Boolean.TRUE.equals(mapper.schemaVersionPresent())) {
                refuseUnsupported(schema, mapper.appliedVersions().stream()
                        .collect(Collectors.toMap(MaintenanceMapper.Version::version, Function.identity())));
            }
        } catch (StoreNotReadyException e) {
            throw e;
        } catch (Exception e) {
            throw PostgresErrors.translate("the check of schema " + schema, e);
        }
        if (!Boolean.TRUE.equals(present)) {
            throw new StoreNotReadyException("schema \"" + schema + "\" has no queue tables: apply the migrations in "
                    + "db/queue/ (Flyway or Liquibase with the placeholder schema=" + schema
                    + ") or set PostgresQueueConfig.migrateOnStart(true)");
        }
    }

    static String read(String resource) {
        try (InputStream in = SchemaMigrator.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("migration " + resource + " is missing from the class path");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read migration " + resource, e);
        }
    }

    static long checksum(String script) {
        CRC32 crc = new CRC32();
        crc.update(script.replace("\r\n", "\n").getBytes(StandardCharsets.UTF_8));
        return crc.getValue();
    }
}
