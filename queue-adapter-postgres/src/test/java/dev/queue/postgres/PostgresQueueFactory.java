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
 * The contract suite's queues: each {@link #create} starts a {@link PostgresQueue} over an empty schema that takes
 * its time from the manual clock and listens for wake-ups. The schemas are in a database of the factory's own, a
 * copy of a template whose schema is migrated ({@link PostgresTestServer#migratedSchema}); a test gets that schema,
 * one whose queues of an earlier test are all closed, emptied ({@link ReusedSchemas}), or, while those are still
 * open, a schema migrated for it beside them. All queues of one factory share a pool; their LISTEN connections are
 * opened separately. The database (or, where the tests may not create databases, each schema) is dropped on close.
 * No capability is missing.
 */
public final class PostgresQueueFactory implements QueueFactory {

    private final List<String> schemas = new CopyOnWriteArrayList<>();
    private MigratedSchema database;
    private ReusedSchemas<String> reused;
    private HikariDataSource pool;

    @Override
    public synchronized Queue create(ManualClock clock, QueueOptions options) {
        if (database == null) {
            database = PostgresTestServer.migratedSchema("contract");
            reused = new ReusedSchemas<>(Function.identity(), database.dataSource());
            pool = database.newPool("contract", 24);
            reused.added(database.schema());
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
        PostgresQueue queue = PostgresQueue.create(pool, database.dataSource(), config);
        reused.opened(schema, queue);
        return queue;
    }

    @Override
    public synchronized void close() {
        if (reused != null) {
            reused.clear();
        }
        if (database != null && database.database() == null) {
            // schemas of the server's own database: the database is not dropped
            for (String schema : schemas) {
                PostgresTestServer.dropSchema(schema);
            }
        }
        schemas.clear();
        if (pool != null) {
            pool.close();
            pool = null;
        }
        if (database != null) {
            database.close();
            database = null;
        }
    }
}
