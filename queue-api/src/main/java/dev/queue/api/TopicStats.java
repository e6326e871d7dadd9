package dev.queue.api;

import java.time.Duration;
import java.time.Instant;

/**
 * Message counts of one topic. {@code completed} counts acknowledged messages since the topic was first used.
 * {@code oldestDueAt} is the due time of the pending message that has waited longest among those due when the
 * stats were read (delayed messages not yet due and retries still in their backoff do not count); null when none
 * is due.
 *
 * @param topic       the topic
 * @param pending     messages waiting: due, delayed or waiting for a retry
 * @param running     messages leased to a worker
 * @param completed   messages acknowledged since the topic was first used
 * @param dead        dead letters
 * @param oldestDueAt the due time of the longest-waiting due message; null when none is due
 */
public record TopicStats(String topic, long pending, long running, long completed, long dead, Instant oldestDueAt) {

    /**
     * Counts only, nothing due.
     *
     * @param topic     the topic
     * @param pending   messages waiting
     * @param running   messages leased to a worker
     * @param completed messages acknowledged
     * @param dead      dead letters
     */
    public TopicStats(String topic, long pending, long running, long completed, long dead) {
        this(topic, pending, running, completed, dead, null);
    }

    /**
     * How long the longest-waiting due message has waited at {@code now}: the topic's lag.
     *
     * @param now the time to measure at, usually the queue's clock
     * @return the wait; zero when none is due
     * @throws InvalidInputException when {@code now} is null
     */
    public Duration oldestDueAge(Instant now) {
        InvalidInputException.requireNonNull(now, "now", "an Instant");
        if (oldestDueAt == null || oldestDueAt.isAfter(now)) {
            return Duration.ZERO;
        }
        return Duration.between(oldestDueAt, now);
    }

    /**
     * All messages counted, in every state.
     *
     * @return pending + running + completed + dead
     */
    public long total() {
        return pending + running + completed + dead;
    }
}
