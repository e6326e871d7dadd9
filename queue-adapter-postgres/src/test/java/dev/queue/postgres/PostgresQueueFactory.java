package dev.queue.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.queue.api.ManualClock;
import dev.queue.api.Queue;
import dev.queue.api.QueueOptions;
import dev.queue.testkit.QueueFactory;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The contract suite's queues: each {@link #create} migrates a fresh schema (so the store is empty) and starts a
 * {@link PostgresQueue} on it that takes its time from the manual clock and listens for wake-ups. All queues of
 * one factory share a pool; their LISTEN connections are opened separately. The schemas are dropped on close.
 * No capability is missing.
 */
public final class PostgresQueueFactory implements QueueFactory {

    private final List<String> schemas = new CopyOnWriteArrayList<>();
    private final Map<Queue, String> schemaOf = new ConcurrentHashMap<>();
    private HikariDataSource pool;

    @Override
    public synchronized Queue create(ManualClock clock, QueueOptions options) {
        if (pool == null) {
            pool = PostgresTestServer.newPool("contract", 24);
        }
        String schema = PostgresTestServer.freshSchema("contract");
        schemas.add(schema);
        Queue queue = open(schema, clock, options);
        schemaOf.put(queue, schema);
        return queue;
    }

    /** Another queue on the first one's schema, with a listener of its own: another process. */
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
        return PostgresQueue.create(pool, PostgresTestServer.dataSource(), config);
    }

    @Override
    public synchronized void close() {
        schemaOf.clear();
        for (String schema : schemas) {
            PostgresTestServer.dropSchema(schema);
        }
        schemas.clear();
        if (pool != null) {
            pool.close();
            pool = null;
        }
    }
}
