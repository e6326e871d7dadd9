package dev.queue.domain.port;

/** For each published message, in order: its new id, or the id of the pending or running message holding its key. */
public record StoredOutcome(long id, boolean duplicate) {
}
