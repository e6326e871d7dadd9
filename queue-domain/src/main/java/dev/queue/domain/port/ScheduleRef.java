package dev.queue.domain.port;

/** One schedule of a namespace, by name. */
public record ScheduleRef(String namespace, String name) {
}
