package dev.queue.domain.port;

/** Counts of one namespace, per topic and in total, and per topic the oldest message due at {@code time}. */
public record StatsQuery(String namespace, CommandTime time) {

    /** At the store's own clock. */
    public StatsQuery(String namespace) {
        this(namespace, CommandTime.storeClock());
    }
}
