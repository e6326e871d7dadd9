package dev.queue.api;

/** The queue, or the subscription, was closed before the call. */
public class QueueClosedException extends QueueException {

    private static final long serialVersionUID = 1L;

    public QueueClosedException(String message) {
        super(message);
    }
}
