package dev.queue.postgres.sql;

import dev.queue.postgres.PostgresTestServer;
import org.postgresql.ds.PGSimpleDataSource;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A test database with the roles of {@code setup_roles()} and login roles of its own (unique names, since roles are
 * cluster-wide), dropped on close.
 */
final class SqlTenantRoles implements AutoCloseable {

    static final String PASSWORD = "tenant-secret";

    final SqlTestDatabase db;
    private final List<String> logins = new ArrayList<>();
    private final String suffix = Integer.toString(ThreadLocalRandom.current().nextInt(1 << 30), 36);

    private SqlTenantRoles(SqlTestDatabase db) {
        this.db = db;
    }

    static SqlTenantRoles create(String prefix) {
        SqlTestDatabase db = SqlTestDatabase.create(prefix);
        db.rows("CALL queue.setup_roles()");
        return new SqlTenantRoles(db);
    }

    /** A new login role, member of the given roles (e.g. queue_app), with a name unique to this run. */
    String login(String name, String... memberOf) {
        String role = name + "_" + suffix;
        PostgresTestServer.execute("CREATE ROLE " + role + " LOGIN PASSWORD '" + PASSWORD + "'");
        logins.add(role);
        for (String group : memberOf) {
            PostgresTestServer.execute("GRANT " + group + " TO " + role);
        }
        return role;
    }

    Connection connectAs(String role) throws SQLException {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(db.jdbcUrl);
        ds.setUser(role);
        ds.setPassword(PASSWORD);
        return ds.getConnection();
    }

    PGSimpleDataSource dataSourceAs(String role) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(db.jdbcUrl);
        ds.setUser(role);
        ds.setPassword(PASSWORD);
        return ds;
    }

    /** Every table of the schema that has a namespace column. */
    List<String> tenantTables() {
        List<String> tables = new ArrayList<>();
        for (Map<String, Object> row : db.rows("SELECT c.relname::text AS t FROM pg_class c "
                + "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'namespace' AND NOT a.attisdropped "
                + "WHERE c.relnamespace = 'queue'::regnamespace AND c.relkind = 'r' ORDER BY 1")) {
            tables.add((String) row.get("t"));
        }
        return tables;
    }

    /** Names of the schema's relations of a kind ('r' tables, 'S' sequences). */
    List<String> relations(String kind) {
        List<String> names = new ArrayList<>();
        for (Map<String, Object> row : db.rows("SELECT c.relname::text AS t FROM pg_class c "
                + "WHERE c.relnamespace = 'queue'::regnamespace AND c.relkind = ? ORDER BY 1", kind)) {
            names.add((String) row.get("t"));
        }
        return names;
    }

    /** The first column an UPDATE may set (not an identity column). */
    String firstColumn(String table) {
        return (String) db.value("SELECT attname::text FROM pg_attribute WHERE attrelid = ?::regclass AND attnum > 0 "
                + "AND NOT attisdropped AND attidentity = '' AND attgenerated = '' ORDER BY attnum LIMIT 1", "queue." + table);
    }

    /** The rows of every tenant table whose namespace is not the given one, as the superuser sees them. */
    Map<String, String> dumpExcept(String namespace) {
        Map<String, String> dump = new LinkedHashMap<>();
        for (String table : tenantTables()) {
            dump.put(table, (String) db.value("SELECT count(*) || ':' || coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '') "
                    + "FROM queue." + table + " t WHERE t.namespace <> ?", namespace));
        }
        return dump;
    }

    @Override
    public void close() {
        db.close();
        for (String role : logins) {
            PostgresTestServer.execute("DROP ROLE IF EXISTS " + role);
        }
    }
}
