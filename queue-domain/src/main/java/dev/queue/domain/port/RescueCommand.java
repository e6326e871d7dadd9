package dev.queue.domain.port;

import java.time.Instant;

/**
 * Running messages whose lease ended before now: back to pending (due now, error "lease expired") or, when
 * their attempts reached max attempts, to the dead letters. At most {@code limit} per call; a null namespace
 * means every namespace. {@code expiredSince}, when not null, lets the store leave out leases that ended before it
 * (an earlier pass looked at those); null looks at every expired lease.
 */
public record RescueCommand(String namespace, int limit, CommandTime time, Instant expiredSince) {

    /** A pass over every expired lease. */
    public RescueCommand(String namespace, int limit, CommandTime time) {
        this(namespace, limit, time, null);
    }
}
