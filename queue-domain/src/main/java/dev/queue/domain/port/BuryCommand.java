package dev.queue.domain.port;

import java.time.Instant;

/** If still held: the message becomes a dead letter with {@code error} as its last error. */
public record BuryCommand(String namespace, LeaseRef lease, String error, Instant now) {
}
