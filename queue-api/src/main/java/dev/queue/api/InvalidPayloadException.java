package dev.queue.api;

/** A payload was not valid JSON, was too large, or could not be stored as given. */
public class InvalidPayloadException extends InvalidInputException {

    private static final long serialVersionUID = 1L;

    /**
     * A payload refused; the argument is named {@code payload}.
     *
     * @param rejectedValue the payload received (its size or class when the text itself would not help)
     * @param expectation   what a valid payload looks like
     */
    public InvalidPayloadException(Object rejectedValue, String expectation) {
        super("payload", rejectedValue, expectation);
    }
}
