package dev.queue.domain.port;

/** Schedules of one namespace, or of every namespace when {@code namespace} is null. */
public record ScheduleQuery(String namespace) {

    public static ScheduleQuery allNamespaces() {
        return new ScheduleQuery(null);
    }
}
