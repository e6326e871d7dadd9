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

    /**
     * Each queue: a schema with its roles and an app login, and a pool of its own, the migrations on the
     * superuser's pool; the schema of a test whose queues are all closed is emptied and reused
     * ({@link ReusedSchemas}).
     */
    static final class AppPoolQueueFactory implements QueueFactory {

        private final List<TenantRoles> schemas = new CopyOnWriteArrayList<>();
        private final ReusedSchemas<Login> reused = new ReusedSchemas<>(Login::schema);

        @Override
        public synchronized Queue create(ManualClock clock, QueueOptions options) {
            Login login = reused.takeIdle(idle -> {
                idle.roles().closePools();
                return true;
            });
            if (login == null) {
                String schema = PostgresTestServer.freshSchema("appcontract");
                SchemaMigrator.migrate(MyBatisSupport.sessionFactory(PostgresTestServer.dataSource(), schema), schema);
                TenantRoles roles = new TenantRoles(schema);
                schemas.add(roles);
                login = new Login(schema, roles, roles.app("fleet"));
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
