package dev.queue.example.customadapter;

import dev.queue.api.DeadLetter;
import dev.queue.api.MessageInfo;
import dev.queue.api.MessageState;
import dev.queue.api.NamespaceStats;
import dev.queue.api.Outcome;
import dev.queue.domain.port.AckCommand;
import dev.queue.domain.port.CancelCommand;
import dev.queue.domain.port.ClaimCommand;
import dev.queue.domain.port.ClaimedMessage;
import dev.queue.domain.port.DeadLetterCommand;
import dev.queue.domain.port.DeadLetterQuery;
import dev.queue.domain.port.ExtendCommand;
import dev.queue.domain.port.LeaseRef;
import dev.queue.domain.port.MessageRef;
import dev.queue.domain.port.MessageStore;
import dev.queue.domain.port.NextDueQuery;
import dev.queue.domain.port.PausedTopicsQuery;
import dev.queue.domain.port.PublishCommand;
import dev.queue.domain.port.PurgeCommand;
import dev.queue.domain.port.RedriveCommand;
import dev.queue.domain.port.RedriveResult;
import dev.queue.domain.port.ReleaseCommand;
import dev.queue.domain.port.RescueCommand;
import dev.queue.domain.port.RescueResult;
import dev.queue.domain.port.RetryCommand;
import dev.queue.domain.port.SnoozeCommand;
import dev.queue.domain.port.StatsQuery;
import dev.queue.domain.port.StoredOutcome;
import dev.queue.domain.port.TopicPauseCommand;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The classic adapter bug, on purpose: an ack that ignores the caller's lease token. It acknowledges a running
 * message under whatever claim holds it now (the latest one this store handed out), so a worker whose lease
 * expired, and whose message was rescued and claimed by another worker, still acknowledges it: the new holder's
 * attempt is lost. Everything else is the example's store as it is.
 */
final class ForgetfulAckStore implements MessageStore {

    private final MessageStore store;
    /** The token of the latest claim of each message. */
    private final Map<Long, Long> latestToken = new ConcurrentHashMap<>();

    ForgetfulAckStore(MessageStore store) {
        this.store = store;
    }

    @Override
    public Set<Long> messageAckIfLeased(AckCommand command) {
        List<LeaseRef> whoeverHoldsIt = command.leases().stream()
                .map(lease -> new LeaseRef(lease.id(), latestToken.getOrDefault(lease.id(), lease.leaseToken())))
                .toList();
        return store.messageAckIfLeased(new AckCommand(command.namespace(), whoeverHoldsIt, command.time()));
    }

    @Override
    public List<ClaimedMessage> messageClaimDue(ClaimCommand command) {
        List<ClaimedMessage> claimed = store.messageClaimDue(command);
        claimed.forEach(message -> latestToken.put(message.id(), message.leaseToken()));
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

    @Override
    public boolean topicSetPaused(TopicPauseCommand command) {
        return store.topicSetPaused(command);
    }

    @Override
    public List<String> topicListPaused(PausedTopicsQuery query) {
        return store.topicListPaused(query);
    }

    @Override
    public Optional<MessageState> messageCancel(CancelCommand command) {
        return store.messageCancel(command);
    }

    @Override
    public Outcome messageSnoozeIfLeased(SnoozeCommand command) {
        return store.messageSnoozeIfLeased(command);
    }
}
