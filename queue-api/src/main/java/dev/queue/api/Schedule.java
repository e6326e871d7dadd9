package dev.queue.api;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Objects;

/**
 * A recurring message: every due time of a cron expression or a fixed interval, the schedule publishes its
 * message. Immutable; compared by value, so creating the same definition twice is a no-op.
 *
 * <pre>{@code
 * Schedule.cron("cleanup", "*&#47;5 * * * *").publishing(Message.to("maintenance").payload(Map.of("action", "expire")))
 * Schedule.every("sync", Duration.ofHours(2)).publishing(Message.to("data").json("{\"source\":\"upstream\"}"))
 * }</pre>
 *
 * Cron expressions take the Unix form with 5 fields (minute hour day-of-month month day-of-week) or 6 fields
 * with seconds first. They are read in the schedule's time zone (UTC unless set). An interval schedule fires
 * at {@code startAt + k * interval} (k from 0) when a start is given, else at {@code created + k * interval}
 * (k from 1). The message's priority, max attempts and headers are used; its unique key and delay are not:
 * each fire gets the unique key {@code schedule:<name>:<due time>}.
 */
public final class Schedule {

    private final String name;
    private final String cron;
    private final Duration interval;
    private final Message message;
    private final ZoneId timeZone;
    private final Instant startAt;
    private final Instant endAt;
    private final MissedRuns missedRuns;

    private Schedule(String name, String cron, Duration interval, Message message, ZoneId timeZone, Instant startAt,
                     Instant endAt, MissedRuns missedRuns) {
        this.name = name;
        this.cron = cron;
        this.interval = interval;
        this.message = message;
        this.timeZone = timeZone;
        this.startAt = startAt;
        this.endAt = endAt;
        this.missedRuns = missedRuns;
    }

    public static Schedule cron(String name, String expression) {
        return new Schedule(name, expression, null, null, ZoneOffset.UTC, null, null, MissedRuns.fireOnce());
    }

    public static Schedule every(String name, Duration interval) {
        return new Schedule(name, null, interval, null, ZoneOffset.UTC, null, null, MissedRuns.fireOnce());
    }

    /** The message each fire publishes (topic, payload, headers, priority, max attempts). */
    public Schedule publishing(Message value) {
        return new Schedule(name, cron, interval, value, timeZone, startAt, endAt, missedRuns);
    }

    public Schedule timeZone(ZoneId value) {
        return new Schedule(name, cron, interval, message, value, startAt, endAt, missedRuns);
    }

    /** No fire before this instant. */
    public Schedule startAt(Instant value) {
        return new Schedule(name, cron, interval, message, timeZone, value, endAt, missedRuns);
    }

    /** No fire after this instant; the schedule is then finished (kept, with no next run). */
    public Schedule endAt(Instant value) {
        return new Schedule(name, cron, interval, message, timeZone, startAt, value, missedRuns);
    }

    public Schedule missedRuns(MissedRuns value) {
        return new Schedule(name, cron, interval, message, timeZone, startAt, endAt, value);
    }

    public String name() {
        return name;
    }

    /** Null for an interval schedule. */
    public String cron() {
        return cron;
    }

    /** Null for a cron schedule. */
    public Duration interval() {
        return interval;
    }

    public Message message() {
        return message;
    }

    public ZoneId timeZone() {
        return timeZone;
    }

    public Instant startAt() {
        return startAt;
    }

    public Instant endAt() {
        return endAt;
    }

    public MissedRuns missedRuns() {
        return missedRuns;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Schedule other && name.equals(other.name) && Objects.equals(cron, other.cron)
                && Objects.equals(interval, other.interval) && Objects.equals(timeZone, other.timeZone)
                && Objects.equals(startAt, other.startAt) && Objects.equals(endAt, other.endAt)
                && Objects.equals(missedRuns, other.missedRuns);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, cron, interval, timeZone, startAt, endAt, missedRuns);
    }

    @Override
    public String toString() {
        return "Schedule{name=" + name + (cron != null ? ", cron=" + cron : ", every=" + interval) + ", zone=" + timeZone
                + ", message=" + message + '}';
    }
}
