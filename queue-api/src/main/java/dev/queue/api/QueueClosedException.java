package dev.queue.api;

/**
 * The queue, or the subscription, was closed before the call; or, with a cause, closed while the call ran and
 * did not wait for it any longer, so whether the call took effect is unknown.
 */
public class QueueClosedException extends QueueException {

    private static final long serialVersionUID = 1L;

    public QueueClosedException(String message) {
        super(message);
    }

    public QueueClosedException(String message, Throwable cause) {
        super(message, cause);
    }
}
