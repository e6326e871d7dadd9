package dev.queue.inmemory;

import dev.queue.api.BehindDeadLetter;
import dev.queue.api.DeadLetter;
import dev.queue.api.MessageInfo;
import dev.queue.api.MessageState;
import dev.queue.api.NamespaceStats;
import dev.queue.api.Outcome;
import dev.queue.api.TopicLimits;
import dev.queue.domain.port.AckCommand;
import dev.queue.domain.port.CancelCommand;
import dev.queue.domain.port.ClaimCommand;
import dev.queue.domain.port.ClaimedMessage;
import dev.queue.domain.port.Clock;
import dev.queue.domain.port.CommandTime;
import dev.queue.domain.port.DeadLetterCommand;
import dev.queue.domain.port.DeadLetterQuery;
import dev.queue.domain.port.ExtendCommand;
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
import dev.queue.domain.port.TopicLimitsCommand;
import dev.queue.domain.port.TopicLimitsQuery;
import dev.queue.domain.port.TopicOrderingCommand;
import dev.queue.domain.port.TopicOrderingQuery;
import dev.queue.domain.port.TopicPauseCommand;
import dev.queue.domain.time.SystemClock;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The message store of {@link InMemoryQueue}: the semantics every adapter implements, in the heap of one
 * process. Thread-safe: one lock guards all state, and every operation is cheap under it. Pending messages of
 * each topic sit in one sorted set per priority ordered by due time and id, so a claim takes the heads instead
 * of scanning; running messages sit in one set ordered by lease end, so a rescue visits only expired leases.
 *
 * <p>Time comes from each command's {@link CommandTime}, reading the clock given at construction when it is the
 * store's own. Timestamps are kept at microsecond precision. Wake-ups are signalled after the lock is
 * released. Besides the messages, the store records every stored publish ({@link #published()}) for tests.
 *
 * <p>Each area of the engine is a class of its own over the one shared state, as PostgreSQL's engine keeps one SQL
 * file per area: publish, claim (with limits, rates and the next due time), settle, rescue, dead letters, flow
 * control (pause, limits, cancel, ordering keys), inspection and statistics. This class hands each method of the
 * port to its area and answers the queries of the recorded publishes.
 */
public final class InMemoryMessageStore implements MessageStore {

    private final InMemoryState state;
    private final InMemoryPublish publish;
    private final InMemoryClaim claim;
    private final InMemorySettle settle;
    private final InMemoryRescue rescue;
    private final InMemoryDeadLetters deadLetters;
    private final InMemoryFlowControl flowControl;
    private final InMemoryInspect inspect;
    private final InMemoryStats stats;

    /** A store on the machine's clock with wake-ups of its own. */
    public InMemoryMessageStore() {
        this(SystemClock.authoritative(), new InMemoryWakeUps());
    }

    /**
     * @param clock   used when a command carries no time
     * @param wakeUps signalled when messages become pending
     */
    public InMemoryMessageStore(Clock clock, InMemoryWakeUps wakeUps) {
        this.state = new InMemoryState(Objects.requireNonNull(clock, "clock"), Objects.requireNonNull(wakeUps, "wakeUps"));
        this.publish = new InMemoryPublish(state);
        this.claim = new InMemoryClaim(state);
        this.flowControl = new InMemoryFlowControl(state);
        this.deadLetters = new InMemoryDeadLetters(state, flowControl);
        this.settle = new InMemorySettle(state, deadLetters, flowControl);
        this.rescue = new InMemoryRescue(state, deadLetters);
        this.inspect = new InMemoryInspect(state);
        this.stats = new InMemoryStats(state);
    }

    public InMemoryWakeUps wakeUps() {
        return state.wakeUps;
    }

    // ------------------------------------------------------------------------------------------ publish

    @Override
    public List<StoredOutcome> messageInsertMany(PublishCommand command) {
        return publish.messageInsertMany(command);
    }

    /** Publishes of a schedule's fire: see {@link InMemoryPublish#storeUnderLock}. */
    <T> T storeUnderLock(CommandTime time, InMemoryPublish.StoringWork<T> work) {
        return publish.storeUnderLock(time, work);
    }

    // ------------------------------------------------------------------------------------------ claim

    @Override
    public List<ClaimedMessage> messageClaimDue(ClaimCommand command) {
        return claim.messageClaimDue(command);
    }

    @Override
    public Optional<Instant> messageNextDueAt(NextDueQuery query) {
        return claim.messageNextDueAt(query);
    }

    // ------------------------------------------------------------------------------------------ settle

    @Override
    public Set<Long> messageAckIfLeased(AckCommand command) {
        return settle.messageAckIfLeased(command);
    }

    @Override
    public Outcome messageRetryIfLeased(RetryCommand command) {
        return settle.messageRetryIfLeased(command);
    }

    @Override
    public Outcome messageDeadLetterIfLeased(DeadLetterCommand command) {
        return settle.messageDeadLetterIfLeased(command);
    }

    @Override
    public Set<Long> messageExtendIfLeased(ExtendCommand command) {
        return settle.messageExtendIfLeased(command);
    }

    @Override
    public Set<Long> messageReleaseIfLeased(ReleaseCommand command) {
        return settle.messageReleaseIfLeased(command);
    }

    @Override
    public Outcome messageSnoozeIfLeased(SnoozeCommand command) {
        return settle.messageSnoozeIfLeased(command);
    }

    // ------------------------------------------------------------------------------------------ rescue

    @Override
    public RescueResult messageRescueExpired(RescueCommand command) {
        return rescue.messageRescueExpired(command);
    }

    // ------------------------------------------------------------------------------------------ dead letters

    @Override
    public List<DeadLetter> deadLetterList(DeadLetterQuery query) {
        return deadLetters.deadLetterList(query);
    }

    @Override
    public Optional<DeadLetter> deadLetterFind(MessageRef message) {
        return deadLetters.deadLetterFind(message);
    }

    @Override
    public RedriveResult deadLetterRedrive(RedriveCommand command) {
        return deadLetters.deadLetterRedrive(command);
    }

    @Override
    public int deadLetterPurge(PurgeCommand command) {
        return deadLetters.deadLetterPurge(command);
    }

    // ------------------------------------------------------------------------------------------ flow control

    @Override
    public boolean topicSetPaused(TopicPauseCommand command) {
        return flowControl.topicSetPaused(command);
    }

    @Override
    public List<String> topicListPaused(PausedTopicsQuery query) {
        return flowControl.topicListPaused(query);
    }

    @Override
    public boolean topicSetLimits(TopicLimitsCommand command) {
        return flowControl.topicSetLimits(command);
    }

    @Override
    public Map<String, TopicLimits> topicListLimits(TopicLimitsQuery query) {
        return flowControl.topicListLimits(query);
    }

    @Override
    public Optional<MessageState> messageCancel(CancelCommand command) {
        return flowControl.messageCancel(command);
    }

    @Override
    public boolean supportsOrderingKeys() {
        return true;
    }

    @Override
    public boolean topicSetBehindDeadLetter(TopicOrderingCommand command) {
        return flowControl.topicSetBehindDeadLetter(command);
    }

    @Override
    public BehindDeadLetter topicBehindDeadLetter(TopicOrderingQuery query) {
        return flowControl.topicBehindDeadLetter(query);
    }

    // ------------------------------------------------------------------------------------------ inspection

    @Override
    public Optional<MessageInfo> messageFind(MessageRef message) {
        return inspect.messageFind(message);
    }

    @Override
    public NamespaceStats namespaceStats(StatsQuery query) {
        return stats.namespaceStats(query);
    }

    // ------------------------------------------------------------------------------------------ recording

    /** Every message stored by a publish since the store was created or last cleared, in id order. */
    public List<PublishedMessage> published() {
        state.lock.lock();
        try {
            return List.copyOf(state.published);
        } finally {
            state.lock.unlock();
        }
    }

    /** The recorded publishes of one namespace, in id order. */
    public List<PublishedMessage> published(String namespace) {
        return published(namespace, null);
    }

    /** The recorded publishes of one topic of a namespace ({@code topic} null: every topic), in id order. */
    public List<PublishedMessage> published(String namespace, String topic) {
        Objects.requireNonNull(namespace, "namespace");
        state.lock.lock();
        try {
            List<PublishedMessage> found = new ArrayList<>();
            for (PublishedMessage message : state.published) {
                if (message.namespace().equals(namespace) && (topic == null || message.topic().equals(topic))) {
                    found.add(message);
                }
            }
            return Collections.unmodifiableList(found);
        } finally {
            state.lock.unlock();
        }
    }

    /** Forgets the recorded publishes; the messages themselves stay. */
    public void clearPublished() {
        state.lock.lock();
        try {
            state.published.clear();
        } finally {
            state.lock.unlock();
        }
    }
}
