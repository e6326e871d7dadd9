package dev.queue.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.queue.api.ManualClock;
import dev.queue.api.Queue;
import dev.queue.api.QueueOptions;
import dev.queue.testkit.QueueFactory;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * The contract suite's queues: each {@link #create} starts a {@link PostgresQueue} over an empty schema (a schema
 * migrated for it, or one whose queues of an earlier test are all closed, emptied: {@link ReusedSchemas}) that
 * takes its time from the manual clock and listens for wake-ups. All queues of one factory share a pool; their
 * LISTEN connections are opened separately. The schemas are dropped on close. No capability is missing.
 */
public final class PostgresQueueFactory implements QueueFactory {

    private final List<String> schemas = new CopyOnWriteArrayList<>();
    private final ReusedSchemas<String> reused = new ReusedSchemas<>(Function.identity());
    private HikariDataSource pool;

    @Override
    public synchronized Queue create(ManualClock clock, QueueOptions options) {
        if (pool == null) {
            pool = PostgresTestServer.newPool("contract", 24);
        }
        String schema = reused.takeIdle(s -> { });
        if (schema == null) {
            schema = PostgresTestServer.freshSchema("contract");
            schemas.add(schema);
            reused.added(schema);
        }
        return open(schema, clock, options);
    }

    /** Another queue on the first one's schema, with a listener of its own: another process. */
    @Override
    public synchronized Queue createSharing(Queue first, ManualClock clock, QueueOptions options) {
        return open(reused.schemaOf(first), clock, options);
    }

    private PostgresQueue open(String schema, ManualClock clock, QueueOptions options) {
        PostgresQueueConfig config = PostgresQueueConfig.defaults()
                .schema(schema)
                .queueOptions(options)
                .clock(clock)
                .listen(true);
        PostgresQueue queue = PostgresQueue.create(pool, PostgresTestServer.dataSource(), config);
        reused.opened(schema, queue);
        return queue;
    }

    @Override
    public synchronized void close() {
        reused.clear();
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
