package dev.queue.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.postgresql.ds.PGSimpleDataSource;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The roles of {@code setup_roles()} for a migrated schema of the test server, and login roles named after the
 * schema (roles are cluster-wide): tenants granted some namespaces, members of the app role. Close drops the
 * schema, the pools and every role.
 */
final class TenantRoles implements AutoCloseable {

    static final String PASSWORD = "tenant-pool-secret";

    final String schema;
    private final List<String> logins = new ArrayList<>();
    private final List<HikariDataSource> pools = new ArrayList<>();

    /** Sets up the roles of {@code schema}, which must be migrated. */
    TenantRoles(String schema) {
        this.schema = schema;
        PostgresTestServer.execute("CALL \"" + schema + "\".setup_roles()");
    }

    /** A login role granted these namespaces (and so a member of the schema's tenant role). */
    String tenant(String name, String... namespaces) {
        String role = login(name);
        grant(role, namespaces);
        return role;
    }

    /** Grants a tenant login these namespaces (again, after its schema was emptied for another test). */
    void grant(String role, String... namespaces) {
        for (String namespace : namespaces) {
            PostgresTestServer.execute("SELECT \"" + schema + "\".grant_tenant('" + namespace + "', '" + role + "')");
        }
    }

    /** A login role that is a member of the schema's app role (trusted with every namespace). */
    String app(String name) {
        String role = login(name);
        PostgresTestServer.execute("GRANT \"" + schema + "_app\" TO " + role);
        return role;
    }

    /** A login role that is a member of the schema's operator role. */
    String operator(String name) {
        String role = login(name);
        PostgresTestServer.execute("GRANT \"" + schema + "_operator\" TO " + role);
        return role;
    }

    private String login(String name) {
        if (List.of("owner", "app", "operator", "tenant").contains(name)) {
            throw new IllegalArgumentException("login name " + name + " is the name of a role setup_roles() creates");
        }
        String role = schema + "_" + name;
        PostgresTestServer.execute("CREATE ROLE " + role + " LOGIN PASSWORD '" + PASSWORD + "'");
        logins.add(role);
        return role;
    }

    /** A pool logging in as the role, closed with this. */
    HikariDataSource pool(String role, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url());
        config.setUsername(role);
        config.setPassword(PASSWORD);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(1);
        config.setPoolName(role);
        HikariDataSource pool = new HikariDataSource(config);
        pools.add(pool);
        return pool;
    }

    /** Closes the pools opened so far (their queues are closed), keeping the schema and its roles. */
    void closePools() {
        pools.forEach(HikariDataSource::close);
        pools.clear();
    }

    /** A non-pooled DataSource logging in as the role (for a LISTEN connection, or a probe). */
    PGSimpleDataSource dataSource(String role) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(url());
        ds.setUser(role);
        ds.setPassword(PASSWORD);
        return ds;
    }

    /** The test server's URL without the superuser's credentials (the driver lets those override a pool's). */
    static String url() {
        String url = PostgresTestServer.jdbcUrl();
        int query = url.indexOf('?');
        if (query < 0) {
            return url;
        }
        StringBuilder kept = new StringBuilder();
        for (String pair : url.substring(query + 1).split("&")) {
            String key = pair.contains("=") ? pair.substring(0, pair.indexOf('=')) : pair;
            if (!pair.isEmpty() && !key.equalsIgnoreCase("user") && !key.equalsIgnoreCase("password")) {
                kept.append(kept.length() == 0 ? "" : "&").append(pair);
            }
        }
        return url.substring(0, query) + (kept.length() == 0 ? "" : "?" + kept);
    }

    /** Every row of every table with a namespace column whose namespace is this one, as the superuser sees them. */
    Map<String, String> rowsOf(String namespace) throws SQLException {
        Map<String, String> dump = new LinkedHashMap<>();
        try (Connection connection = PostgresTestServer.dataSource().getConnection()) {
            List<String> tables = new ArrayList<>();
            try (PreparedStatement statement = connection.prepareStatement(
                    "SELECT c.relname::text FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid "
                            + "AND a.attname = 'namespace' AND NOT a.attisdropped "
                            + "WHERE c.relnamespace = ?::regnamespace AND c.relkind = 'r' ORDER BY 1")) {
                statement.setString(1, "\"" + schema + "\"");
                try (ResultSet rs = statement.executeQuery()) {
                    while (rs.next()) {
                        tables.add(rs.getString(1));
                    }
                }
            }
            for (String table : tables) {
                try (PreparedStatement statement = connection.prepareStatement("SELECT count(*) || ':' || "
                        + "coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '') FROM \"" + schema + "\"." + table
                        + " t WHERE t.namespace = ?")) {
                    statement.setString(1, namespace);
                    try (ResultSet rs = statement.executeQuery()) {
                        rs.next();
                        dump.put(table, rs.getString(1));
                    }
                }
            }
        }
        return dump;
    }

    @Override
    public void close() {
        pools.forEach(HikariDataSource::close);
        PostgresTestServer.dropSchema(schema);
        List<String> roles = new ArrayList<>(logins);
        for (String kind : List.of("tenant", "operator", "app", "owner")) {
            roles.add(schema + "_" + kind);
        }
        for (String role : roles) {
            PostgresTestServer.execute("DROP OWNED BY " + role);
            PostgresTestServer.execute("DROP ROLE " + role);
        }
    }
}
