package dev.queue.domain.port;

import java.time.Instant;
import java.util.List;

/**
 * What firing one due schedule does: publish {@code messages} (one per due time in {@code dueTimes}, same
 * order; possibly none when missed runs are skipped) and store {@code nextRunAt} (null: finished) and
 * {@code lastRunAt}, all in one transaction.
 */
public record FirePlan(List<NewMessage> messages, List<Instant> dueTimes, Instant nextRunAt, Instant lastRunAt) {
}
