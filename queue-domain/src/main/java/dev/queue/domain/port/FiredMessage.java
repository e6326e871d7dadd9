package dev.queue.domain.port;

import java.time.Instant;

/** One message published by a schedule fire; {@code duplicate} when its unique key was still held. */
public record FiredMessage(String namespace, String name, Instant dueAt, long messageId, boolean duplicate, Instant nextRunAt) {
}
