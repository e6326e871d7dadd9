package dev.queue.domain.port;

import java.util.List;

/**
 * For each message still held whose handler never started: back to pending with its due time unchanged,
 * lease cleared, and the attempt the claim counted taken back.
 */
public record ReleaseCommand(String namespace, List<LeaseRef> leases, CommandTime time) {
}
