package dev.queue.testkit.contract;

import dev.queue.testkit.QueueFactory;
import org.junit.jupiter.api.Nested;

/**
 * The whole contract in one class: extend it, return your adapter's {@link QueueFactory} from {@link #factory()},
 * and every contract area runs against it as a JUnit 5 {@code @Nested} class.
 *
 * <pre>{@code
 * class MyStoreContractTest extends QueueContract {
 *     @Override
 *     protected QueueFactory factory() {
 *         return new MyStoreQueueFactory();
 *     }
 * }
 * }</pre>
 *
 * <p>{@link #factory()} is called once per area (each area closes its factory after its last test), so it should
 * return a new factory each time. Capabilities the adapter lacks are declared by
 * {@link QueueFactory#missingCapabilities()}; the tests relying on them are skipped (aborted by a JUnit assumption)
 * with the capability and the adapter's reason in the report, and everything else still runs. Each area is also an
 * abstract class of its own ({@link ClaimContract}, {@link LeaseContract} ...) for running one area at a time.
 */
public abstract class QueueContract {

    /** For subclasses. */
    protected QueueContract() {
    }

    /**
     * The adapter under test.
     *
     * @return a new factory of fresh, empty queues on a manual clock; called once per contract area
     */
    protected abstract QueueFactory factory();

    /** {@link PublishContract}: publishing: ids, payloads, options, batches, the codec. */
    @Nested
    public class Publish extends PublishContract {
        /** Creates the area; JUnit instantiates it. */
        public Publish() {
        }

        @Override
        protected QueueFactory factory() {
            return QueueContract.this.factory();
        }
    }

    /** {@link ClaimContract}: claiming: attempts, lease fields, limits, exclusivity, batches. */
    @Nested
    public class Claim extends ClaimContract {
        /** Creates the area; JUnit instantiates it. */
        public Claim() {
        }

        @Override
        protected QueueFactory factory() {
            return QueueContract.this.factory();
        }
    }

    /** {@link CompleteContract}: completing: ack, ackAll, fail, error texts. */
    @Nested
    public class Complete extends CompleteContract {
        /** Creates the area; JUnit instantiates it. */
        public Complete() {
        }

        @Override
        protected QueueFactory factory() {
            return QueueContract.this.factory();
        }
    }

    /** {@link LeaseContract}: leases: guarded operations from every state, expiry, extension. */
    @Nested
    public class Lease extends LeaseContract {
        /** Creates the area; JUnit instantiates it. */
        public Lease() {
        }

        @Override
        protected QueueFactory factory() {
            return QueueContract.this.factory();
        }
    }

    /** {@link RetryAndBackoffContract}: retries and backoff. */
    @Nested
    public class RetryAndBackoff extends RetryAndBackoffContract {
        /** Creates the area; JUnit instantiates it. */
        public RetryAndBackoff() {
        }

        @Override
        protected QueueFactory factory() {
            return QueueContract.this.factory();
        }
    }

    /** {@link DeadLetterContract}: dead letters: list, get, redrive, purge. */
    @Nested
    public class DeadLetters extends DeadLetterContract {
        /** Creates the area; JUnit instantiates it. */
        public DeadLetters() {
        }

        @Override
        protected QueueFactory factory() {
            return QueueContract.this.factory();
        }
    }

    /** {@link DedupContract}: unique keys. */
    @Nested
    public class Dedup extends DedupContract {
        /** Creates the area; JUnit instantiates it. */
        public Dedup() {
        }

        @Override
        protected QueueFactory factory() {
            return QueueContract.this.factory();
        }
    }

    /** {@link PriorityAndDelayContract}: claim order and delays. */
    @Nested
    public class PriorityAndDelay extends PriorityAndDelayContract {
        /** Creates the area; JUnit instantiates it. */
        public PriorityAndDelay() {
        }

        @Override
        protected QueueFactory factory() {
            return QueueContract.this.factory();
        }
    }

    /** {@link NamespaceContract}: namespace isolation. */
    @Nested
    public class Namespaces extends NamespaceContract {
        /** Creates the area; JUnit instantiates it. */
        public Namespaces() {
        }

        @Override
        protected QueueFactory factory() {
            return QueueContract.this.factory();
        }
    }

    /** {@link StatsContract}: counts per namespace and topic. */
    @Nested
    public class Stats extends StatsContract {
        /** Creates the area; JUnit instantiates it. */
        public Stats() {
        }

        @Override
        protected QueueFactory factory() {
            return QueueContract.this.factory();
        }
    }

    /** {@link BadInputContract}: bad input is refused and changes nothing. */
    @Nested
    public class BadInput extends BadInputContract {
        /** Creates the area; JUnit instantiates it. */
        public BadInput() {
        }

        @Override
        protected QueueFactory factory() {
            return QueueContract.this.factory();
        }
    }

    /** {@link ConcurrencyContract}: many threads at once. */
    @Nested
    public class Concurrency extends ConcurrencyContract {
        /** Creates the area; JUnit instantiates it. */
        public Concurrency() {
        }

        @Override
        protected QueueFactory factory() {
            return QueueContract.this.factory();
        }
    }

    /** {@link ObservationContract}: interceptors. */
    @Nested
    public class Observation extends ObservationContract {
        /** Creates the area; JUnit instantiates it. */
        public Observation() {
        }

        @Override
        protected QueueFactory factory() {
            return QueueContract.this.factory();
        }
    }

    /** {@link ScheduleContract}: schedules on explicit ticks. */
    @Nested
    public class Schedules extends ScheduleContract {
        /** Creates the area; JUnit instantiates it. */
        public Schedules() {
        }

        @Override
        protected QueueFactory factory() {
            return QueueContract.this.factory();
        }
    }

    /** {@link ScheduleRuntimeContract}: schedules ticked by the queue. */
    @Nested
    public class ScheduleRuntime extends ScheduleRuntimeContract {
        /** Creates the area; JUnit instantiates it. */
        public ScheduleRuntime() {
        }

        @Override
        protected QueueFactory factory() {
            return QueueContract.this.factory();
        }
    }

    /** {@link FlowControlContract}: pause, resume, cancel and snooze. */
    @Nested
    public class FlowControl extends FlowControlContract {
        /** Creates the area; JUnit instantiates it. */
        public FlowControl() {
        }

        @Override
        protected QueueFactory factory() {
            return QueueContract.this.factory();
        }
    }

    /** {@link LimitsContract}: fleet-wide concurrency and rate limits. */
    @Nested
    public class Limits extends LimitsContract {
        /** Creates the area; JUnit instantiates it. */
        public Limits() {
        }

        @Override
        protected QueueFactory factory() {
            return QueueContract.this.factory();
        }
    }

    /** {@link OrderingKeyContract}: ordering keys. */
    @Nested
    public class OrderingKeys extends OrderingKeyContract {
        /** Creates the area; JUnit instantiates it. */
        public OrderingKeys() {
        }

        @Override
        protected QueueFactory factory() {
            return QueueContract.this.factory();
        }
    }

    /** {@link SubscriberRuntimeContract}: subscribers on their own threads. */
    @Nested
    public class SubscriberRuntime extends SubscriberRuntimeContract {
        /** Creates the area; JUnit instantiates it. */
        public SubscriberRuntime() {
        }

        @Override
        protected QueueFactory factory() {
            return QueueContract.this.factory();
        }
    }
}
