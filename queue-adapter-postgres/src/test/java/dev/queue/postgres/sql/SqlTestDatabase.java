package dev.queue.postgres.sql;

import dev.queue.postgres.PostgresQueue;
import dev.queue.postgres.PostgresQueueConfig;
import dev.queue.postgres.PostgresTestServer;
import org.postgresql.ds.PGSimpleDataSource;
import org.postgresql.util.PSQLException;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * A database of its own on the test server, with the queue migrated into the schema {@code queue}, so the SQL of
 * the tests reads exactly as users write it ({@code SELECT queue.push(...)}) and ids start at 1. Dropped on close.
 */
final class SqlTestDatabase implements AutoCloseable {

    static final String SCHEMA = "queue";
    private static final Pattern URL = Pattern.compile("(jdbc:postgresql://)([^/:]+)(?::(\\d+))?/([^?]*)(\\?.*)?");

    final String name;
    final String jdbcUrl;
    final DataSource dataSource;

    private SqlTestDatabase(String name, String jdbcUrl) {
        this.name = name;
        this.jdbcUrl = jdbcUrl;
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(jdbcUrl);
        this.dataSource = ds;
    }

    /**
     * Creates the database with schema {@code queue} migrated in it the way the Java queue does on start: a copy of
     * a template database this JVM migrated so once ({@link PostgresTestServer#createDatabaseFrom}).
     */
    static SqlTestDatabase create(String prefix) {
        String name = prefix + "_" + Integer.toString(ThreadLocalRandom.current().nextInt(1 << 30), 36);
        PostgresTestServer.createDatabaseFrom("sql", SCHEMA, template -> PostgresQueue.create(template,
                PostgresQueueConfig.defaults().schema(SCHEMA).listen(false)).close(), name);
        return new SqlTestDatabase(name, urlFor(name));
    }

    private static String urlFor(String database) {
        Matcher matcher = URL.matcher(PostgresTestServer.jdbcUrl());
        if (!matcher.matches()) {
            throw new IllegalStateException("cannot read the test server's JDBC URL " + PostgresTestServer.jdbcUrl());
        }
        return matcher.group(1) + matcher.group(2) + (matcher.group(3) == null ? "" : ":" + matcher.group(3)) + "/" + database
                + (matcher.group(5) == null ? "" : matcher.group(5));
    }

    /** host, port, user and password of the server, for a psql process. */
    Map<String, String> connectionParts() {
        Matcher matcher = URL.matcher(jdbcUrl);
        if (!matcher.matches()) {
            throw new IllegalStateException(jdbcUrl);
        }
        Map<String, String> parts = new LinkedHashMap<>();
        parts.put("host", matcher.group(2));
        parts.put("port", matcher.group(3) == null ? "5432" : matcher.group(3));
        parts.put("dbname", name);
        String query = matcher.group(5) == null ? "" : matcher.group(5).substring(1);
        for (String pair : query.split("&")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                parts.put(pair.substring(0, eq), pair.substring(eq + 1));
            }
        }
        return parts;
    }

    Connection connect() throws SQLException {
        return dataSource.getConnection();
    }

    /** Runs one statement (auto-commit) and returns its rows, column label to value. */
    List<Map<String, Object>> rows(String sql, Object... params) {
        try (Connection connection = connect()) {
            return rows(connection, sql, params);
        } catch (SQLException e) {
            throw new IllegalStateException(e.getMessage() + " in: " + sql, e);
        }
    }

    static List<Map<String, Object>> rows(Connection connection, String sql, Object... params) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                statement.setObject(i + 1, params[i]);
            }
            List<Map<String, Object>> rows = new ArrayList<>();
            if (!statement.execute()) {
                return rows;
            }
            try (ResultSet result = statement.getResultSet()) {
                ResultSetMetaData meta = result.getMetaData();
                while (result.next()) {
                    Map<String, Object> row = new LinkedHashMap<>();
                    for (int c = 1; c <= meta.getColumnCount(); c++) {
                        row.put(meta.getColumnLabel(c), "timestamptz".equals(meta.getColumnTypeName(c))
                                ? result.getObject(c, java.time.OffsetDateTime.class) : result.getObject(c));
                    }
                    rows.add(row);
                }
            }
            return rows;
        }
    }

    /** The first column of the only row. */
    Object value(String sql, Object... params) {
        List<Map<String, Object>> rows = rows(sql, params);
        assertThat(rows).as(sql).hasSize(1);
        return rows.get(0).values().iterator().next();
    }

    long count(String sql, Object... params) {
        return ((Number) value(sql, params)).longValue();
    }

    /** The error a statement raises; fails when it raises none. */
    PSQLException error(String sql, Object... params) {
        PSQLException error = catchThrowableOfType(() -> {
            try (Connection connection = connect()) {
                rows(connection, sql, params);
            }
        }, PSQLException.class);
        if (error == null) {
            throw new AssertionError("expected an error from " + sql);
        }
        return error;
    }

    /** The content of every table the functions write, to show that a refused call changed nothing. */
    Map<String, String> footprint() {
        StringBuilder sql = new StringBuilder();
        for (String table : List.of("messages", "dead_letters", "completed_messages", "completed_counters", "topics",
                "schedules", "queue_policies", "audit_log", "paused_topics", "topic_limits", "limit_holders", "limit_slots",
                "limit_buckets", "topic_ordering")) {
            sql.append(sql.length() == 0 ? "" : " UNION ALL ").append("SELECT '").append(table)
                    .append("' AS name, count(*) || ':' || coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '') AS content FROM queue.")
                    .append(table).append(" t");
        }
        Map<String, String> contents = new LinkedHashMap<>();
        for (Map<String, Object> row : rows(sql.toString())) {
            contents.put((String) row.get("name"), (String) row.get("content"));
        }
        return contents;
    }

    @Override
    public void close() {
        PostgresTestServer.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    }
}
