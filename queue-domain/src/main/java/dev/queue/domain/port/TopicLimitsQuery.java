package dev.queue.domain.port;

/** The limited topics of a namespace. */
public record TopicLimitsQuery(String namespace) {
}
