package dev.queue.spring;

/** A {@code queue.*} property the queue cannot honour; the application fails to start with it. */
public class InvalidQueuePropertyException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    /** The property's full name. */
    private final String property;
    private final transient Object value;

    /**
     * A property refused, with a message naming it, the value received and what was expected.
     *
     * @param property    the property's full name, for example {@code queue.notify-window}
     * @param value       the value received
     * @param expectation what a valid value looks like
     * @param cause       the check that refused it; may be null
     */
    public InvalidQueuePropertyException(String property, Object value, String expectation, Throwable cause) {
        super("invalid property " + property + ": got " + value + ", expected " + expectation, cause);
        this.property = property;
        this.value = value;
    }

    /**
     * The property's full name, e.g. {@code queue.notify-window}.
     *
     * @return the property name
     */
    public String property() {
        return property;
    }

    /**
     * The value received. Not serialized: null in a deserialized exception.
     *
     * @return the rejected value, possibly null
     */
    public Object value() {
        return value;
    }
}
