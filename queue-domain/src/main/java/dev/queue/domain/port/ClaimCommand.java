package dev.queue.domain.port;

import java.time.Duration;
import java.util.List;

/**
 * Leases up to {@code limit} due pending messages of the namespace, topics in the order given, then by
 * priority, due time and id. Each claimed message gets state running, attempts + 1, the worker, the lease
 * token, and lease_until = now + lease.
 */
public record ClaimCommand(String namespace, List<String> topics, String worker, int limit, Duration lease,
                           long leaseToken, CommandTime time) {
}
