package dev.queue.api;

import java.time.Duration;
import java.time.Instant;

/**
 * Message counts of one topic. {@code completed} counts acknowledged messages since the topic was first used.
 * {@code oldestDueAt} is the due time of the pending message that has waited longest among those due when the
 * stats were read (delayed messages not yet due and retries still in their backoff do not count); null when none
 * is due.
 */
public record TopicStats(String topic, long pending, long running, long completed, long dead, Instant oldestDueAt) {

    /** Counts only, nothing due. */
    public TopicStats(String topic, long pending, long running, long completed, long dead) {
        this(topic, pending, running, completed, dead, null);
    }

    /** How long the longest-waiting due message has waited at {@code now}; zero when none is due. */
    public Duration oldestDueAge(Instant now) {
        InvalidInputException.requireNonNull(now, "now", "an Instant");
        if (oldestDueAt == null || oldestDueAt.isAfter(now)) {
            return Duration.ZERO;
        }
        return Duration.between(oldestDueAt, now);
    }

    public long total() {
        return pending + running + completed + dead;
    }
}
