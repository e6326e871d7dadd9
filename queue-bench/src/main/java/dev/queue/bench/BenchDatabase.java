package dev.queue.bench;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.io.IOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The server a benchmark runs against: an existing one from a JDBC URL (credentials inside it), or an embedded
 * PostgreSQL started for the run with durable commits (synchronous_commit on, as a production server runs),
 * so the figures compare with peers measured on default settings.
 */
final class BenchDatabase implements AutoCloseable {

    private final EmbeddedPostgres embedded;
    private final String url;

    private BenchDatabase(EmbeddedPostgres embedded, String url) {
        this.embedded = embedded;
        this.url = url;
    }

    static BenchDatabase open(String databaseUrl) throws IOException {
        if (databaseUrl != null && !databaseUrl.isBlank()) {
            return new BenchDatabase(null, databaseUrl);
        }
        EmbeddedPostgres pg = EmbeddedPostgres.builder()
                .setServerConfig("synchronous_commit", "on")
                .setServerConfig("max_connections", "300")
                .setServerConfig("shared_buffers", "256MB")
                .setServerConfig("shared_preload_libraries", "pg_stat_statements")
                .start();
        return new BenchDatabase(pg, pg.getJdbcUrl("postgres", "postgres"));
    }

    String url() {
        return url;
    }

    boolean embedded() {
        return embedded != null;
    }

    DataSource dataSource() {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(url);
        return ds;
    }

    Connection connect() throws SQLException {
        return dataSource().getConnection();
    }

    String serverVersion() throws SQLException {
        try (Connection c = connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SHOW server_version")) {
            rs.next();
            return rs.getString(1);
        }
    }

    String setting(String name) throws SQLException {
        try (Connection c = connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SHOW " + name)) {
            rs.next();
            return rs.getString(1);
        }
    }

    /** A login role with its password, and the server's URL without the credentials of the server's user. */
    record Login(String url, String user, String password) {

        DataSource dataSource() {
            PGSimpleDataSource ds = new PGSimpleDataSource();
            ds.setUrl(url);
            ds.setUser(user);
            ds.setPassword(password);
            return ds;
        }
    }

    /**
     * Sets up the roles of the migrated schema ({@code CALL setup_roles()}) and (re)creates the login
     * {@code <schema>_bench_app}, a member of {@code <schema>_app}, with a fresh random password. Needs a user that
     * may create roles (the embedded server's is a superuser).
     */
    Login appLogin(String schema) throws SQLException {
        String role = schema + "_bench_app";
        String password = java.util.UUID.randomUUID().toString();
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("CALL \"" + schema + "\".setup_roles()");
            s.execute("DO $$ BEGIN IF to_regrole('" + role + "') IS NULL THEN CREATE ROLE \"" + role + "\" LOGIN; END IF; END $$");
            s.execute("ALTER ROLE \"" + role + "\" LOGIN NOSUPERUSER NOBYPASSRLS PASSWORD '" + password + "'");
            s.execute("GRANT \"" + schema + "_app\" TO \"" + role + "\"");
        }
        return new Login(withoutCredentials(url), role, password);
    }

    /** The URL without its user and password parameters (the driver lets them override a DataSource's). */
    static String withoutCredentials(String url) {
        int query = url.indexOf('?');
        if (query < 0) {
            return url;
        }
        StringBuilder kept = new StringBuilder();
        for (String pair : url.substring(query + 1).split("&")) {
            String key = pair.contains("=") ? pair.substring(0, pair.indexOf('=')) : pair;
            if (!key.equalsIgnoreCase("user") && !key.equalsIgnoreCase("password") && !pair.isEmpty()) {
                kept.append(kept.length() == 0 ? "" : "&").append(pair);
            }
        }
        return url.substring(0, query) + (kept.length() == 0 ? "" : "?" + kept);
    }

    void dropSchema(String schema) throws SQLException {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA IF EXISTS \"" + schema + "\" CASCADE");
        }
    }

    /**
     * Writes every dirty buffer out now, so that the phase that follows starts with no checkpoint owed. Under this
     * load PostgreSQL checkpoints every half minute, and a phase that inherits the previous phase's checkpoint
     * pays for its writes and for the full-page images after it. False when the role may not checkpoint.
     */
    boolean checkpoint() {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("CHECKPOINT");
            return true;
        } catch (SQLException e) {
            return false;
        }
    }

    /** Dead tuples in the tables of a schema, as the statistics collector last saw them. */
    long deadTuples(String schema) throws SQLException {
        try (Connection c = connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT coalesce(sum(n_dead_tup), 0) FROM pg_stat_user_tables WHERE schemaname = '"
                     + schema.replace("'", "''") + "'")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** The statements that took the most server time, for finding what is in the way (needs pg_stat_statements). */
    String topStatements(int limit) {
        StringBuilder out = new StringBuilder();
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
            try (ResultSet rs = s.executeQuery("SELECT calls, round(total_exec_time::numeric, 0) AS total_ms, "
                    + "round(mean_exec_time::numeric, 3) AS mean_ms, rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 140) "
                    + "FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT " + limit)) {
                while (rs.next()) {
                    out.append(String.format("%8d calls %8s ms total %8s ms mean %9d rows  %s%n", rs.getLong(1), rs.getString(2),
                            rs.getString(3), rs.getLong(4), rs.getString(5)));
                }
            }
        } catch (SQLException e) {
            out.append("pg_stat_statements unavailable: ").append(e.getMessage());
        }
        return out.toString();
    }

    void resetStatements() {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
            s.execute("SELECT pg_stat_statements_reset()");
        } catch (SQLException e) {
            // Only a diagnostic: without the extension the run goes on.
        }
    }

    @Override
    public void close() throws IOException {
        if (embedded != null) {
            embedded.close();
        }
    }
}
