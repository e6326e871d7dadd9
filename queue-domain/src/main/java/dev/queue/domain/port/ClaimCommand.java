package dev.queue.domain.port;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Leases up to {@code limit} due pending messages of the namespace, topics in the order given, then by
 * priority, due time and id. Each claimed message gets state running, attempts + 1, the worker, the lease
 * token, and lease_until = now + lease.
 *
 * <p>{@code after} names, for some topics, the position of the claimer's last claim there: the store may leave out
 * messages of that topic ordered after the head but not after the position, at the same priority or a later one
 * (messages of an earlier priority are always looked at). The claimer looks from the head again now and then, for
 * messages that became visible behind its position. A store may ignore it. For the topics in {@code behind} the
 * claim looks only behind the position (from the head up to and including it): a sweep for messages that turned up
 * behind, which leaves alone the part of the order other claimers are working through; the next claim resumes.
 */
public record ClaimCommand(String namespace, List<String> topics, String worker, int limit, Duration lease,
                           long leaseToken, CommandTime time, Map<String, ClaimPosition> after, Set<String> behind) {

    public ClaimCommand {
        after = Map.copyOf(Objects.requireNonNull(after, "after"));
        behind = Set.copyOf(Objects.requireNonNull(behind, "behind"));
    }

    /** A claim resuming after the given positions, looking behind none of them. */
    public ClaimCommand(String namespace, List<String> topics, String worker, int limit, Duration lease, long leaseToken,
                        CommandTime time, Map<String, ClaimPosition> after) {
        this(namespace, topics, worker, limit, lease, leaseToken, time, after, Set.of());
    }

    /** A claim from the head of every topic. */
    public ClaimCommand(String namespace, List<String> topics, String worker, int limit, Duration lease, long leaseToken,
                        CommandTime time) {
        this(namespace, topics, worker, limit, lease, leaseToken, time, Map.of(), Set.of());
    }
}
