package dev.queue.api;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * A stored schedule as it stands. {@code nextRunAt} is null when the schedule has ended; a paused schedule
 * keeps its definition and does not fire.
 *
 * @param namespace   the namespace
 * @param name        the schedule's name
 * @param cron        the cron expression; null for an interval schedule
 * @param interval    the interval; null for a cron schedule
 * @param timeZone    the time zone id the cron expression is read in
 * @param topic       the topic of the message each fire publishes
 * @param json        that message's payload as JSON text
 * @param headers     that message's headers
 * @param priority    that message's priority
 * @param maxAttempts that message's attempt limit
 * @param startAt     no fire before this; null when not set
 * @param endAt       no fire after this; null when not set
 * @param missedRuns  what happens to due times missed
 * @param paused      whether the schedule is paused
 * @param nextRunAt   the next due time; null when the schedule has ended
 * @param lastRunAt   the due time last fired; null when it never fired
 * @param createdAt   when the schedule was created
 * @param updatedAt   when its definition or state last changed
 */
public record ScheduleInfo(String namespace, String name, String cron, Duration interval, String timeZone, String topic,
                           String json, Map<String, String> headers, int priority, int maxAttempts, Instant startAt,
                           Instant endAt, MissedRuns missedRuns, boolean paused, Instant nextRunAt, Instant lastRunAt,
                           Instant createdAt, Instant updatedAt) {
}
