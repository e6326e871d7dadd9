package dev.queue.domain.port;

/** Who holds a message: its id and the token of the claim that leased it. */
public record LeaseRef(long id, long leaseToken) {
}
