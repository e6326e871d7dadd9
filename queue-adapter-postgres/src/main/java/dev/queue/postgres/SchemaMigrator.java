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
import java.util.zip.CRC32;

/**
 * Applies the versioned SQL migrations of {@code db/queue/} to one schema. All pending versions run in one
 * transaction that first takes a transaction-level advisory lock keyed by the schema name: replicas starting at
 * the same moment queue up on the lock, and each finds the versions the first one recorded in
 * {@code schema_version}, so every version is applied exactly once. The scripts are plain SQL with a
 * {@code ${schema}} placeholder, so Flyway and Liquibase can apply the same files instead.
 */
final class SchemaMigrator {

    /** A script of {@code db/queue/}; its version and description follow Flyway's {@code V<n>__<name>.sql}. */
    record Migration(int version, String description) {

        String resource() {
            return "db/queue/V" + version + "__" + description + ".sql";
        }
    }

    /** In order. A new migration is a new file here and in {@code db/queue/}; applied files never change. */
    static final List<Migration> MIGRATIONS = List.of(
            new Migration(1, "messages"),
            new Migration(2, "dead_letters"),
            new Migration(3, "completions"),
            new Migration(4, "schedules"),
            new Migration(5, "hot_table_fillfactor"),
            new Migration(6, "identifier_collation"),
            new Migration(7, "hot_table_no_truncate"),
            new Migration(8, "sql_rules"),
            new Migration(9, "sql_api"),
            new Migration(10, "engine_functions"),
            new Migration(11, "tenants"),
            new Migration(12, "operator"),
            new Migration(13, "engine_gates"),
            new Migration(14, "flow_control"),
            new Migration(15, "topic_rates"),
            new Migration(16, "trusted_engine"),
            new Migration(17, "audit_retention"),
            new Migration(18, "attempt_history"),
            new Migration(19, "operator_search"),
            new Migration(20, "head_sweeps"),
            new Migration(21, "trusted_policies"),
            new Migration(22, "ordering_keys"),
            new Migration(23, "topic_limits"),
            new Migration(24, "ordering_advance_in_one_statement"),
            new Migration(25, "limits_by_ordering_key"),
            new Migration(26, "rate_alone_claims_concurrently"),
            new Migration(27, "partition_counts_once_per_claim"));

    /** The migration that ends with {@code _secure_schema()}. */
    static final int SECURING_VERSION = 11;

    private static final Logger LOG = LoggerFactory.getLogger(SchemaMigrator.class);

    private SchemaMigrator() {
    }

    /** Brings the schema to the latest version; returns the versions this call applied (often none). */
    static List<Integer> migrate(SqlSessionFactory sessions, String schema) {
        try (SqlSession session = sessions.openSession(false)) {
            try {
                MaintenanceMapper mapper = session.getMapper(MaintenanceMapper.class);
                mapper.lockMigrations(schema);
                mapper.createSchema();
                mapper.createSchemaVersion();
                Map<Integer, MaintenanceMapper.Version> applied = mapper.appliedVersions().stream()
                        .collect(Collectors.toMap(MaintenanceMapper.Version::version, Function.identity()));
                List<Integer> appliedNow = new ArrayList<>();
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
                    try (Statement statement = session.getConnection().createStatement()) {
                        statement.execute(script.replace("${schema}", schema));
                    }
                    mapper.recordVersion(migration.version(), migration.description(), checksum);
                    appliedNow.add(migration.version());
                }
                // version 11 ends by securing the schema itself: again only when something ran after it
                if (!appliedNow.isEmpty() && appliedNow.get(appliedNow.size() - 1) != SECURING_VERSION) {
                    secure(session, schema);
                }
                int latest = MIGRATIONS.get(MIGRATIONS.size() - 1).version();
                applied.keySet().stream().filter(v -> v > latest).max(Integer::compare).ifPresent(v -> LOG.warn(
                        "schema {} is at version {}, newer than this library knows ({}); running anyway",
                        schema, v, latest));
                session.commit();
                if (!appliedNow.isEmpty()) {
                    LOG.info("schema {}: applied migrations {}", schema, appliedNow);
                }
                return appliedNow;
            } catch (Exception e) {
                session.rollback(true);
                throw e;
            }
        } catch (Exception e) {
            throw PostgresErrors.translate("the migration of schema " + schema, e);
        }
    }

    /**
     * Applies the schema's privileges, row-level security and function attributes again (version 11's
     * {@code _secure_schema()}), generically over what the schema now holds: a version applied after 11 (or
     * applied out of order) may have created or re-created functions, which CREATE OR REPLACE leaves without
     * SECURITY DEFINER and without their fixed search_path.
     */
    private static void secure(SqlSession session, String schema) throws java.sql.SQLException {
        try (Statement statement = session.getConnection().createStatement()) {
            statement.execute("DO $$ BEGIN IF to_regprocedure('\"" + schema + "\"._secure_schema()') IS NOT NULL THEN "
                    + "PERFORM \"" + schema + "\"._secure_schema(); END IF; END $$");
        }
    }

    /** For {@code migrateOnStart(false)}: fails clearly when the schema has not been migrated. */
    static void verify(SqlSessionFactory sessions, String schema) {
        Boolean present;
        try (SqlSession session = sessions.openSession(true)) {
            present = session.getMapper(MaintenanceMapper.class).tablesPresent();
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
