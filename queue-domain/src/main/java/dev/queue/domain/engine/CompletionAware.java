package dev.queue.domain.engine;

/**
 * Implemented by the context a subscriber hands to its handler. An adapter that completes a message inside the
 * handler's own database transaction calls {@link #completedInCallerTransaction()}, so the runtime knows a
 * later "lease lost" on its own acknowledgement means the message was already done, not stolen.
 */
public interface CompletionAware {

    void completedInCallerTransaction();
}
