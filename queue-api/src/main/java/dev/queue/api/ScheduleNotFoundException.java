package dev.queue.api;

/** No schedule of that name exists in the namespace. */
public class ScheduleNotFoundException extends QueueException {

    private static final long serialVersionUID = 1L;

    private final String name;

    public ScheduleNotFoundException(String namespace, String name) {
        super("no schedule named \"" + name + "\" in namespace " + namespace);
        this.name = name;
    }

    public String name() {
        return name;
    }
}
