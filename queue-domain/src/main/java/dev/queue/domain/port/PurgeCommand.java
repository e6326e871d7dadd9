package dev.queue.domain.port;

/** Deletes dead letters: the one with {@code id} when not null, else every one of {@code topic} when not null, else all of the namespace. */
public record PurgeCommand(String namespace, Long id, String topic) {
}
