package dev.queue.domain.port;

/** If still held: the message becomes a dead letter with {@code error} as its last error. */
public record DeadLetterCommand(String namespace, LeaseRef lease, String error, CommandTime time) {
}
