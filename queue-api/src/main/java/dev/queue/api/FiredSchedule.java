package dev.queue.api;

import java.time.Instant;

/**
 * One message a tick published for a schedule: for which due time, its id, and the schedule's next run.
 *
 * @param name      the schedule's name
 * @param dueAt     the due time this message stands for
 * @param messageId the id of the message published (or of the one still holding its unique key)
 * @param nextRunAt when the schedule fires next; null when it has ended
 */
public record FiredSchedule(String name, Instant dueAt, MessageId messageId, Instant nextRunAt) {
}
