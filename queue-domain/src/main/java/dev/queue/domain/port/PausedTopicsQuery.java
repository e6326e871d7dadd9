package dev.queue.domain.port;

/** The paused topics of a namespace. */
public record PausedTopicsQuery(String namespace) {
}
