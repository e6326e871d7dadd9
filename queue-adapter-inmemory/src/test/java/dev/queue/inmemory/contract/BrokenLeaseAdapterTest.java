package dev.queue.inmemory.contract;

import dev.queue.api.DeadLetter;
import dev.queue.api.ManualClock;
import dev.queue.api.MessageInfo;
import dev.queue.api.NamespaceStats;
import dev.queue.api.Outcome;
import dev.queue.api.Queue;
import dev.queue.api.QueueOptions;
import dev.queue.codec.jackson.JacksonPayloadCodec;
import dev.queue.domain.engine.QueueEngine;
import dev.queue.domain.port.AckCommand;
import dev.queue.domain.port.ClaimCommand;
import dev.queue.domain.port.ClaimedMessage;
import dev.queue.domain.port.DeadLetterCommand;
import dev.queue.domain.port.DeadLetterQuery;
import dev.queue.domain.port.ExtendCommand;
import dev.queue.domain.port.LeaseRef;
import dev.queue.domain.port.MessageRef;
import dev.queue.domain.port.MessageStore;
import dev.queue.domain.port.NextDueQuery;
import dev.queue.domain.port.PublishCommand;
import dev.queue.domain.port.PurgeCommand;
import dev.queue.domain.port.RedriveCommand;
import dev.queue.domain.port.RedriveResult;
import dev.queue.domain.port.ReleaseCommand;
import dev.queue.domain.port.RescueCommand;
import dev.queue.domain.port.RescueResult;
import dev.queue.domain.port.RetryCommand;
import dev.queue.domain.port.StatsQuery;
import dev.queue.domain.port.StoredOutcome;
import dev.queue.domain.time.ManualTime;
import dev.queue.inmemory.InMemoryMessageStore;
import dev.queue.inmemory.InMemoryWakeUps;
import dev.queue.testkit.QueueFactory;
import dev.queue.testkit.contract.QueueContract;
import org.junit.jupiter.api.Test;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectNestedClass;

/**
 * The contract catches the classic adapter bug: a store that forgets the lease token on ack (it acknowledges a
 * running message whoever holds it) fails the lease area of {@link QueueContract}.
 */
class BrokenLeaseAdapterTest {

    /** Acks under the latest claim's token instead of the caller's; everything else is the in-memory store. */
    static final class ForgetsTheTokenOnAck implements MessageStore {
        private final MessageStore store;
        private final Map<Long, Long> latestToken = new ConcurrentHashMap<>();

        ForgetsTheTokenOnAck(MessageStore store) {
            this.store = store;
        }

        @Override
        public Set<Long> messageAckIfLeased(AckCommand command) {
            List<LeaseRef> anyHolder = command.leases().stream()
                    .map(lease -> new LeaseRef(lease.id(), latestToken.getOrDefault(lease.id(), lease.leaseToken())))
                    .toList();
            return store.messageAckIfLeased(new AckCommand(command.namespace(), anyHolder, command.time()));
        }

        @Override
        public List<ClaimedMessage> messageClaimDue(ClaimCommand command) {
            List<ClaimedMessage> claimed = store.messageClaimDue(command);
            claimed.forEach(message -> latestToken.put(message.id(), command.leaseToken()));
            return claimed;
        }

        @Override
        public List<StoredOutcome> messageInsertMany(PublishCommand command) {
            return store.messageInsertMany(command);
        }

        @Override
        public Outcome messageRetryIfLeased(RetryCommand command) {
            return store.messageRetryIfLeased(command);
        }

        @Override
        public Outcome messageDeadLetterIfLeased(DeadLetterCommand command) {
            return store.messageDeadLetterIfLeased(command);
        }

        @Override
        public Set<Long> messageExtendIfLeased(ExtendCommand command) {
            return store.messageExtendIfLeased(command);
        }

        @Override
        public Set<Long> messageReleaseIfLeased(ReleaseCommand command) {
            return store.messageReleaseIfLeased(command);
        }

        @Override
        public RescueResult messageRescueExpired(RescueCommand command) {
            return store.messageRescueExpired(command);
        }

        @Override
        public Optional<MessageInfo> messageFind(MessageRef message) {
            return store.messageFind(message);
        }

        @Override
        public Optional<Instant> messageNextDueAt(NextDueQuery query) {
            return store.messageNextDueAt(query);
        }

        @Override
        public List<DeadLetter> deadLetterList(DeadLetterQuery query) {
            return store.deadLetterList(query);
        }

        @Override
        public Optional<DeadLetter> deadLetterFind(MessageRef message) {
            return store.deadLetterFind(message);
        }

        @Override
        public RedriveResult deadLetterRedrive(RedriveCommand command) {
            return store.deadLetterRedrive(command);
        }

        @Override
        public int deadLetterPurge(PurgeCommand command) {
            return store.deadLetterPurge(command);
        }

        @Override
        public NamespaceStats namespaceStats(StatsQuery query) {
            return store.namespaceStats(query);
        }
    }

    /** A queue wired by hand from the ports, over the store {@code broken} decides. */
    static Queue queue(ManualClock clock, QueueOptions options, boolean broken) {
        ManualTime time = new ManualTime(clock);
        InMemoryWakeUps wakeUps = new InMemoryWakeUps();
        MessageStore store = new InMemoryMessageStore(time, wakeUps);
        return QueueEngine.builder()
                .store(broken ? new ForgetsTheTokenOnAck(store) : store)
                .wakeUps(wakeUps)
                .clock(time)
                .options(options)
                .defaultCodec(new JacksonPayloadCodec())
                .build();
    }

    /** Run through the engine below only: a static nested class is not picked up by the build's own test run. */
    static class BrokenAdapterContract extends QueueContract {
        @Override
        protected QueueFactory factory() {
            return (clock, options) -> queue(clock, options, true);
        }
    }

    /** The same wiring over the store as it is: proves the failures come from the bug. */
    static class SoundAdapterContract extends QueueContract {
        @Override
        protected QueueFactory factory() {
            return (clock, options) -> queue(clock, options, false);
        }
    }

    private static Events leaseArea(Class<? extends QueueContract> contract) {
        return EngineTestKit.engine("junit-jupiter")
                .selectors(selectNestedClass(List.of(contract), QueueContract.Lease.class))
                .execute().testEvents();
    }

    @Test
    void theLeaseAreaFailsAStoreThatForgetsTheTokenOnAck() {
        Events sound = leaseArea(SoundAdapterContract.class);
        assertThat(sound.failed().count()).as("lease tests failing the sound wiring").isZero();
        assertThat(sound.succeeded().count()).as("lease tests passing the sound wiring").isPositive();

        Events broken = leaseArea(BrokenAdapterContract.class);
        assertThat(broken.failed().count()).as("lease tests failing the broken store").isPositive();
        assertThat(broken.succeeded().count()).as("lease tests the bug does not touch").isPositive();
    }
}
