package dev.queue.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The migrated schemas one contract factory handed out, each with the queues opened on it. When every queue on a
 * schema is closed (the contract closes each test's queues before the next test starts), the next test gets that
 * schema again with every table emptied, instead of a schema migrated for it: migrating and dropping a schema
 * per test was most of the Postgres module's test time. Emptying takes the tables' exclusive locks under a lock
 * timeout; a schema something still holds is not reused (it is dropped with the others when the factory closes).
 *
 * @param <S> what the factory keeps per schema (the name, or the name with its roles)
 */
final class ReusedSchemas<S> {

    private static final String LOCK_NOT_AVAILABLE = "55P03";
    private static final String DEADLOCK_DETECTED = "40P01";

    private final Map<S, List<PostgresQueue>> queuesOf = new LinkedHashMap<>();
    private final Function<S, String> schemaName;

    ReusedSchemas(Function<S, String> schemaName) {
        this.schemaName = schemaName;
    }

    /**
     * A schema of this factory whose queues are all closed, emptied and handed to {@code prepare} (which may close
     * the old queues' pools or grant again); null when there is none, and a new schema is to be migrated.
     */
    synchronized S takeIdle(Consumer<S> prepare) {
        for (Map.Entry<S, List<PostgresQueue>> entry : queuesOf.entrySet()) {
            if (entry.getValue().stream().anyMatch(PostgresQueue::isOpen)) {
                continue;
            }
            S schema = entry.getKey();
            if (empty(schemaName.apply(schema))) {
                prepare.accept(schema);
                entry.getValue().clear();
                return schema;
            }
            // not reusable: left for the factory's close, which drops every schema it handed out
            queuesOf.remove(schema);
            return null;
        }
        return null;
    }

    /** Records a schema migrated for this factory, before any queue is opened on it (opening may fail). */
    synchronized void added(S schema) {
        queuesOf.computeIfAbsent(schema, s -> new ArrayList<>());
    }

    /** Records a queue opened on the schema (a new one or one {@link #takeIdle} returned). */
    synchronized void opened(S schema, PostgresQueue queue) {
        queuesOf.computeIfAbsent(schema, s -> new ArrayList<>()).add(queue);
    }

    /** The schema a queue of this factory was opened on. */
    synchronized S schemaOf(Object queue) {
        for (Map.Entry<S, List<PostgresQueue>> entry : queuesOf.entrySet()) {
            if (entry.getValue().contains(queue)) {
                return entry.getKey();
            }
        }
        throw new IllegalArgumentException("not a queue of this factory: " + queue);
    }

    synchronized void clear() {
        queuesOf.clear();
    }

    /**
     * Empties every table but the migrations' record; false when the schema has no tables (never migrated) or a
     * lock could not be had in time (or waiting for it deadlocked). Any other failure is the test setup's and is
     * thrown.
     */
    static boolean empty(String schema) {
        PostgresQueueConfig.checkSchema(schema);
        try (Connection connection = PostgresTestServer.dataSource().getConnection()) {
            connection.setAutoCommit(false);
            List<String> tables = new ArrayList<>();
            try (PreparedStatement statement = connection.prepareStatement("SELECT format('%I.%I', schemaname, tablename) "
                    + "FROM pg_tables WHERE schemaname = ? AND tablename <> 'schema_version' ORDER BY 1")) {
                statement.setString(1, schema);
                try (var rows = statement.executeQuery()) {
                    while (rows.next()) {
                        tables.add(rows.getString(1));
                    }
                }
            }
            if (tables.isEmpty()) {
                return false; // never migrated: the queue meant for it was refused before it could migrate
            }
            try (Statement statement = connection.createStatement()) {
                statement.execute("SET LOCAL lock_timeout = '5s'");
                statement.execute("TRUNCATE " + String.join(", ", tables));
            }
            connection.commit();
            return true;
        } catch (SQLException e) {
            if (LOCK_NOT_AVAILABLE.equals(e.getSQLState()) || DEADLOCK_DETECTED.equals(e.getSQLState())) {
                return false;
            }
            throw new IllegalStateException("could not empty schema " + schema + " for reuse: " + e.getMessage(), e);
        }
    }
}
