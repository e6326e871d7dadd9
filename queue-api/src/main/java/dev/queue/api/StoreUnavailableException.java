package dev.queue.api;

/** The message store could not be reached or failed; the operation may or may not have taken effect. */
public class StoreUnavailableException extends QueueException {

    private static final long serialVersionUID = 1L;

    /**
     * A store failure.
     *
     * @param message the operation that failed and the store's error (for PostgreSQL, with its SQL state)
     * @param cause   the driver's or pool's exception
     */
    public StoreUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
