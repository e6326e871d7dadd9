package dev.queue.domain.port;

import java.time.Duration;
import java.util.List;

/** For each message still held: lease_until = now + {@code lease}. */
public record ExtendCommand(String namespace, List<LeaseRef> leases, Duration lease, CommandTime time) {
}
