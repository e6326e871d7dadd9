package dev.queue.api;

/** What {@link Schedules#create(Schedule)} did. */
public enum ScheduleChange {
    /** No schedule had the name: it was stored and its first run computed. */
    CREATED,
    /** The same definition was already stored: nothing changed. */
    UNCHANGED,
    /** A different definition was stored under the name: it was replaced and its next run computed anew. */
    UPDATED
}
