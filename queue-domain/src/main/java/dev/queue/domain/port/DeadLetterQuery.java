package dev.queue.domain.port;

/** Dead letters of a namespace (and of one topic when not null) with id greater than {@code afterId}, oldest first. */
public record DeadLetterQuery(String namespace, String topic, long afterId, int limit) {
}
