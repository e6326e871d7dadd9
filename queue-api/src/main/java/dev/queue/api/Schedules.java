package dev.queue.api;

import java.util.List;
import java.util.Optional;

/**
 * The schedules of one namespace. Next run times are stored, so restarts neither lose nor repeat a fire, and
 * however many replicas tick at once, each due time of each schedule publishes exactly one message.
 *
 * <p>Every method throws {@link UnsupportedCapabilityException} on a queue built without a schedule store,
 * {@link QueueClosedException} once the queue is closed, and {@link StoreUnavailableException} when the store
 * fails. Names follow the naming rule of topics; a bad one is refused with {@link InvalidNameException}.
 */
public interface Schedules {

    /**
     * Creates a schedule, or replaces the one of the same name. Idempotent on the name, so every replica may call
     * it on start. A replaced schedule keeps its paused state, and its next run is computed anew from now.
     *
     * @param schedule the definition, with the message it publishes
     * @return CREATED, UNCHANGED (same definition) or UPDATED (a different one replaced it)
     * @throws InvalidInputException when the schedule is null or breaks a rule: no message, a message with a unique
     *                               key or delay, a cron expression that is invalid or never matches, an end not
     *                               after the start, a time zone the JDK does not know
     */
    ScheduleChange create(Schedule schedule);

    /**
     * Replaces the definition of an existing schedule; its next run is computed anew from now, and a paused
     * schedule stays paused.
     *
     * @param schedule the new definition, under the existing name
     * @throws InvalidInputException      when the schedule is null or breaks a rule, as for {@link #create}
     * @throws ScheduleNotFoundException when no schedule has the name
     */
    void update(Schedule schedule);

    /**
     * Deletes a schedule. Messages it already published are not affected.
     *
     * @param name the schedule's name
     * @return true when deleted; false when no schedule has the name
     */
    boolean delete(String name);

    /**
     * A schedule as it stands.
     *
     * @param name the schedule's name
     * @return the schedule; empty when no schedule has the name
     */
    Optional<ScheduleInfo> get(String name);

    /**
     * Every schedule of the namespace.
     *
     * @return the schedules, ordered by name
     */
    List<ScheduleInfo> list();

    /**
     * Pauses a schedule: it keeps its definition, and nothing fires until resumed. Pausing a paused schedule
     * changes nothing.
     *
     * @param name the schedule's name
     * @throws ScheduleNotFoundException when no schedule has the name
     */
    void pause(String name);

    /**
     * Resumes a paused schedule: it fires again from the first due time after now (what passed while paused is
     * not fired). Resuming a running schedule changes nothing.
     *
     * @param name the schedule's name
     * @throws ScheduleNotFoundException when no schedule has the name
     */
    void resume(String name);

    /**
     * Fires every due schedule of the namespace now; the runtime also does this by itself every
     * {@link QueueOptions#scheduleTickInterval()} unless that is zero.
     *
     * @return one entry per message published (or found holding its key), possibly none
     */
    List<FiredSchedule> tick();
}
