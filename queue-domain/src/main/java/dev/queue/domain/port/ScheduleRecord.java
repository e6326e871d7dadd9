package dev.queue.domain.port;

import dev.queue.api.MissedRuns;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * A stored schedule: its definition (exactly one of {@code cron} and {@code interval}), the message it
 * publishes, and its durable state. {@code nextRunAt} null means finished (past its end).
 */
public record ScheduleRecord(String namespace, String name, String cron, Duration interval, String timeZone, String topic,
                             String json, Map<String, String> headers, int priority, int maxAttempts, Instant startAt,
                             Instant endAt, MissedRuns missedRuns, boolean paused, Instant nextRunAt, Instant lastRunAt,
                             Instant createdAt, Instant updatedAt) {

    /** True when both describe the same schedule, whatever their state. */
    public boolean sameDefinitionAs(ScheduleRecord other) {
        return namespace.equals(other.namespace) && name.equals(other.name) && java.util.Objects.equals(cron, other.cron)
                && java.util.Objects.equals(interval, other.interval) && timeZone.equals(other.timeZone)
                && topic.equals(other.topic) && json.equals(other.json) && headers.equals(other.headers)
                && priority == other.priority && maxAttempts == other.maxAttempts
                && java.util.Objects.equals(startAt, other.startAt) && java.util.Objects.equals(endAt, other.endAt)
                && missedRuns.equals(other.missedRuns);
    }
}
