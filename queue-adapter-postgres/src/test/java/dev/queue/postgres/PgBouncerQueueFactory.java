package dev.queue.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.queue.api.ManualClock;
import dev.queue.api.Queue;
import dev.queue.api.QueueOptions;
import dev.queue.testkit.QueueFactory;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The contract suite's queues through a {@link LocalPgBouncer} in transaction mode: every connection of a queue,
 * its LISTEN connection included, goes through PgBouncer; no queue has a direct URL to the server. Each
 * {@link #create} migrates a new schema (through PgBouncer too); the schemas are dropped on close, directly.
 */
public final class PgBouncerQueueFactory implements QueueFactory {

    private static final AtomicInteger SCHEMAS = new AtomicInteger();

    private final LocalPostgresCluster server;
    private final LocalPgBouncer bouncer;
    private final List<String> schemas = new CopyOnWriteArrayList<>();
    private final Map<Queue, String> schemaOf = new IdentityHashMap<>();
    private HikariDataSource pool;

    public PgBouncerQueueFactory(LocalPostgresCluster server, LocalPgBouncer bouncer) {
        this.server = server;
        this.bouncer = bouncer;
    }

    /** A Hikari pool whose connections all go through {@code bouncer}. */
    static HikariDataSource poolThrough(LocalPgBouncer bouncer, String name, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(bouncer.jdbcUrl("postgres"));
        config.setPoolName(name);
        config.setMaximumPoolSize(size);
        config.setConnectionTimeout(10_000);
        return new HikariDataSource(config);
    }

    @Override
    public synchronized Queue create(ManualClock clock, QueueOptions options) {
        if (pool == null) {
            pool = poolThrough(bouncer, "bouncer-contract", 16);
        }
        String schema = "bouncer_" + SCHEMAS.incrementAndGet();
        schemas.add(schema);
        return open(schema, clock, options);
    }

    @Override
    public synchronized Queue createSharing(Queue first, ManualClock clock, QueueOptions options) {
        return open(schemaOf.get(first), clock, options);
    }

    private Queue open(String schema, ManualClock clock, QueueOptions options) {
        PostgresQueueConfig config = PostgresQueueConfig.defaults()
                .schema(schema)
                .queueOptions(options)
                .clock(clock)
                .listen(true);
        PostgresQueue queue = PostgresQueue.create(pool, pool, config);
        schemaOf.put(queue, schema);
        return queue;
    }

    @Override
    public synchronized void close() {
        if (pool != null) {
            pool.close();
            pool = null;
        }
        try (Connection connection = java.sql.DriverManager.getConnection(server.jdbcUrl());
             Statement statement = connection.createStatement()) {
            for (String schema : schemas) {
                statement.execute("DROP SCHEMA IF EXISTS \"" + schema + "\" CASCADE");
            }
        } catch (SQLException e) {
            throw new IllegalStateException("cannot drop the schemas " + schemas + ": " + e.getMessage(), e);
        }
        schemas.clear();
        schemaOf.clear();
    }
}
