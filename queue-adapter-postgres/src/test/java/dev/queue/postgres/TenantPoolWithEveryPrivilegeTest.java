package dev.queue.postgres;

import dev.queue.api.Delivery;
import dev.queue.api.NamespaceAccessDeniedException;
import dev.queue.api.Pull;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A tenant's Java queue whose login an administrator gave EXECUTE on every function of the schema (and every table
 * and sequence privilege) by mistake: EXECUTE on the engine functions does not make it trusted, so the queue still
 * reaches the engine through the gates, runs its own namespace and is refused another.
 */
class TenantPoolWithEveryPrivilegeTest {

    @Test
    void aTenantGivenEveryFunctionGoesThroughTheGatesAndStaysInItsNamespace() {
        String schema = PostgresTestServer.freshSchema("everypriv");
        SchemaMigrator.migrate(MyBatisSupport.sessionFactory(PostgresTestServer.dataSource(), schema), schema);
        try (TenantRoles roles = new TenantRoles(schema)) {
            String acme = roles.tenant("acme", "acme");
            String q = "\"" + schema + "\"";
            PostgresTestServer.execute("GRANT ALL ON ALL TABLES IN SCHEMA " + q + " TO " + acme);
            PostgresTestServer.execute("GRANT ALL ON ALL SEQUENCES IN SCHEMA " + q + " TO " + acme);
            PostgresTestServer.execute("GRANT EXECUTE ON ALL ROUTINES IN SCHEMA " + q + " TO " + acme);

            EngineAccess.Login login = EngineAccess.of(roles.dataSource(acme), schema);
            assertThat(login.access()).isEqualTo(EngineAccess.GATED);
            assertThat(login.trusted()).isFalse();

            PostgresQueueConfig config = PostgresQueueConfig.defaults().schema(schema).listen(false).migrateOnStart(false);
            try (PostgresQueue queue = PostgresQueue.create(roles.pool(acme, 2), config)) {
                var own = queue.namespace("acme");
                own.publish("email", "{\"to\":\"a@example.com\"}");
                Delivery delivery = own.pullOne(Pull.from("email")).orElseThrow();
                assertThat(own.ack(delivery)).isEqualTo(dev.queue.api.Outcome.ACKED);
                assertThatThrownBy(() -> queue.namespace("globex").publish("email", "{}"))
                        .isInstanceOf(NamespaceAccessDeniedException.class);
            }
        }
    }
}
