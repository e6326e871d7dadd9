package dev.queue.domain.port;

import java.time.Duration;

/**
 * If still held: back to pending, due after {@code delay}, recording {@code error}. The domain decided it may run
 * again ({@link dev.queue.domain.rules.Lifecycle}); the store does not look at its attempts.
 */
public record RetryCommand(String namespace, LeaseRef lease, Duration delay, String error, CommandTime time) {
}
