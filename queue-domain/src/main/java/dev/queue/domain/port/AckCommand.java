package dev.queue.domain.port;

import java.util.List;

/** Acknowledges each message still held under its lease (running, same token, same namespace); others are untouched. */
public record AckCommand(String namespace, List<LeaseRef> leases, CommandTime time) {
}
