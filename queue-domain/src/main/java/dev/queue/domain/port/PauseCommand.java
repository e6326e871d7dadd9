package dev.queue.domain.port;

import java.time.Instant;

/**
 * Pauses or resumes a schedule: sets only the paused flag, the updated time and, when not null, the next run, so a
 * tick committing meanwhile keeps its record of the fire.
 */
public record PauseCommand(ScheduleRef schedule, boolean paused, Instant nextRunAt, Instant updatedAt) {
}
