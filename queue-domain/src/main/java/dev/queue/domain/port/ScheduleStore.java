package dev.queue.domain.port;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** Durable schedules. Inputs arrive validated; failures surface as {@link dev.queue.api.StoreUnavailableException}. */
public interface ScheduleStore {

    /** False when the namespace already has a schedule of that name (nothing changed). */
    boolean insertSchedule(ScheduleRecord schedule);

    /** Replaces definition, paused flag, next and last run and updated time of an existing schedule; false when missing. */
    boolean replaceSchedule(ScheduleRecord schedule);

    boolean deleteSchedule(String namespace, String name);

    Optional<ScheduleRecord> findSchedule(String namespace, String name);

    /** Ordered by name. */
    List<ScheduleRecord> listSchedules(String namespace);

    /** Fires due schedules; see {@link FireCommand}. */
    List<FiredMessage> fireDueSchedules(FireCommand command);

    /** The earliest next run of an unpaused schedule (of one namespace, or all when null). */
    Optional<Instant> nextScheduleRunAt(String namespace);
}
