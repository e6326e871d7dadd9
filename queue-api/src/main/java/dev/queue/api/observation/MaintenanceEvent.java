package dev.queue.api.observation;

import dev.queue.api.MessageId;

import java.time.Instant;

/** Something a queue's maintenance did without anyone asking. */
public sealed interface MaintenanceEvent {

    /**
     * The namespace it happened in.
     *
     * @return the namespace name
     */
    String namespace();

    /**
     * Expired leases given back: their workers died or stalled past the lease.
     *
     * @param namespace    the namespace the messages belong to
     * @param requeued     messages pending again, due now
     * @param deadLettered messages that had used their last attempt, now dead letters
     */
    record LeasesRescued(String namespace, int requeued, int deadLettered) implements MaintenanceEvent {
    }

    /**
     * A schedule fired for one due time.
     *
     * @param namespace the schedule's namespace
     * @param schedule  the schedule's name
     * @param dueAt     the due time fired
     * @param messageId the message it published (or the one still holding its unique key, when {@code duplicate})
     * @param duplicate whether the message was a duplicate, so that nothing new was stored
     * @param nextRunAt when it fires next; null when it is done
     */
    record ScheduleFired(String namespace, String schedule, Instant dueAt, MessageId messageId, boolean duplicate,
                         Instant nextRunAt) implements MaintenanceEvent {
    }
}
