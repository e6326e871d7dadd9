package dev.queue.api;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One tenant's view of the queue. Nothing in one namespace is visible to, or changeable from, another.
 * Every method validates its arguments first and throws {@link InvalidInputException} naming the offending
 * value, in which case nothing was stored or changed. Thread-safe.
 *
 * <p>Besides what each method lists, any call that reaches the store may throw {@link QueueClosedException}
 * (the queue was closed), {@link StoreUnavailableException} (the store failed; the call may or may not have taken
 * effect) or {@link NamespaceAccessDeniedException} (the database role may not use this namespace).
 */
public interface Namespace {

    /**
     * The namespace's name.
     *
     * @return the name, as given to {@link Queue#namespace(String)}
     */
    String name();

    /**
     * Publishes a payload object (encoded by the codec) to a topic with default options. Once this returns, the
     * message is stored.
     *
     * @param topic   the topic
     * @param payload the payload object
     * @return the new message's id
     * @throws InvalidNameException    when the topic is not a valid name
     * @throws InvalidPayloadException when the codec cannot write the payload, or its JSON is too large
     */
    MessageId publish(String topic, Object payload);

    /**
     * Publishes one message. Once this returns, the message is stored, or a message holding the same unique key
     * was found pending or running and nothing was stored.
     *
     * @param message the message, for example {@code Message.to("topic").payload(value)}
     * @return {@link PublishResult.Published} with the new id, or {@link PublishResult.Duplicate} with the id of the
     *         message holding the key
     * @throws InvalidInputException when the message or one of its options breaks a rule (see {@link Message})
     */
    PublishResult publish(Message message);

    /**
     * Publishes many messages in one round trip; either all are stored (duplicates aside) or none. Within the
     * batch, a message with the unique key of an earlier one is a duplicate of it.
     *
     * @param messages at most 10,000 messages
     * @return one result per message, in order
     * @throws InvalidInputException when the list is null or too long, or any message breaks a rule; none is stored
     */
    List<PublishResult> publishAll(List<Message> messages);

    /**
     * Leases up to {@code pull.limit()} due messages, in order of topic (as listed), priority, due time and id;
     * each claim counts an attempt. Returns at once: an empty list when none is due. The caller then settles each
     * delivery with {@link #ack}, {@link #nack}, {@link #fail}, or holds it longer with {@link #extend}; a delivery
     * left alone becomes pending again when its lease expires.
     *
     * @param pull the topics, worker, limit and visibility timeout
     * @return the deliveries leased, possibly none
     * @throws InvalidInputException when the pull is null or one of its properties breaks a rule (see {@link Pull})
     */
    List<Delivery> pull(Pull pull);

    /**
     * Leases at most one due message, like {@link #pull(Pull)} with a limit of 1.
     *
     * @param pull the topics, worker and visibility timeout; its limit is ignored
     * @return the delivery; empty when none is due
     * @throws InvalidInputException when the pull is null or one of its properties breaks a rule
     */
    default Optional<Delivery> pullOne(Pull pull) {
        List<Delivery> got = pull(InvalidInputException.requireNonNull(pull, "pull", "a Pull").limit(1));
        return got.isEmpty() ? Optional.empty() : Optional.of(got.get(0));
    }

    /**
     * Marks the message done, if the caller still holds it: the message leaves the queue and its unique key is
     * free again.
     *
     * @param delivery a delivery returned by {@link #pull} (or given to a handler)
     * @return {@link Outcome#ACKED}, or {@link Outcome#LEASE_LOST} when the lease is no longer the caller's (nothing
     *         changed)
     * @throws InvalidInputException when the delivery is null
     */
    Outcome ack(Delivery delivery);

    /**
     * Acknowledges many in one round trip, each as {@link #ack(Delivery)} does.
     *
     * @param deliveries at most 10,000 deliveries
     * @return each delivery's id, in the order given, mapped to {@link Outcome#ACKED} or {@link Outcome#LEASE_LOST}
     * @throws InvalidInputException when the collection is null, too long or holds a null
     */
    Map<MessageId, Outcome> ackAll(Collection<Delivery> deliveries);

    /**
     * Puts the message back to pending after the topic's backoff for this attempt, recording the error; a
     * message on its last attempt becomes a dead letter instead. The error text is kept, cut at 8,000 characters,
     * with NUL and unpaired surrogates replaced by U+FFFD.
     *
     * @param delivery a delivery the caller holds
     * @param error    why; recorded as the message's last error
     * @return {@link Outcome#RETRY_SCHEDULED}, {@link Outcome#DEAD_LETTERED} on the last attempt, or
     *         {@link Outcome#LEASE_LOST} when the lease is no longer the caller's (nothing changed)
     * @throws InvalidInputException when the delivery is null
     */
    Outcome nack(Delivery delivery, String error);

    /**
     * Like {@link #nack(Delivery, String)}, due again after exactly {@code delay}; on the last attempt the message
     * still becomes a dead letter.
     *
     * @param delivery a delivery the caller holds
     * @param error    why; recorded as the message's last error
     * @param delay    0 to 365 days
     * @return {@link Outcome#RETRY_SCHEDULED}, {@link Outcome#DEAD_LETTERED} or {@link Outcome#LEASE_LOST}
     * @throws InvalidInputException when the delivery is null, or the delay null or out of range
     */
    Outcome nack(Delivery delivery, String error, Duration delay);

    /**
     * Makes the message a dead letter now, recording the error, whatever attempts it had left.
     *
     * @param delivery a delivery the caller holds
     * @param error    why; recorded as the message's last error
     * @return {@link Outcome#DEAD_LETTERED}, or {@link Outcome#LEASE_LOST} when the lease is no longer the caller's
     * @throws InvalidInputException when the delivery is null
     */
    Outcome fail(Delivery delivery, String error);

    /**
     * Holds the message for {@code duration} from now, instead of until its current lease ends. The delivery
     * object keeps its old {@link Delivery#leaseUntil()}.
     *
     * @param delivery a delivery the caller holds
     * @param duration 1 s to 24 h
     * @return {@link Outcome#EXTENDED}, or {@link Outcome#LEASE_LOST} when the lease is no longer the caller's
     * @throws InvalidInputException when the delivery is null, or the duration null or out of range
     */
    Outcome extend(Delivery delivery, Duration duration);

    /**
     * Puts the message back to pending, due after {@code delay}, without counting its attempt and without the retry
     * path: no error is recorded, no backoff applies, and it never becomes a dead letter for this. For a handler that
     * finds it cannot do its work yet (a rate limit upstream, a resource not ready); a subscription's handler asks
     * with {@link MessageContext#snooze(Duration)} instead.
     *
     * @param delivery a delivery the caller holds
     * @param delay    0 to 365 days
     * @return {@link Outcome#SNOOZED}, or {@link Outcome#LEASE_LOST} when the lease is no longer the caller's (nothing
     *         changed), also when the message was cancelled
     * @throws InvalidInputException when the delivery is null, or the delay null or out of range
     */
    Outcome snooze(Delivery delivery, Duration delay);

    /**
     * Starts a subscriber: the queue claims, runs, acknowledges, retries and dead-letters for it, on threads of its
     * own, until the subscription or the queue is closed.
     *
     * @param subscriber the topics, options and handler
     * @return the running subscription
     * @throws InvalidInputException when the subscriber is null or any of its properties breaks a rule; nothing
     *                               starts then
     */
    Subscription subscribe(Subscriber<?> subscriber);

    /**
     * The dead letters of this namespace.
     *
     * @return a handle to inspect, redrive and purge them
     */
    DeadLetters deadLetters();

    /**
     * Flow control of this namespace: pause and resume topics, cancel messages.
     *
     * @return a handle to pause, resume and cancel
     */
    FlowControl flowControl();

    /**
     * The schedules of this namespace. On a queue without a schedule store, the handle's methods throw
     * {@link UnsupportedCapabilityException}.
     *
     * @return a handle to create, change and fire schedules
     */
    Schedules schedules();

    /**
     * The message as it stands (pending, running or dead), with its attempt history.
     *
     * @param id the message's id
     * @return the message; empty when done or unknown in this namespace
     * @throws InvalidInputException when the id is null
     */
    Optional<MessageInfo> inspect(MessageId id);

    /**
     * Message counts of this namespace, per state and per topic.
     *
     * @return the counts
     */
    NamespaceStats stats();

    /**
     * The codec that encodes payload objects and decodes {@link Delivery#payload(Class)}.
     *
     * @return the codec of {@link QueueOptions#codec()}, or the adapter's default (Jackson) when none is set
     */
    PayloadCodec codec();
}
