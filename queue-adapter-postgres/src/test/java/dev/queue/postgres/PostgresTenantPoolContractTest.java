package dev.queue.postgres;

import dev.queue.api.ManualClock;
import dev.queue.api.Queue;
import dev.queue.api.QueueOptions;
import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.DeadLetterContract;
import dev.queue.testkit.contract.FlowControlContract;
import dev.queue.testkit.contract.LeaseContract;
import dev.queue.testkit.contract.LimitsContract;
import dev.queue.testkit.contract.OrderingKeyContract;
import dev.queue.testkit.contract.RetryAndBackoffContract;
import dev.queue.testkit.contract.SubscriberRuntimeContract;
import org.junit.jupiter.api.Nested;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A slice of the contract (the areas that lease, retry, dead-letter, redrive, pause, cancel, snooze, limit, order by
 * key and run subscribers with their listener, heartbeat and rescue) on a queue whose pool logs in as a tenant's
 * role, granted the namespaces the contract uses, with the migrations on the superuser's DataSource: the queue
 * reaches the engine through the gates of migration 13, under row-level security, and behaves as over the owner's
 * pool.
 */
class PostgresTenantPoolContractTest {

    /** The namespaces the contract uses. */
    static final List<String> CONTRACT_NAMESPACES = List.of("contract", "other", "contract-other");

    /**
     * Each queue: a schema with its roles and a tenant login granted the contract's namespaces, and a pool of its
     * own; the schema of a test whose queues are all closed is emptied, granted again and reused
     * ({@link ReusedSchemas}).
     */
    static final class TenantPoolQueueFactory implements QueueFactory {

        private final List<TenantRoles> schemas = new CopyOnWriteArrayList<>();
        private final ReusedSchemas<Login> reused = new ReusedSchemas<>(Login::schema);

        @Override
        public synchronized Queue create(ManualClock clock, QueueOptions options) {
            Login login = reused.takeIdle(idle -> {
                idle.roles().closePools();
                idle.roles().grant(idle.name(), CONTRACT_NAMESPACES.toArray(new String[0]));
                return true;
            });
            if (login == null) {
                String schema = PostgresTestServer.freshSchema("tenantcontract");
                SchemaMigrator.migrate(MyBatisSupport.sessionFactory(PostgresTestServer.dataSource(), schema), schema);
                TenantRoles roles = new TenantRoles(schema);
                schemas.add(roles);
                login = new Login(schema, roles, roles.tenant("login", CONTRACT_NAMESPACES.toArray(new String[0])));
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

    @Nested
    class Lease extends LeaseContract {
        @Override
        protected QueueFactory factory() {
            return new TenantPoolQueueFactory();
        }
    }

    @Nested
    class RetryAndBackoff extends RetryAndBackoffContract {
        @Override
        protected QueueFactory factory() {
            return new TenantPoolQueueFactory();
        }
    }

    @Nested
    class DeadLetters extends DeadLetterContract {
        @Override
        protected QueueFactory factory() {
            return new TenantPoolQueueFactory();
        }
    }

    @Nested
    class FlowControl extends FlowControlContract {
        @Override
        protected QueueFactory factory() {
            return new TenantPoolQueueFactory();
        }
    }

    @Nested
    class OrderingKeys extends OrderingKeyContract {
        @Override
        protected QueueFactory factory() {
            return new TenantPoolQueueFactory();
        }
    }

    @Nested
    class SubscriberRuntime extends SubscriberRuntimeContract {
        @Override
        protected QueueFactory factory() {
            return new TenantPoolQueueFactory();
        }
    }

    @Nested
    class Limits extends LimitsContract {
        @Override
        protected QueueFactory factory() {
            return new TenantPoolQueueFactory();
        }
    }
}
