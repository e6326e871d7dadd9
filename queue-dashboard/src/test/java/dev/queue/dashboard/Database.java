package dev.queue.dashboard;

import dev.queue.postgres.PostgresOperator;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/** An embedded PostgreSQL with the queue schema migrated, and the SQL the tests set their scenes with. */
final class Database implements AutoCloseable {

    private final EmbeddedPostgres postgres;
    final String url;
    final PostgresOperator operator;

    Database() throws IOException {
        postgres = EmbeddedPostgres.builder().start();
        url = postgres.getJdbcUrl("postgres", "postgres");
        operator = PostgresOperator.connect(url, null, null, "queue");
        operator.migrate();
    }

    List<Object> sql(String statement, Object... params) {
        try (Connection connection = DriverManager.getConnection(url);
             PreparedStatement prepared = connection.prepareStatement(statement)) {
            for (int i = 0; i < params.length; i++) {
                prepared.setObject(i + 1, params[i]);
            }
            List<Object> values = new ArrayList<>();
            if (prepared.execute()) {
                try (ResultSet rows = prepared.getResultSet()) {
                    while (rows.next()) {
                        values.add(rows.getObject(1));
                    }
                }
            }
            return values;
        } catch (SQLException e) {
            throw new IllegalStateException(e.getMessage() + " in " + statement, e);
        }
    }

    long push(String namespace, String topic, String extra) {
        return ((Number) sql("SELECT queue.push(?, ?, '{}'::json" + extra + ")", namespace, topic).get(0)).longValue();
    }

    /** A message that failed its only attempt: a dead letter with this error. */
    long dead(String namespace, String topic, String error) {
        long id = push(namespace, topic, "");
        sql("SELECT id FROM queue.pull(?, ?)", namespace, topic);
        sql("SELECT queue.fail(?, ?, ?)", namespace, id, error);
        return id;
    }

    void schedule(String namespace, String name, String topic) {
        sql("SELECT queue.create_schedule(?, ?, ?, '{}', p_cron_expression := '0 3 * * *')", namespace, name, topic);
    }

    void worker(String namespace, String id, String topic) {
        sql("SELECT queue.worker_heartbeat(?, 'host-a', 7, now(), '1.0', 'LISTENING', ?::jsonb)", id,
                "[{\"namespace\": \"" + namespace + "\", \"topics\": [\"" + topic + "\"], \"worker\": \"w\", \"concurrency\": 2, "
                        + "\"in_flight\": 0}]");
    }

    @Override
    public void close() throws IOException {
        postgres.close();
    }
}
