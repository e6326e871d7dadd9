package dev.queue.domain.port;

import java.time.Duration;
import java.time.Instant;

/**
 * If still held: back to pending, due at {@code runAt} when not null (a time past means now), else {@code delay}
 * after the command's time; the attempt the claim counted taken back, no error recorded.
 */
public record SnoozeCommand(String namespace, LeaseRef lease, Duration delay, Instant runAt, CommandTime time) {
}
