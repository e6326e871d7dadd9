package dev.queue.domain.port;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Durable schedules. Names are noun first and carry their precondition; each method takes one parameter record.
 * Inputs arrive validated; failures surface as {@link dev.queue.api.StoreUnavailableException}.
 */
public interface ScheduleStore {

    /** False when the namespace already has a schedule of that name (nothing changed). */
    boolean scheduleInsertIfAbsent(ScheduleRecord schedule);

    /**
     * Replaces definition, paused flag, next run and updated time of an existing schedule; false when missing.
     * The last run is the ticker's to write and is kept as stored.
     */
    boolean scheduleReplaceIfPresent(ScheduleRecord schedule);

    /** See {@link PauseCommand}; false when missing. */
    boolean schedulePauseIfPresent(PauseCommand command);

    boolean scheduleDeleteIfPresent(ScheduleRef schedule);

    Optional<ScheduleRecord> scheduleFind(ScheduleRef schedule);

    /** Ordered by name. */
    List<ScheduleRecord> scheduleList(ScheduleQuery query);

    /** Fires due schedules; see {@link FireCommand}. */
    List<FiredMessage> scheduleFireDue(FireCommand command);

    /** The earliest next run of an unpaused schedule of the query's namespace (or of all). */
    Optional<Instant> scheduleNextRunAt(ScheduleQuery query);
}
