package dev.queue.api;

import java.time.Duration;
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
     * message's last attempt it becomes a dead letter instead. The last call of this and {@link #fail} wins; a
     * handler that throws afterwards fails its attempt as usual, and the request is ignored.
     *
     * @param delay  0 to 365 days
     * @param reason recorded as the message's last error
     * @throws InvalidInputException when {@code delay} is null, negative or longer than 365 days
     */
    void retryIn(Duration delay, String reason);

    /**
     * After the handler returns, make the message a dead letter instead of acknowledging it, whatever attempts it
     * had left. The last call of this and {@link #retryIn} wins.
     *
     * @param reason recorded as the message's last error
     */
    void fail(String reason);
}
