package dev.queue.domain.port;

/**
 * Deletes dead letters: the one with {@code id} when not null, else those of {@code topic} when not null, else
 * those of the namespace; at most {@code limit}, lowest ids first.
 */
public record PurgeCommand(String namespace, Long id, String topic, int limit) {
}
