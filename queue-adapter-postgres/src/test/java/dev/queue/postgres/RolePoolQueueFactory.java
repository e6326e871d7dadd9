package dev.queue.postgres;

import dev.queue.api.ManualClock;
import dev.queue.api.Queue;
import dev.queue.api.QueueOptions;
import dev.queue.testkit.QueueFactory;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * The contract's queues over a pool that logs in as a role of the schema's (a tenant, a member of the app role),
 * the migrations on the superuser's DataSource; each queue has a pool of its own. The schema of a test whose
 * queues are all closed is emptied, its login prepared again, and reused ({@link ReusedSchemas}); close drops the
 * schemas and their roles.
 */
final class RolePoolQueueFactory implements QueueFactory {

    private final String prefix;
    private final Function<TenantRoles, String> newLogin;
    private final BiConsumer<TenantRoles, String> afterEmptied;
    private final List<TenantRoles> schemas = new CopyOnWriteArrayList<>();
    private final ReusedSchemas<Login> reused = new ReusedSchemas<>(Login::schema);

    /**
     * @param prefix       the schemas' name prefix
     * @param newLogin     creates the login role of a new schema's roles
     * @param afterEmptied restores what emptying the schema's tables took from the login (its grants)
     */
    RolePoolQueueFactory(String prefix, Function<TenantRoles, String> newLogin, BiConsumer<TenantRoles, String> afterEmptied) {
        this.prefix = prefix;
        this.newLogin = newLogin;
        this.afterEmptied = afterEmptied;
    }

    @Override
    public synchronized Queue create(ManualClock clock, QueueOptions options) {
        Login login = reused.takeIdle(idle -> {
            idle.roles().closePools();
            afterEmptied.accept(idle.roles(), idle.name());
        });
        if (login == null) {
            String schema = PostgresTestServer.freshSchema(prefix);
            SchemaMigrator.migrate(MyBatisSupport.sessionFactory(PostgresTestServer.dataSource(), schema), schema);
            TenantRoles roles = new TenantRoles(schema);
            schemas.add(roles);
            login = new Login(schema, roles, newLogin.apply(roles));
            reused.added(login);
        }
        return open(login, clock, options);
    }

    /** Another queue on the first one's schema and login, with a pool and a listener of its own. */
    @Override
    public synchronized Queue createSharing(Queue first, ManualClock clock, QueueOptions options) {
        return open(reused.schemaOf(first), clock, options);
    }

    private PostgresQueue open(Login login, ManualClock clock, QueueOptions options) {
        PostgresQueueConfig config = PostgresQueueConfig.defaults()
                .schema(login.schema())
                .queueOptions(options)
                .clock(clock)
                .listen(true);
        PostgresQueue queue = PostgresQueue.create(login.roles().pool(login.name(), 8),
                login.roles().dataSource(login.name()), PostgresTestServer.dataSource(), config);
        reused.opened(login, queue);
        return queue;
    }

    private record Login(String schema, TenantRoles roles, String name) {
    }

    @Override
    public synchronized void close() {
        reused.clear();
        schemas.forEach(TenantRoles::close);
        schemas.clear();
    }
}
