package dev.queue.api;

/** The root of every exception the queue throws on purpose. */
public class QueueException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message and no cause.
     *
     * @param message what went wrong
     */
    public QueueException(String message) {
        super(message);
    }

    /**
     * An exception caused by another.
     *
     * @param message what went wrong
     * @param cause   the underlying failure; may be null
     */
    public QueueException(String message, Throwable cause) {
        super(message, cause);
    }
}
