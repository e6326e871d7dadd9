package dev.queue.domain.port;

import java.time.Instant;
import java.util.List;

/** Completes each message still held under its lease (running, same token, same namespace); others are untouched. */
public record CompleteCommand(String namespace, List<LeaseRef> leases, Instant now) {
}
