package dev.queue.domain.port;

import dev.queue.api.BehindDeadLetter;
import dev.queue.api.DeadLetter;
import dev.queue.api.MessageInfo;
import dev.queue.api.MessageState;
import dev.queue.api.NamespaceStats;
import dev.queue.api.Outcome;
import dev.queue.api.TopicLimits;
import dev.queue.api.UnsupportedCapabilityException;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The truth about messages. Names are noun first ({@code message...}, {@code deadLetter...}) and carry their
 * precondition ({@code IfLeased}); each method takes one parameter record. The vocabulary of a settled delivery is
 * the one of {@link Outcome} and {@link dev.queue.domain.rules.Lifecycle}: ack, retry, dead letter, release.
 *
 * <p>Every state change is guarded: a method that acts on a lease changes a message only while it is running under
 * that lease token in that namespace, and otherwise leaves it alone and reports {@link Outcome#LEASE_LOST} (or
 * leaves its id out of the returned set). Inputs arrive validated. Failures of the underlying store surface as
 * {@link dev.queue.api.StoreUnavailableException}.
 */
public interface MessageStore {

    /** All or nothing, in order; also wakes listeners of the topics once the messages are visible. */
    List<StoredOutcome> messageInsertMany(PublishCommand command);

    List<ClaimedMessage> messageClaimDue(ClaimCommand command);

    /** The ids that were acknowledged; missing ids had lost their lease. */
    Set<Long> messageAckIfLeased(AckCommand command);

    /** RETRY_SCHEDULED or LEASE_LOST. */
    Outcome messageRetryIfLeased(RetryCommand command);

    /** DEAD_LETTERED or LEASE_LOST. */
    Outcome messageDeadLetterIfLeased(DeadLetterCommand command);

    /** The ids whose lease was extended. */
    Set<Long> messageExtendIfLeased(ExtendCommand command);

    /** The ids released back to pending. */
    Set<Long> messageReleaseIfLeased(ReleaseCommand command);

    /**
     * Expired leases, oldest first, at most the command's limit: pending again, or a dead letter when the expired
     * attempt was the last ({@link dev.queue.domain.rules.Lifecycle#attemptsLeft}, the rule every settle follows).
     */
    RescueResult messageRescueExpired(RescueCommand command);

    /** A pending, running or dead message of the namespace as it stands. */
    Optional<MessageInfo> messageFind(MessageRef message);

    /** See {@link NextDueQuery}; lets an idle subscriber wake exactly when the next message becomes due. */
    Optional<Instant> messageNextDueAt(NextDueQuery query);

    List<DeadLetter> deadLetterList(DeadLetterQuery query);

    Optional<DeadLetter> deadLetterFind(MessageRef message);

    /** One batch: how many dead letters became pending, and where the next batch starts. */
    RedriveResult deadLetterRedrive(RedriveCommand command);

    /** How many dead letters were deleted (at most the command's limit). */
    int deadLetterPurge(PurgeCommand command);

    NamespaceStats namespaceStats(StatsQuery query);

    /**
     * The topics whose sweep behind the claim positions this claimer takes (see {@link HeadSweepCommand}). The
     * default takes every one: each claimer sweeps on its own, which is correct and only costs more where sweeps are
     * expensive (a store whose claims step over old row versions).
     */
    default Set<String> topicTakeHeadSweeps(HeadSweepCommand command) {
        return Set.copyOf(command.topics());
    }

    // Flow control (docs/flow-control.md). Default methods refuse, so a store written before flow control existed
    // still compiles and says plainly what it lacks.

    /** True when the topic's pause state changed. After a pause is stored, no claim starts a message of the topic. */
    default boolean topicSetPaused(TopicPauseCommand command) {
        throw flowControlMissing();
    }

    /** The paused topics of the namespace, sorted by name. */
    default List<String> topicListPaused(PausedTopicsQuery query) {
        throw flowControlMissing();
    }

    /** The state the message was cancelled in (PENDING or RUNNING); empty when it was neither. */
    default Optional<MessageState> messageCancel(CancelCommand command) {
        throw flowControlMissing();
    }

    /** SNOOZED or LEASE_LOST. */
    default Outcome messageSnoozeIfLeased(SnoozeCommand command) {
        throw flowControlMissing();
    }

    // Limits (docs/flow-control.md, "Limits"). A store without them refuses to set any, and its claims take no
    // notice of limits since none can exist.

    /**
     * True when the topic's limits changed. Once stored, no claim that begins afterwards starts a message beyond them,
     * counting every message of the topic running then (see {@link TopicLimitsCommand}).
     */
    default boolean topicSetLimits(TopicLimitsCommand command) {
        throw limitsMissing();
    }

    /** The limited topics of the namespace and their limits, sorted by name. */
    default Map<String, TopicLimits> topicListLimits(TopicLimitsQuery query) {
        throw limitsMissing();
    }

    private UnsupportedCapabilityException limitsMissing() {
        return new UnsupportedCapabilityException("limits",
                getClass().getSimpleName() + " does not implement concurrency and rate limits");
    }

    // Ordering keys (docs/flow-control.md). A store keeps them when it answers true here; the domain refuses keyed
    // messages to any other store rather than publish them unordered.

    /**
     * Whether the store keeps ordering keys: at most one message of a (namespace, topic, key) pending or running at a
     * time, the next in id order promoted when it leaves, as docs/flow-control.md describes.
     */
    default boolean supportsOrderingKeys() {
        return false;
    }

    /** True when the topic's choice changed. */
    default boolean topicSetBehindDeadLetter(TopicOrderingCommand command) {
        throw orderingKeysMissing();
    }

    /** The topic's choice; WAIT when never set. */
    default BehindDeadLetter topicBehindDeadLetter(TopicOrderingQuery query) {
        throw orderingKeysMissing();
    }

    private UnsupportedCapabilityException orderingKeysMissing() {
        return new UnsupportedCapabilityException("ordering keys",
                getClass().getSimpleName() + " does not keep ordering keys");
    }

    private UnsupportedCapabilityException flowControlMissing() {
        return new UnsupportedCapabilityException("flow control",
                getClass().getSimpleName() + " does not implement pause, resume, cancel and snooze");
    }
}
