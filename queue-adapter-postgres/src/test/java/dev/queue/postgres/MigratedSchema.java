package dev.queue.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A freshly migrated schema of one test ({@link PostgresTestServer#migratedSchema}): in a database of its own,
 * copied from a template, or, on a server where the tests may not create databases, a fresh schema of the server's
 * database. Connect to it through {@link #jdbcUrl()}, {@link #dataSource()} or {@link #newPool}, not through the
 * server's own DataSource. Close drops it.
 */
public final class MigratedSchema implements AutoCloseable {

    private final String schema;
    private final String database;
    private final String jdbcUrl;
    private final DataSource dataSource;

    MigratedSchema(String schema, String database, String jdbcUrl) {
        this.schema = schema;
        this.database = database;
        this.jdbcUrl = jdbcUrl;
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(jdbcUrl);
        this.dataSource = ds;
    }

    public String schema() {
        return schema;
    }

    /** The database of its own; null when the schema is one of the server's own database. */
    public String database() {
        return database;
    }

    /** A JDBC URL of the schema's database carrying the credentials. */
    public String jdbcUrl() {
        return jdbcUrl;
    }

    /** Opens a new physical connection per call (no pool) to the schema's database, as the superuser. */
    public DataSource dataSource() {
        return dataSource;
    }

    /** A pool of the test's own on the schema's database; the test closes it. */
    public HikariDataSource newPool(String name, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(1);
        config.setPoolName(name);
        return new HikariDataSource(config);
    }

    /** Runs one statement in the schema's database on a connection of its own (auto-commit). */
    public void execute(String sql) {
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException("test SQL failed: " + sql, e);
        }
    }

    /** Drops the database (ending its sessions), or the schema. */
    @Override
    public void close() {
        if (database != null) {
            PostgresTestServer.dropDatabase(database);
        } else {
            PostgresTestServer.dropSchema(schema);
        }
    }
}
