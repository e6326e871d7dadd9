package dev.queue.spring;

/** A {@code queue.*} property the queue cannot honour; the application fails to start with it. */
public class InvalidQueuePropertyException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final String property;
    private final transient Object value;

    public InvalidQueuePropertyException(String property, Object value, String expectation, Throwable cause) {
        super("invalid property " + property + ": got " + value + ", expected " + expectation, cause);
        this.property = property;
        this.value = value;
    }

    /** The property's full name, e.g. {@code queue.notify-window}. */
    public String property() {
        return property;
    }

    public Object value() {
        return value;
    }
}
