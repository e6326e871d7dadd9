package dev.queue.domain.port;

import java.time.Duration;
import java.time.Instant;

/**
 * If still held: back to pending, due after {@code delay}, recording {@code error}; a message whose attempts
 * reached max attempts becomes a dead letter instead.
 */
public record RetryCommand(String namespace, LeaseRef lease, Duration delay, String error, Instant now) {
}
