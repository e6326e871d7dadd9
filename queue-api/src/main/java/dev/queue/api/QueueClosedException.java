package dev.queue.api;

/**
 * The queue, or the subscription, was closed before the call; or, with a cause, closed while the call ran and
 * did not wait for it any longer, so whether the call took effect is unknown.
 */
public class QueueClosedException extends QueueException {

    private static final long serialVersionUID = 1L;

    /**
     * Refused because the queue or subscription was already closed; the call did not take effect.
     *
     * @param message what was closed
     */
    public QueueClosedException(String message) {
        super(message);
    }

    /**
     * Given up on because the queue closed while the call ran; whether it took effect is unknown.
     *
     * @param message what was given up on
     * @param cause   the store failure the call met after the queue stopped waiting for it
     */
    public QueueClosedException(String message, Throwable cause) {
        super(message, cause);
    }
}
