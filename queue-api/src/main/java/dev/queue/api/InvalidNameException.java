package dev.queue.api;

/** A namespace, topic, worker, header or schedule name broke the naming rule. */
public class InvalidNameException extends InvalidInputException {

    private static final long serialVersionUID = 1L;

    /**
     * A name refused.
     *
     * @param argument      which name, for example {@code topic} or {@code header name}
     * @param rejectedValue the name received, possibly null
     * @param expectation   the rule it broke
     */
    public InvalidNameException(String argument, Object rejectedValue, String expectation) {
        super(argument, rejectedValue, expectation);
    }
}
