package dev.queue.domain.port;

/** Counts of one namespace, per topic and in total. */
public record StatsQuery(String namespace) {
}
