package dev.queue.postgres;

import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.DeadLetterContract;
import dev.queue.testkit.contract.FlowControlContract;
import dev.queue.testkit.contract.LeaseContract;
import dev.queue.testkit.contract.LimitsContract;
import dev.queue.testkit.contract.OrderingKeyContract;
import dev.queue.testkit.contract.PublishContract;
import dev.queue.testkit.contract.RetryAndBackoffContract;
import dev.queue.testkit.contract.ScheduleContract;
import dev.queue.testkit.contract.ScheduleRuntimeContract;
import dev.queue.testkit.contract.SubscriberRuntimeContract;
import org.junit.jupiter.api.Nested;

import java.util.List;

/**
 * A slice of the contract (the areas that publish, lease, retry, dead-letter, redrive, pause, cancel, snooze, limit,
 * order by key, keep and fire schedules and run subscribers with their listener, heartbeat and rescue: every value the
 * queue sends passes the gates' checks) on a queue whose pool logs in as a tenant's role, granted the namespaces the
 * contract uses, with the migrations on the superuser's DataSource: the queue reaches the engine through the gates of
 * migration 13, under row-level security, and behaves as over the owner's pool.
 */
class PostgresTenantPoolContractTest {

    /** The namespaces the contract uses. */
    static final List<String> CONTRACT_NAMESPACES = List.of("contract", "other", "contract-other");

    /**
     * Each queue: a schema with its roles and a tenant login granted the contract's namespaces (granted again when
     * the schema is emptied for another test).
     */
    static QueueFactory tenantPoolFactory() {
        String[] namespaces = CONTRACT_NAMESPACES.toArray(new String[0]);
        return new RolePoolQueueFactory("tenantcontract", roles -> roles.tenant("login", namespaces),
                (roles, login) -> roles.grant(login, namespaces));
    }

    @Nested
    class Lease extends LeaseContract {
        @Override
        protected QueueFactory factory() {
            return tenantPoolFactory();
        }
    }

    @Nested
    class RetryAndBackoff extends RetryAndBackoffContract {
        @Override
        protected QueueFactory factory() {
            return tenantPoolFactory();
        }
    }

    @Nested
    class DeadLetters extends DeadLetterContract {
        @Override
        protected QueueFactory factory() {
            return tenantPoolFactory();
        }
    }

    @Nested
    class FlowControl extends FlowControlContract {
        @Override
        protected QueueFactory factory() {
            return tenantPoolFactory();
        }
    }

    @Nested
    class OrderingKeys extends OrderingKeyContract {
        @Override
        protected QueueFactory factory() {
            return tenantPoolFactory();
        }
    }

    @Nested
    class SubscriberRuntime extends SubscriberRuntimeContract {
        @Override
        protected QueueFactory factory() {
            return tenantPoolFactory();
        }
    }

    @Nested
    class Limits extends LimitsContract {
        @Override
        protected QueueFactory factory() {
            return tenantPoolFactory();
        }
    }

    @Nested
    class Publish extends PublishContract {
        @Override
        protected QueueFactory factory() {
            return tenantPoolFactory();
        }
    }

    @Nested
    class Schedules extends ScheduleContract {
        @Override
        protected QueueFactory factory() {
            return tenantPoolFactory();
        }
    }

    @Nested
    class ScheduleRuntime extends ScheduleRuntimeContract {
        @Override
        protected QueueFactory factory() {
            return tenantPoolFactory();
        }
    }
}
