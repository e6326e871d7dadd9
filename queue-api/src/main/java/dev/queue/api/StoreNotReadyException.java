package dev.queue.api;

/**
 * The store is reachable but not set up for the queue: its tables are missing, for instance, in a queue told not
 * to migrate on start. The message says what to apply.
 */
public class StoreNotReadyException extends QueueException {

    private static final long serialVersionUID = 1L;

    public StoreNotReadyException(String message) {
        super(message);
    }
}
