package dev.queue.postgres;

import org.apache.ibatis.mapping.BoundSql;
import org.apache.ibatis.mapping.MappedStatement;
import org.apache.ibatis.mapping.ParameterMapping;
import org.apache.ibatis.session.Configuration;
import org.apache.ibatis.session.SqlSessionFactory;
import org.apache.ibatis.type.JdbcType;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The statements every message passes through (publish, claim, complete), run on a pooled connection through
 * plain JDBC. The SQL and the order of its parameters still come from {@code QueueMapper.xml}; here parameters
 * are bound by their Java type and rows read by column position. MyBatis maps each column of each row by
 * reflection, looking up setters and type handlers by name, which cost about a third of the client's CPU under
 * load on a small machine, CPU the database on the same box then lacks. The driver keeps each SQL text as a
 * server-side prepared statement per connection.
 */
final class HotStatements {

    /** Reads one row at the result set's cursor. */
    @FunctionalInterface
    interface RowReader<T> {
        T read(ResultSet row) throws SQLException;
    }

    private final Configuration configuration;
    private final DataSource dataSource;

    HotStatements(SqlSessionFactory sessions) {
        this.configuration = sessions.getConfiguration();
        this.dataSource = configuration.getEnvironment().getDataSource();
    }

    /**
     * Runs mapper statement {@code id} in its own transaction (auto-commit) on a pooled connection and reads every
     * row it returns. Failures leave through {@link PostgresErrors} as for every other statement.
     */
    <T> List<T> autoCommitQuery(String operation, String id, Map<String, Object> params, RowReader<T> reader) {
        try (Connection connection = dataSource.getConnection()) {
            if (!connection.getAutoCommit()) {
                connection.setAutoCommit(true);
            }
            return query(connection, id, params, reader);
        } catch (SQLException | RuntimeException e) {
            throw PostgresErrors.translate(operation, e);
        }
    }

    private <T> List<T> query(Connection connection, String id, Map<String, Object> params, RowReader<T> reader)
            throws SQLException {
        MappedStatement statement = configuration.getMappedStatement(id);
        BoundSql bound = statement.getBoundSql(params);
        try (PreparedStatement prepared = connection.prepareStatement(bound.getSql())) {
            List<ParameterMapping> mappings = bound.getParameterMappings();
            for (int i = 0; i < mappings.size(); i++) {
                ParameterMapping mapping = mappings.get(i);
                bind(prepared, i + 1, params.get(mapping.getProperty()), mapping.getJdbcType());
            }
            try (ResultSet rows = prepared.executeQuery()) {
                List<T> result = new ArrayList<>();
                while (rows.next()) {
                    result.add(reader.read(rows));
                }
                return result;
            }
        }
    }

    /**
     * Binds one value by its Java type, as the mapper's type handlers would (the SQL casts every parameter whose
     * type matters). Arrays go through {@code setObject}, which encodes them with the array type's fixed OID;
     * {@code createArrayOf} looks the type up by name on every call. A null takes the parameter's declared JDBC
     * type, the type its values are sent with: were it sent untyped, the driver would see the parameter types
     * change between executions and prepare the statement on the server again, parse and plan included.
     */
    private static void bind(PreparedStatement prepared, int index, Object value, JdbcType declared) throws SQLException {
        if (value == null) {
            prepared.setNull(index, declared == null ? Types.OTHER : declared.TYPE_CODE);
        } else if (value instanceof String text) {
            prepared.setString(index, text);
        } else if (value instanceof Integer number) {
            prepared.setInt(index, number);
        } else if (value instanceof Long number) {
            prepared.setLong(index, number);
        } else if (value instanceof Boolean flag) {
            prepared.setBoolean(index, flag);
        } else if (value instanceof Instant instant) {
            prepared.setObject(index, OffsetDateTime.ofInstant(instant, ZoneOffset.UTC));
        } else if (value instanceof String[] || value instanceof Long[] || value instanceof Integer[]) {
            prepared.setObject(index, value);
        } else {
            throw new IllegalArgumentException("no binding for a parameter of type " + value.getClass().getName());
        }
    }

    /** The first column as a long (ids). */
    static long firstLong(ResultSet row) throws SQLException {
        return row.getLong(1);
    }

    /** A timestamptz column as an {@link Instant}, null when SQL NULL. */
    static Instant instant(ResultSet row, int column) throws SQLException {
        OffsetDateTime value = row.getObject(column, OffsetDateTime.class);
        return value == null ? null : value.toInstant();
    }
}
