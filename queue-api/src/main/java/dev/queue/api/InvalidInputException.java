package dev.queue.api;

/**
 * An argument broke a rule. The message says which argument, what was received and what was expected;
 * nothing was stored or changed.
 */
public class InvalidInputException extends QueueException {

    private static final long serialVersionUID = 1L;

    private final String argument;
    private final transient Object rejectedValue;

    public InvalidInputException(String argument, Object rejectedValue, String expectation) {
        super("invalid " + argument + ": expected " + expectation + ", got: " + describe(rejectedValue));
        this.argument = argument;
        this.rejectedValue = rejectedValue;
    }

    /** The name of the argument that broke a rule, for example {@code topic} or {@code maxAttempts}. */
    public String argument() {
        return argument;
    }

    /** The value received, as given. */
    public Object rejectedValue() {
        return rejectedValue;
    }

    static String describe(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof CharSequence text) {
            String shown = text.length() > 200 ? text.subSequence(0, 200) + "...(" + text.length() + " chars)" : text.toString();
            return '"' + shown.replace("\n", "\\n").replace("\r", "\\r").replace("\u0000", "\\u0000") + '"';
        }
        return String.valueOf(value);
    }
}
