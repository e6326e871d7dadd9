package dev.queue.api;

/**
 * The store is reachable but not set up for the queue: its tables are missing, for instance, in a queue told not
 * to migrate on start. The message says what to apply.
 */
public class StoreNotReadyException extends QueueException {

    private static final long serialVersionUID = 1L;

    /**
     * The store is not set up.
     *
     * @param message what is missing and what to apply
     */
    public StoreNotReadyException(String message) {
        super(message);
    }
}
