package dev.queue.api;

/** A payload object could not be encoded to JSON, or JSON could not be decoded to the requested type. */
public class PayloadCodecException extends QueueException {

    private static final long serialVersionUID = 1L;

    /**
     * A codec failure.
     *
     * @param message what could not be encoded or decoded, and why
     * @param cause   the JSON library's exception; null when there is none
     */
    public PayloadCodecException(String message, Throwable cause) {
        super(message, cause);
    }
}
