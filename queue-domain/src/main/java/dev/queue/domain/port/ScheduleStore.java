package dev.queue.domain.port;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** Durable schedules. Inputs arrive validated; failures surface as {@link dev.queue.api.StoreUnavailableException}. */
public interface ScheduleStore {

    /** False when the namespace already has a schedule of that name (nothing changed). */
    boolean insertSchedule(ScheduleRecord schedule);

    /**
     * Replaces definition, paused flag, next run and updated time of an existing schedule; false when missing.
     * The last run is the ticker's to write and is kept as stored.
     */
    boolean replaceSchedule(ScheduleRecord schedule);

    /**
     * Pauses or resumes: sets only the paused flag, the updated time and, when not null, the next run, so a tick
     * committing meanwhile keeps its record of the fire. False when missing.
     */
    boolean setPaused(String namespace, String name, boolean paused, Instant nextRunAt, Instant updatedAt);

    boolean deleteSchedule(String namespace, String name);

    Optional<ScheduleRecord> findSchedule(String namespace, String name);

    /** Ordered by name. */
    List<ScheduleRecord> listSchedules(String namespace);

    /** Fires due schedules; see {@link FireCommand}. */
    List<FiredMessage> fireDueSchedules(FireCommand command);

    /** The earliest next run of an unpaused schedule (of one namespace, or all when null). */
    Optional<Instant> nextScheduleRunAt(String namespace);
}
