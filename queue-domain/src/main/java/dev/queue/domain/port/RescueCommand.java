package dev.queue.domain.port;


/**
 * Running messages whose lease ended before now: back to pending (due now, error "lease expired") or, when
 * their attempts reached max attempts, to the dead letters. At most {@code limit} per call; a null namespace
 * means every namespace.
 */
public record RescueCommand(String namespace, int limit, CommandTime time) {
}
