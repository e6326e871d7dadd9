package dev.queue.domain.port;

/**
 * The pending or running message {@code id} of the namespace leaves the store without running (again), whoever holds
 * it: its holder's later guarded changes find it gone ({@link dev.queue.api.Outcome#LEASE_LOST}).
 */
public record CancelCommand(String namespace, long id, CommandTime time) {
}
