package dev.queue.api.observation;

/**
 * Hears what a queue does, to measure, trace or audit it; every method has a default that does nothing, so an
 * implementation overrides only what it needs. Register one with {@link dev.queue.api.QueueOptions#interceptor}.
 *
 * <p>Called on the queue's own threads (the publisher's, a subscriber's handler thread, its acknowledgement
 * flusher, the schedule ticker), so implementations must be thread-safe and quick. One that throws is logged,
 * naming the message, topic and namespace, and skipped: it never fails a publish or changes a handler's outcome.
 * With several registered, starts are called in registration order and ends in the reverse order, as nested
 * scopes close.
 */
public interface QueueInterceptor {

    /**
     * A publish is about to validate and store {@code publish.messages()}; headers added to the event are stored
     * with the messages.
     *
     * @param publish the namespace and messages about to be published
     * @return what wants to hear how the publish ended, or null
     */
    default PublishObservation onPublish(PublishEvent publish) {
        return null;
    }

    /**
     * A subscription's handler is about to run a message, on the thread that runs it. Messages taken with
     * {@code pull} and settled by hand are not handler runs.
     *
     * @param start the message and when its run started
     * @return what wants to hear how the run ended, or null
     */
    default HandleObservation onHandle(HandleStart start) {
        return null;
    }

    /**
     * A maintenance pass changed something: leases rescued, a schedule fired.
     *
     * @param event what happened
     */
    default void onMaintenance(MaintenanceEvent event) {
    }
}
