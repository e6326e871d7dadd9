package dev.queue.api;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/** What a handler knows about the message it runs, and how it asks for a different outcome than success. */
public interface MessageContext {

    /**
     * The message being handled, with its lease.
     *
     * @return the delivery
     */
    Delivery delivery();

    /**
     * The message's id, the same on every attempt: a natural idempotency key.
     *
     * @return the id
     */
    default MessageId messageId() {
        return delivery().id();
    }

    /**
     * The namespace the message belongs to.
     *
     * @return the namespace name
     */
    default String namespace() {
        return delivery().namespace();
    }

    /**
     * The topic the message was published to.
     *
     * @return the topic name
     */
    default String topic() {
        return delivery().topic();
    }

    /**
     * Which attempt this is.
     *
     * @return 1 on the first run, 2 on the first retry, and so on
     */
    default int attempt() {
        return delivery().attempt();
    }

    /**
     * The message's headers.
     *
     * @return an unmodifiable map, possibly empty
     */
    default Map<String, String> headers() {
        return delivery().headers();
    }

    /**
     * After the handler returns, put the message back to pending for this long instead of acknowledging it. On the
     * message's last attempt it becomes a dead letter instead. The last call of this, {@link #fail} and the snooze
     * methods wins; a handler that throws afterwards fails its attempt as usual, and the request is ignored.
     *
     * @param delay  0 to 365 days
     * @param reason recorded as the message's last error
     * @throws InvalidInputException when {@code delay} is null, negative or longer than 365 days
     */
    void retryIn(Duration delay, String reason);

    /**
     * After the handler returns, make the message a dead letter instead of acknowledging it, whatever attempts it
     * had left. The last call of this, {@link #retryIn} and the snooze methods wins.
     *
     * @param reason recorded as the message's last error
     */
    void fail(String reason);

    /**
     * After the handler returns, put the message back to pending for this long instead of acknowledging it, without
     * counting the attempt and without the retry path (no error recorded, no backoff, never a dead letter for this).
     * The last call of this, {@link #snoozeUntil}, {@link #retryIn} and {@link #fail} wins; a handler that throws
     * afterwards fails its attempt as usual, and the request is ignored.
     *
     * @param delay 0 to 365 days
     * @throws InvalidInputException          when {@code delay} is null, negative or longer than 365 days
     * @throws UnsupportedCapabilityException when this context does not implement it (a test double, say)
     */
    default void snooze(Duration delay) {
        throw new UnsupportedCapabilityException("snooze", getClass().getName() + " does not implement it");
    }

    /**
     * Like {@link #snooze(Duration)}, due again at {@code runAt} (a time in the past means at once).
     *
     * @param runAt when the message is due again, at most 365 days ahead
     * @throws InvalidInputException          when {@code runAt} is null or more than 365 days ahead
     * @throws UnsupportedCapabilityException when this context does not implement it (a test double, say)
     */
    default void snoozeUntil(Instant runAt) {
        throw new UnsupportedCapabilityException("snooze", getClass().getName() + " does not implement it");
    }

    /**
     * Whether this run should stop: the message was cancelled ({@link FlowControl#cancel}), or this run no longer
     * holds its lease. Whatever the handler does afterwards, its outcome changes nothing. A cancel made through the
     * same queue instance shows at once; one made elsewhere (another process, SQL) shows when the subscription next
     * extends the lease, within about half a lease. A long handler should ask between steps and return early.
     *
     * @return true once the run should stop; false for a context that does not follow cancellation (a test double)
     */
    default boolean isCancelled() {
        return false;
    }
}
