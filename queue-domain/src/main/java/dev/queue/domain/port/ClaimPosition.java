package dev.queue.domain.port;

import java.time.Instant;
import java.util.Objects;

/**
 * A place in a topic's claim order (priority, then due time, then id): the last message a claimer took from it.
 * Every message ordered before it was claimed, or was not visible yet, when the claimer passed by; a store may
 * start the next claim there instead of at the head, where a database keeps entries of messages already claimed
 * until no transaction can see them any more.
 */
public record ClaimPosition(int priority, Instant runAt, long id) implements Comparable<ClaimPosition> {

    public ClaimPosition {
        Objects.requireNonNull(runAt, "runAt");
    }

    @Override
    public int compareTo(ClaimPosition other) {
        int byPriority = Integer.compare(priority, other.priority);
        if (byPriority != 0) {
            return byPriority;
        }
        int byRunAt = runAt.compareTo(other.runAt);
        return byRunAt != 0 ? byRunAt : Long.compare(id, other.id);
    }
}
