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
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A slice of the contract on a queue whose pool logs in as a member of the schema's app role: since migration 16
 * the trusted roles call the engine functions themselves, under row-level security, without the tenants' gates.
 */
class PostgresAppPoolContractTest {

    /** Each queue: a fresh schema with its roles, an app login, its pool; migrations on the superuser's pool. */
    static final class AppPoolQueueFactory implements QueueFactory {

        private final List<TenantRoles> schemas = new CopyOnWriteArrayList<>();

        @Override
        public Queue create(ManualClock clock, QueueOptions options) {
            String schema = PostgresTestServer.freshSchema("appcontract");
            SchemaMigrator.migrate(MyBatisSupport.sessionFactory(PostgresTestServer.dataSource(), schema), schema);
            TenantRoles roles = new TenantRoles(schema);
            schemas.add(roles);
            String app = roles.app("fleet");
            PostgresQueueConfig config = PostgresQueueConfig.defaults()
                    .schema(schema)
                    .queueOptions(options)
                    .clock(clock)
                    .listen(true);
            Queue queue = PostgresQueue.create(roles.pool(app, 8), roles.dataSource(app), PostgresTestServer.dataSource(),
                    config);
            logins.put(queue, new Login(schema, roles, app));
            return queue;
        }

        /** Another queue on the first one's schema and login, with a pool and a listener of its own. */
        @Override
        public Queue createSharing(Queue first, ManualClock clock, QueueOptions options) {
            Login login = logins.get(first);
            PostgresQueueConfig config = PostgresQueueConfig.defaults()
                    .schema(login.schema())
                    .queueOptions(options)
                    .clock(clock)
                    .listen(true);
            return PostgresQueue.create(login.roles().pool(login.name(), 8), login.roles().dataSource(login.name()),
                    PostgresTestServer.dataSource(), config);
        }

        private record Login(String schema, TenantRoles roles, String name) {
        }

        private final java.util.Map<Queue, Login> logins = new java.util.concurrent.ConcurrentHashMap<>();

        @Override
        public void close() {
            schemas.forEach(TenantRoles::close);
            schemas.clear();
        }
    }

    @Test
    void theAppRoleReachesTheEngineDirectlyAndATenantThroughTheGates() {
        String schema = PostgresTestServer.freshSchema("appaccess");
        SchemaMigrator.migrate(MyBatisSupport.sessionFactory(PostgresTestServer.dataSource(), schema), schema);
        try (TenantRoles roles = new TenantRoles(schema)) {
            String app = roles.app("fleet");
            String operator = roles.operator("admin");
            String tenant = roles.tenant("acme", "acme");

            EngineAccess.Login appLogin = EngineAccess.of(roles.dataSource(app), schema);
            EngineAccess.Login operatorLogin = EngineAccess.of(roles.dataSource(operator), schema);
            EngineAccess.Login tenantLogin = EngineAccess.of(roles.dataSource(tenant), schema);

            assertThat(appLogin.access()).isEqualTo(EngineAccess.DIRECT);
            assertThat(appLogin.trusted()).isTrue();
            assertThat(operatorLogin.access()).isEqualTo(EngineAccess.DIRECT);
            assertThat(tenantLogin.access()).isEqualTo(EngineAccess.GATED);
            assertThat(tenantLogin.trusted()).isFalse();
        }
    }

    @Nested
    class Lease extends LeaseContract {
        @Override
        protected QueueFactory factory() {
            return new AppPoolQueueFactory();
        }
    }

    @Nested
    class RetryAndBackoff extends RetryAndBackoffContract {
        @Override
        protected QueueFactory factory() {
            return new AppPoolQueueFactory();
        }
    }

    @Nested
    class DeadLetters extends DeadLetterContract {
        @Override
        protected QueueFactory factory() {
            return new AppPoolQueueFactory();
        }
    }

    @Nested
    class FlowControl extends FlowControlContract {
        @Override
        protected QueueFactory factory() {
            return new AppPoolQueueFactory();
        }
    }

    @Nested
    class Limits extends LimitsContract {
        @Override
        protected QueueFactory factory() {
            return new AppPoolQueueFactory();
        }
    }

    @Nested
    class OrderingKeys extends OrderingKeyContract {
        @Override
        protected QueueFactory factory() {
            return new AppPoolQueueFactory();
        }
    }
}
