package dev.queue.api.observation;

import dev.queue.api.PublishResult;

import java.util.List;

/** How one publish call ended, told to the interceptor that asked in {@link QueueInterceptor#onPublish}. */
public interface PublishObservation {

    /**
     * The store answered: one result per message of the event, in order (a {@link PublishResult.Duplicate} stored
     * nothing). {@code event.messages()} are the messages as stored, headers included.
     *
     * @param event   the publish, as the interceptors left it
     * @param results one result per message, in order
     */
    default void published(PublishEvent event, List<PublishResult> results) {
    }

    /**
     * Nothing was stored: a message broke a rule, or the store failed. The exception is then thrown to the caller.
     *
     * @param event the publish, as the interceptors left it
     * @param error what the publish failed with
     */
    default void failed(PublishEvent event, RuntimeException error) {
    }
}
