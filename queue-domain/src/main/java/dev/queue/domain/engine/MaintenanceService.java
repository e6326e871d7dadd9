package dev.queue.domain.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * A periodic job that keeps a queue healthy without anyone asking: the rescue of expired leases, the firing of due
 * schedules, an adapter's own housekeeping. Each pass is bounded (a batch) and says what it did; a
 * {@link MaintenanceRunner} owns the thread, the pauses between passes and the back-off after failures, so a service
 * is only its pass and its validated configuration.
 *
 * @param <R> what one pass reports: counts, and whether more work may be waiting
 */
public interface MaintenanceService<R extends MaintenanceService.Report> {

    /** Names the service in logs and in its thread's name, with the namespace or schema it serves. */
    String name();

    /** The pause between passes that found nothing more to do. */
    Duration interval();

    /**
     * One bounded pass. A failure throws, and the runner tries again after a growing pause; a pass that did part of
     * its work before failing leaves the rest for the next one.
     */
    R runOnce();

    /** What a pass did. */
    interface Report {

        /** The pass stopped at its batch size, so more may be waiting: the runner passes again after a short pause. */
        boolean batchFull();

        /** When more work falls due before the next interval ends, if the service knows (the next due schedule). */
        default Optional<Instant> nextDueAt() {
            return Optional.empty();
        }
    }
}
