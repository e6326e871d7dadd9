package dev.queue.api;

/**
 * An argument broke a rule. The message says which argument, what was received and what was expected;
 * nothing was stored or changed.
 */
public class InvalidInputException extends QueueException {

    private static final long serialVersionUID = 1L;

    /** The name of the argument that broke a rule. */
    private final String argument;
    private final transient Object rejectedValue;

    /**
     * An argument refused, with a message of the form {@code invalid <argument>: expected <expectation>, got:
     * <value>}; text values are shown quoted, cut after 200 characters, with line breaks, NUL and unpaired
     * surrogates escaped.
     *
     * @param argument      the name of the argument, for example {@code topic}
     * @param rejectedValue the value received, possibly null
     * @param expectation   what a valid value looks like
     */
    public InvalidInputException(String argument, Object rejectedValue, String expectation) {
        super("invalid " + argument + ": expected " + expectation + ", got: " + describe(rejectedValue));
        this.argument = argument;
        this.rejectedValue = rejectedValue;
    }

    /**
     * {@code value} when it is not null; otherwise this exception, naming the argument and what was expected. The
     * API's own null checks, so a null is refused like any other bad value instead of as a bare NullPointerException.
     *
     * @param value       the value to check
     * @param argument    the name of the argument, for the message
     * @param expectation what a valid value looks like, for the message
     * @param <T>         the value's type
     * @return {@code value}, never null
     * @throws InvalidInputException when {@code value} is null
     */
    public static <T> T requireNonNull(T value, String argument, String expectation) {
        if (value == null) {
            throw new InvalidInputException(argument, null, expectation);
        }
        return value;
    }

    /**
     * The name of the argument that broke a rule, for example {@code topic} or {@code maxAttempts}.
     *
     * @return the argument's name
     */
    public String argument() {
        return argument;
    }

    /**
     * The value received, as given. Not serialized: null in a deserialized exception.
     *
     * @return the rejected value, possibly null
     */
    public Object rejectedValue() {
        return rejectedValue;
    }

    static String describe(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof CharSequence text) {
            String shown = text.length() > 200 ? text.subSequence(0, 200) + "...(" + text.length() + " chars)" : text.toString();
            return '"' + escaped(shown) + '"';
        }
        return String.valueOf(value);
    }

    /** Line breaks, NUL and unpaired surrogates written as escapes, so the message shows what was received. */
    private static String escaped(String text) {
        StringBuilder out = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean paired = Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1));
            if (c == '\n') {
                out.append("\\n");
            } else if (c == '\r') {
                out.append("\\r");
            } else if (c == '\u0000' || (Character.isSurrogate(c) && !paired)) {
                out.append(String.format("\\u%04X", (int) c));
            } else {
                out.append(c);
                if (paired) {
                    out.append(text.charAt(++i));
                }
            }
        }
        return out.toString();
    }
}
