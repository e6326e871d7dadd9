package dev.queue.api;

/** The message store could not be reached or failed; the operation may or may not have taken effect. */
public class StoreUnavailableException extends QueueException {

    private static final long serialVersionUID = 1L;

    public StoreUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
