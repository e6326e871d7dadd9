package dev.queue.api;

import java.util.List;
import java.util.Optional;

/**
 * The schedules of one namespace. Next run times are stored, so restarts neither lose nor repeat a fire, and
 * however many replicas tick at once, each due time of each schedule publishes exactly one message.
 */
public interface Schedules {

    /** Idempotent on the name: CREATED, UNCHANGED (same definition) or UPDATED (a different one replaced it). */
    ScheduleChange create(Schedule schedule);

    /** Replaces the definition of an existing schedule; its next run is computed anew from now. */
    void update(Schedule schedule);

    /** False when no schedule has the name. */
    boolean delete(String name);

    Optional<ScheduleInfo> get(String name);

    /** Ordered by name. */
    List<ScheduleInfo> list();

    /** Keeps the definition; nothing fires until resumed. */
    void pause(String name);

    /** Fires again from the first due time after now (what passed while paused is not fired). */
    void resume(String name);

    /** Fires every due schedule of the namespace now; the runtime also does this by itself. */
    List<FiredSchedule> tick();
}
