package dev.queue.api;

/** No schedule of that name exists in the namespace. */
public class ScheduleNotFoundException extends QueueException {

    private static final long serialVersionUID = 1L;

    /** The schedule name looked for. */
    private final String name;

    /**
     * No such schedule.
     *
     * @param namespace the namespace looked in
     * @param name      the schedule name looked for
     */
    public ScheduleNotFoundException(String namespace, String name) {
        super("no schedule named \"" + name + "\" in namespace " + namespace);
        this.name = name;
    }

    /**
     * The schedule name looked for.
     *
     * @return the name
     */
    public String name() {
        return name;
    }
}
