package dev.queue.api;

import java.time.Instant;

/** One message a tick published for a schedule: for which due time, its id, and the schedule's next run. */
public record FiredSchedule(String name, Instant dueAt, MessageId messageId, Instant nextRunAt) {
}
