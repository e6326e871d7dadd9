package dev.queue.api;

/** A payload was not valid JSON, was too large, or could not be stored as given. */
public class InvalidPayloadException extends InvalidInputException {

    private static final long serialVersionUID = 1L;

    public InvalidPayloadException(Object rejectedValue, String expectation) {
        super("payload", rejectedValue, expectation);
    }
}
