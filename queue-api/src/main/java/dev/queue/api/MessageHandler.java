package dev.queue.api;

/**
 * Handles one message. Returning acknowledges it; throwing schedules a retry with the subscriber's backoff,
 * or makes a dead letter of it when it has no attempts left. The context can ask for either explicitly.
 * Runs at least once per message: write handlers that can run twice.
 *
 * @param <T> the payload type the handler receives
 */
@FunctionalInterface
public interface MessageHandler<T> {

    /**
     * Handles one delivery of a message, on a handler thread of the subscription. Anything thrown, an
     * {@link Error} included, fails the attempt and is recorded as the message's last error.
     *
     * @param payload the payload decoded to the subscriber's type, or the {@link Delivery} itself for a handler of
     *                raw deliveries
     * @param context the message's id, attempt and headers, and the way to ask for a retry or a dead letter
     * @throws Exception to fail this attempt
     */
    void handle(T payload, MessageContext context) throws Exception;
}
