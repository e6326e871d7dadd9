package dev.queue.inmemory.contract;

import dev.queue.api.ManualClock;
import dev.queue.api.Queue;
import dev.queue.api.QueueOptions;
import dev.queue.inmemory.InMemoryQueueFactory;
import dev.queue.testkit.Capability;
import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.CompleteContract;
import dev.queue.testkit.contract.QueueContract;
import org.junit.jupiter.api.Test;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectNestedClass;

/**
 * An adapter that declares a capability missing has the contract tests relying on it skipped, each saying which
 * capability and the adapter's reason, while the rest of the contract still runs and passes.
 */
class MissingCapabilityTest {

    private static final String REASON = "this adapter forgets completed messages entirely";

    /** Run through the engine below only: a static nested class is not picked up by the build's own test run. */
    static class CompleteContractWithoutCounts extends CompleteContract {
        @Override
        protected QueueFactory factory() {
            InMemoryQueueFactory adapter = new InMemoryQueueFactory();
            return new QueueFactory() {
                @Override
                public Queue create(ManualClock clock, QueueOptions options) {
                    return adapter.create(clock, options);
                }

                @Override
                public Map<Capability, String> missingCapabilities() {
                    return Map.of(Capability.COMPLETED_COUNTS, REASON);
                }
            };
        }
    }

    /** The same adapter through the entry point an adapter author extends. */
    static class WholeContractWithoutCounts extends QueueContract {
        @Override
        protected QueueFactory factory() {
            return new CompleteContractWithoutCounts().factory();
        }
    }

    @Test
    void theEntryPointSkipsTheSameTestsWithTheSameReason() {
        Events tests = EngineTestKit.engine("junit-jupiter")
                .selectors(selectNestedClass(List.of(WholeContractWithoutCounts.class), QueueContract.Stats.class),
                        selectNestedClass(List.of(WholeContractWithoutCounts.class), QueueContract.Complete.class))
                .execute().testEvents();

        assertThat(tests.failed().count()).as("failed").isZero();
        assertThat(tests.aborted().count()).as("skipped for the missing capability").isPositive();
        assertThat(tests.succeeded().count()).as("the rest of the contract").isPositive();
        tests.aborted().stream().forEach(event -> assertThat(event.getRequiredPayload(
                        org.junit.platform.engine.TestExecutionResult.class).getThrowable())
                .get().asString().contains("adapter lacks COMPLETED_COUNTS: " + REASON));
    }

    @Test
    void testsRelyingOnAMissingCapabilityAreSkippedWithTheAdaptersReason() {
        Events tests = EngineTestKit.engine("junit-jupiter").selectors(selectClass(CompleteContractWithoutCounts.class))
                .execute().testEvents();

        assertThat(tests.failed().count()).as("failed").isZero();
        assertThat(tests.aborted().count()).as("skipped for the missing capability").isPositive();
        assertThat(tests.succeeded().count()).as("the rest of the contract").isPositive();
        tests.aborted().stream().forEach(event -> assertThat(event.getRequiredPayload(
                        org.junit.platform.engine.TestExecutionResult.class).getThrowable())
                .get().asString().contains("adapter lacks COMPLETED_COUNTS: " + REASON));
    }
}
