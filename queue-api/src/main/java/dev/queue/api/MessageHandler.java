package dev.queue.api;

/**
 * Handles one message. Returning acknowledges it; throwing schedules a retry with the subscriber's backoff,
 * or makes a dead letter of it when it has no attempts left. The context can ask for either explicitly.
 * Runs at least once per message: write handlers that can run twice.
 */
@FunctionalInterface
public interface MessageHandler<T> {

    void handle(T payload, MessageContext context) throws Exception;
}
