package dev.queue.api;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A stored message as it stands, for operators asking why something did or did not run.
 * {@code runAt} is when a pending message is due; {@code leaseUntil} and {@code worker} are set while running;
 * {@code lastError} is the latest recorded failure, kept across retries and redrives. {@code attemptHistory} lists
 * the attempts, oldest first: the ended ones (the last {@value #HISTORY_LIMIT} at most, kept across retries,
 * dead-lettering and redrives), then the running one; {@code attemptsNotKept} counts the ended attempts older than
 * those kept.
 *
 * @param id             the message's id
 * @param namespace      the namespace it belongs to
 * @param topic          the topic it was published to
 * @param state          pending, running or dead
 * @param json           the payload as stored JSON text
 * @param headers        its headers
 * @param priority       its priority, 0 (first) to 9 (last)
 * @param attempts       how many attempts it has used (counted from zero again after a redrive)
 * @param maxAttempts    how many attempts it is allowed
 * @param uniqueKey      its unique key; null when it has none
 * @param publishedAt    when it was published
 * @param runAt          when a pending message is due
 * @param leaseUntil     when the lease of a running message ends; set while running
 * @param worker         the worker holding a running message; set while running
 * @param lastError      the latest recorded failure; null when it has not failed
 * @param attemptHistory the ended attempts kept (at most {@value #HISTORY_LIMIT}), then the running one; never null
 * @param attemptsNotKept how many ended attempts, older than the first listed, the store no longer keeps
 * @param orderingKey    its ordering key; empty when it has none
 * @param waitingForKey  true for a pending message that waits behind an earlier message of its ordering key (it is
 *                       not claimable until that one has left; its {@code runAt} is its own due time)
 */
public record MessageInfo(MessageId id, String namespace, String topic, MessageState state, String json,
                          Map<String, String> headers, int priority, int attempts, int maxAttempts, String uniqueKey,
                          Instant publishedAt, Instant runAt, Instant leaseUntil, String worker, String lastError,
                          List<Attempt> attemptHistory, int attemptsNotKept, Optional<String> orderingKey,
                          boolean waitingForKey) {

    /** How many ended attempts a store keeps per message (the oldest go first). */
    public static final int HISTORY_LIMIT = 20;

    /**
     * A message as it stands; a null attempt history is taken as empty, and the list is copied.
     *
     * @param id             the message's id
     * @param namespace      the namespace it belongs to
     * @param topic          the topic it was published to
     * @param state          pending, running or dead
     * @param json           the payload as stored JSON text
     * @param headers        its headers
     * @param priority       its priority, 0 (first) to 9 (last)
     * @param attempts       how many attempts it has used
     * @param maxAttempts    how many attempts it is allowed
     * @param uniqueKey      its unique key; null when it has none
     * @param publishedAt    when it was published
     * @param runAt          when a pending message is due
     * @param leaseUntil     when the lease of a running message ends; set while running
     * @param worker         the worker holding a running message; set while running
     * @param lastError      the latest recorded failure; null when it has not failed
     * @param attemptHistory the ended attempts kept, then the running one, oldest first; null for none
     * @param attemptsNotKept how many older ended attempts are no longer kept, 0 or more
     * @param orderingKey    its ordering key; null or empty when it has none
     * @param waitingForKey  true for a pending message waiting behind an earlier message of its ordering key
     * @throws InvalidInputException when {@code attemptsNotKept} is negative
     */
    public MessageInfo {
        attemptHistory = attemptHistory == null ? List.of() : List.copyOf(attemptHistory);
        orderingKey = orderingKey == null ? Optional.empty() : orderingKey;
        if (attemptsNotKept < 0) {
            throw new InvalidInputException("attemptsNotKept", attemptsNotKept, "0 or more");
        }
    }

    /**
     * A message as it stands, without an ordering key.
     *
     * @param id             the message's id
     * @param namespace      the namespace it belongs to
     * @param topic          the topic it was published to
     * @param state          pending, running or dead
     * @param json           the payload as stored JSON text
     * @param headers        its headers
     * @param priority       its priority, 0 (first) to 9 (last)
     * @param attempts       how many attempts it has used
     * @param maxAttempts    how many attempts it is allowed
     * @param uniqueKey      its unique key; null when it has none
     * @param publishedAt    when it was published
     * @param runAt          when a pending message is due
     * @param leaseUntil     when the lease of a running message ends; set while running
     * @param worker         the worker holding a running message; set while running
     * @param lastError      the latest recorded failure; null when it has not failed
     * @param attemptHistory the ended attempts kept, then the running one, oldest first; null for none
     * @param attemptsNotKept how many older ended attempts are no longer kept, 0 or more
     */
    public MessageInfo(MessageId id, String namespace, String topic, MessageState state, String json,
                       Map<String, String> headers, int priority, int attempts, int maxAttempts, String uniqueKey,
                       Instant publishedAt, Instant runAt, Instant leaseUntil, String worker, String lastError,
                       List<Attempt> attemptHistory, int attemptsNotKept) {
        this(id, namespace, topic, state, json, headers, priority, attempts, maxAttempts, uniqueKey, publishedAt, runAt,
                leaseUntil, worker, lastError, attemptHistory, attemptsNotKept, Optional.empty(), false);
    }

    /**
     * A message as it stands, with every ended attempt in its history.
     *
     * @param id             the message's id
     * @param namespace      the namespace it belongs to
     * @param topic          the topic it was published to
     * @param state          pending, running or dead
     * @param json           the payload as stored JSON text
     * @param headers        its headers
     * @param priority       its priority, 0 (first) to 9 (last)
     * @param attempts       how many attempts it has used
     * @param maxAttempts    how many attempts it is allowed
     * @param uniqueKey      its unique key; null when it has none
     * @param publishedAt    when it was published
     * @param runAt          when a pending message is due
     * @param leaseUntil     when the lease of a running message ends; set while running
     * @param worker         the worker holding a running message; set while running
     * @param lastError      the latest recorded failure; null when it has not failed
     * @param attemptHistory the ended attempts, then the running one, oldest first; null for none
     */
    public MessageInfo(MessageId id, String namespace, String topic, MessageState state, String json,
                       Map<String, String> headers, int priority, int attempts, int maxAttempts, String uniqueKey,
                       Instant publishedAt, Instant runAt, Instant leaseUntil, String worker, String lastError,
                       List<Attempt> attemptHistory) {
        this(id, namespace, topic, state, json, headers, priority, attempts, maxAttempts, uniqueKey, publishedAt, runAt,
                leaseUntil, worker, lastError, attemptHistory, 0, Optional.empty(), false);
    }

    /**
     * A message as it stands, without an attempt history.
     *
     * @param id          the message's id
     * @param namespace   the namespace it belongs to
     * @param topic       the topic it was published to
     * @param state       pending, running or dead
     * @param json        the payload as stored JSON text
     * @param headers     its headers
     * @param priority    its priority, 0 (first) to 9 (last)
     * @param attempts    how many attempts it has used
     * @param maxAttempts how many attempts it is allowed
     * @param uniqueKey   its unique key; null when it has none
     * @param publishedAt when it was published
     * @param runAt       when a pending message is due
     * @param leaseUntil  when the lease of a running message ends; set while running
     * @param worker      the worker holding a running message; set while running
     * @param lastError   the latest recorded failure; null when it has not failed
     */
    public MessageInfo(MessageId id, String namespace, String topic, MessageState state, String json,
                       Map<String, String> headers, int priority, int attempts, int maxAttempts, String uniqueKey,
                       Instant publishedAt, Instant runAt, Instant leaseUntil, String worker, String lastError) {
        this(id, namespace, topic, state, json, headers, priority, attempts, maxAttempts, uniqueKey, publishedAt, runAt,
                leaseUntil, worker, lastError, List.of(), 0, Optional.empty(), false);
    }
}
