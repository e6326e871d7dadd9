package dev.queue.domain.port;

import dev.queue.api.DeadLetter;
import dev.queue.api.MessageInfo;
import dev.queue.api.NamespaceStats;
import dev.queue.api.Outcome;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The truth about messages. Every state change is guarded: a method that acts on a lease changes a message
 * only while it is running under that lease token in that namespace, and otherwise leaves it alone and
 * reports {@link Outcome#LEASE_LOST} (or leaves its id out of the returned set). Inputs arrive validated.
 * Failures of the underlying store surface as {@link dev.queue.api.StoreUnavailableException}.
 */
public interface MessageStore {

    /** All or nothing, in order; also wakes listeners of the topics once the messages are visible. */
    List<StoredOutcome> publish(PublishCommand command);

    List<ClaimedMessage> claim(ClaimCommand command);

    /** The ids that were completed; missing ids had lost their lease. */
    Set<Long> completeIfLeased(CompleteCommand command);

    /** RETRY_SCHEDULED or LEASE_LOST. */
    Outcome retryIfLeased(RetryCommand command);

    /** DEAD_LETTERED or LEASE_LOST. */
    Outcome buryIfLeased(BuryCommand command);

    /** The ids whose lease was extended. */
    Set<Long> extendIfLeased(ExtendCommand command);

    /** The ids released back to pending. */
    Set<Long> releaseIfLeased(ReleaseCommand command);

    /**
     * Expired leases, oldest first, at most the command's limit: pending again, or a dead letter when the expired
     * attempt was the last ({@link dev.queue.domain.rules.Lifecycle#attemptsLeft}, the rule every settle follows).
     */
    RescueResult rescueExpiredLeases(RescueCommand command);

    List<DeadLetter> deadLetters(DeadLetterQuery query);

    Optional<DeadLetter> deadLetter(String namespace, long id);

    /** One batch: how many dead letters became pending, and where the next batch starts. */
    RedriveResult redrive(RedriveCommand command);

    /** How many dead letters were deleted (at most the command's limit). */
    int purgeDeadLetters(PurgeCommand command);

    NamespaceStats stats(String namespace);

    /** A pending, running or dead message of the namespace as it stands. */
    Optional<MessageInfo> find(String namespace, long id);

    /**
     * The earliest due time among pending messages of these topics that are not yet due at {@code now}
     * (null: the store's clock), so an idle subscriber can wake exactly then.
     */
    Optional<Instant> nextDueAt(String namespace, List<String> topics, Instant now);
}
