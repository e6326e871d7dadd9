package dev.queue.api;

/** A namespace, topic, worker, header or schedule name broke the naming rule. */
public class InvalidNameException extends InvalidInputException {

    private static final long serialVersionUID = 1L;

    public InvalidNameException(String argument, Object rejectedValue, String expectation) {
        super(argument, rejectedValue, expectation);
    }
}
