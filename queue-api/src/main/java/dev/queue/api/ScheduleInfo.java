package dev.queue.api;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * A stored schedule as it stands. {@code nextRunAt} is null when the schedule has ended; a paused schedule
 * keeps its definition and does not fire.
 */
public record ScheduleInfo(String namespace, String name, String cron, Duration interval, String timeZone, String topic,
                           String json, Map<String, String> headers, int priority, int maxAttempts, Instant startAt,
                           Instant endAt, MissedRuns missedRuns, boolean paused, Instant nextRunAt, Instant lastRunAt,
                           Instant createdAt, Instant updatedAt) {
}
