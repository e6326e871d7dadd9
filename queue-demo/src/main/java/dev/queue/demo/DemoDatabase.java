package dev.queue.demo;

import dev.queue.postgres.PostgresQueue;
import dev.queue.postgres.PostgresQueueConfig;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The PostgreSQL the demo runs on: an embedded server it starts (and stops on close), or the one a JDBC URL
 * names, with user and password as URL parameters ({@code ?user=app&password=secret}).
 */
final class DemoDatabase implements AutoCloseable {

    private static final Pattern PASSWORD_PARAMETER = Pattern.compile("(?i)([?&]password=)[^&]*");

    private final String jdbcUrl;
    private final String user;
    private final String password;
    private final String description;
    private final EmbeddedPostgres embedded;

    private DemoDatabase(String jdbcUrl, String user, String password, String description, EmbeddedPostgres embedded) {
        this.jdbcUrl = jdbcUrl;
        this.user = user;
        this.password = password;
        this.description = description;
        this.embedded = embedded;
    }

    /**
     * Starts an embedded PostgreSQL on a free port, in a temporary directory deleted when it stops. Its own
     * shutdown hook is off: on Ctrl-C the demo first closes its subscriptions and queues, then stops the server
     * (a hook of the server's own would stop it at once, under the handlers still running).
     */
    static DemoDatabase embedded() {
        try {
            long start = System.nanoTime();
            EmbeddedPostgres postgres = EmbeddedPostgres.builder().setRegisterShutdownHook(false).start();
            String description = String.format(Locale.ROOT, "embedded PostgreSQL on port %d (started in %.1f s)",
                    postgres.getPort(), (System.nanoTime() - start) / 1e9);
            return new DemoDatabase(postgres.getJdbcUrl("postgres", "postgres"), "postgres", null, description, postgres);
        } catch (IOException e) {
            throw new UncheckedIOException("could not start the embedded PostgreSQL: " + e.getMessage(), e);
        }
    }

    /** The server a JDBC URL names; user and password are taken from its parameters when present. */
    static DemoDatabase external(String jdbcUrl) {
        if (!jdbcUrl.startsWith("jdbc:postgresql:")) {
            throw new IllegalArgumentException("--database-url must be a PostgreSQL JDBC URL, e.g. "
                    + "jdbc:postgresql://localhost:5432/app?user=app&password=secret; got " + mask(jdbcUrl));
        }
        return new DemoDatabase(jdbcUrl, parameter(jdbcUrl, "user"), parameter(jdbcUrl, "password"), mask(jdbcUrl), null);
    }

    /** Where the demo runs, fit to print: the password of a URL is masked. */
    String description() {
        return description;
    }

    /** A queue with a connection pool of its own, as each replica of an application would have. */
    PostgresQueue connect(PostgresQueueConfig config) {
        return PostgresQueue.connect(jdbcUrl, user, password, config);
    }

    /** Drops the schema and everything in it, so that each run starts from nothing; the queue recreates it. */
    void dropSchema(String schema) throws SQLException {
        Properties credentials = new Properties();
        if (user != null) {
            credentials.setProperty("user", user);
        }
        if (password != null) {
            credentials.setProperty("password", password);
        }
        try (Connection connection = DriverManager.getConnection(jdbcUrl, credentials);
             Statement statement = connection.createStatement()) {
            // the name passed PostgresQueueConfig.schema(..): lower-case letters, digits and underscores only
            statement.execute("DROP SCHEMA IF EXISTS \"" + schema + "\" CASCADE");
        }
    }

    @Override
    public void close() throws IOException {
        if (embedded != null) {
            embedded.close();
        }
    }

    private static String parameter(String url, String name) {
        Matcher matcher = Pattern.compile("[?&]" + Pattern.quote(name) + "=([^&]*)").matcher(url);
        return matcher.find() ? URLDecoder.decode(matcher.group(1), StandardCharsets.UTF_8) : null;
    }

    static String mask(String url) {
        return PASSWORD_PARAMETER.matcher(url).replaceAll("$1***");
    }

    @Override
    public String toString() {
        return description;
    }
}
