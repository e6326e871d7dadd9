package dev.queue.domain.port;

/** The choice behind a dead letter of a topic of a namespace. */
public record TopicOrderingQuery(String namespace, String topic) {
}
