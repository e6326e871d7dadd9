package dev.queue.postgres;

import dev.queue.api.StoreNotReadyException;
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

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A slice of the contract on a queue whose pool logs in as a member of the schema's app role: since migration 16
 * the trusted roles call the engine functions themselves, under row-level security, without the tenants' gates.
 */
class PostgresAppPoolContractTest {

    /** Each queue: a schema with its roles and an app login. */
    static QueueFactory appPoolFactory() {
        return new RolePoolQueueFactory("appcontract", roles -> roles.app("fleet"), (roles, login) -> { });
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

    @Test
    void aLoginWithNoRoleOfTheSchemaIsToldItMayExecuteNeither() {
        String schema = PostgresTestServer.freshSchema("appnone");
        SchemaMigrator.migrate(MyBatisSupport.sessionFactory(PostgresTestServer.dataSource(), schema), schema);
        try (TenantRoles roles = new TenantRoles(schema)) {
            String stranger = roles.tenant("stranger");
            assertThatThrownBy(() -> EngineAccess.of(roles.dataSource(stranger), schema))
                    .isInstanceOf(StoreNotReadyException.class)
                    .hasMessageContaining("role \"" + stranger + "\" may execute neither")
                    .hasMessageContaining(schema);
            // USAGE on the schema alone: it finds the functions, and may still execute none of them
            PostgresTestServer.execute("GRANT USAGE ON SCHEMA \"" + schema + "\" TO " + stranger);
            assertThatThrownBy(() -> EngineAccess.of(roles.dataSource(stranger), schema))
                    .isInstanceOf(StoreNotReadyException.class)
                    .hasMessageContaining("may execute neither");
        }
    }

    @Nested
    class Lease extends LeaseContract {
        @Override
        protected QueueFactory factory() {
            return appPoolFactory();
        }
    }

    @Nested
    class RetryAndBackoff extends RetryAndBackoffContract {
        @Override
        protected QueueFactory factory() {
            return appPoolFactory();
        }
    }

    @Nested
    class DeadLetters extends DeadLetterContract {
        @Override
        protected QueueFactory factory() {
            return appPoolFactory();
        }
    }

    @Nested
    class FlowControl extends FlowControlContract {
        @Override
        protected QueueFactory factory() {
            return appPoolFactory();
        }
    }

    @Nested
    class Limits extends LimitsContract {
        @Override
        protected QueueFactory factory() {
            return appPoolFactory();
        }
    }

    @Nested
    class OrderingKeys extends OrderingKeyContract {
        @Override
        protected QueueFactory factory() {
            return appPoolFactory();
        }
    }
}
