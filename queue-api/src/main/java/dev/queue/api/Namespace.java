package dev.queue.api;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One tenant's view of the queue. Nothing in one namespace is visible to, or changeable from, another.
 * Every method validates its arguments first and throws {@link InvalidInputException} naming the offending
 * value, in which case nothing was stored or changed.
 */
public interface Namespace {

    String name();

    /** Publishes a payload object (encoded by the codec) to a topic with default options. */
    MessageId publish(String topic, Object payload);

    PublishResult publish(Message message);

    /** Publishes many messages in one round trip; either all are stored (duplicates aside) or none. */
    List<PublishResult> publishAll(List<Message> messages);

    /** Leases up to {@code pull.limit()} due messages; an empty list when none is due. */
    List<Delivery> pull(Pull pull);

    default Optional<Delivery> pullOne(Pull pull) {
        List<Delivery> got = pull(InvalidInputException.requireNonNull(pull, "pull", "a Pull").limit(1));
        return got.isEmpty() ? Optional.empty() : Optional.of(got.get(0));
    }

    /** Marks the message done, if the caller still holds it. */
    Outcome ack(Delivery delivery);

    /** Acknowledges many in one round trip; each id maps to ACKED or LEASE_LOST. */
    Map<MessageId, Outcome> ackAll(Collection<Delivery> deliveries);

    /**
     * Puts the message back to pending after the topic's backoff for this attempt, recording the error; a
     * message on its last attempt becomes a dead letter instead.
     */
    Outcome nack(Delivery delivery, String error);

    /** Like {@link #nack(Delivery, String)}, due again after exactly {@code delay}. */
    Outcome nack(Delivery delivery, String error, Duration delay);

    /** Makes the message a dead letter now, recording the error, whatever attempts it had left. */
    Outcome fail(Delivery delivery, String error);

    /** Holds the message for {@code duration} from now. */
    Outcome extend(Delivery delivery, Duration duration);

    /** Starts a subscriber: the queue claims, runs, acknowledges, retries and dead-letters for it. */
    Subscription subscribe(Subscriber<?> subscriber);

    DeadLetters deadLetters();

    Schedules schedules();

    /** The message as it stands (pending, running or dead); empty when done or unknown in this namespace. */
    Optional<MessageInfo> inspect(MessageId id);

    NamespaceStats stats();

    PayloadCodec codec();
}
