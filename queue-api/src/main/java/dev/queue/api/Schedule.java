package dev.queue.api;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Objects;

/**
 * A recurring message: every due time of a cron expression or a fixed interval, the schedule publishes its
 * message. Immutable. Creating a schedule whose name, timing and message (topic, payload, headers, priority, max
 * attempts) equal the stored one is a no-op. {@code equals} compares the name and the timing only, because a
 * {@link Message} has no value equality of its own.
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

    /**
     * A schedule that fires at every time a cron expression matches, in UTC unless {@link #timeZone} says
     * otherwise. The expression is checked when the schedule is created: one that is not valid, or never matches,
     * is refused with {@link InvalidInputException}.
     *
     * @param name       the schedule's name, unique in its namespace; the naming rule of topics
     * @param expression 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first
     * @return a schedule without a message yet: give it one with {@link #publishing(Message)}
     */
    public static Schedule cron(String name, String expression) {
        return new Schedule(name, expression, null, null, ZoneOffset.UTC, null, null, MissedRuns.fireOnce());
    }

    /**
     * A schedule that fires every {@code interval}, counted from {@link #startAt} when set, else from when it is
     * created.
     *
     * @param name     the schedule's name, unique in its namespace; the naming rule of topics
     * @param interval 1 s to 365 days
     * @return a schedule without a message yet: give it one with {@link #publishing(Message)}
     */
    public static Schedule every(String name, Duration interval) {
        return new Schedule(name, null, interval, null, ZoneOffset.UTC, null, null, MissedRuns.fireOnce());
    }

    /**
     * The message each fire publishes (topic, payload, headers, priority, max attempts). It must set no unique key,
     * delay or due time, and at most 30 headers: each fire adds two of its own ({@code queue-schedule} and
     * {@code queue-due-at}).
     *
     * @param value the message
     * @return a copy publishing this message
     */
    public Schedule publishing(Message value) {
        return new Schedule(name, cron, interval, value, timeZone, startAt, endAt, missedRuns);
    }

    /**
     * The time zone the cron expression is read in; UTC by default. Has no effect on an interval schedule's due
     * times.
     *
     * @param value a time zone the JDK knows
     * @return a copy with this time zone
     */
    public Schedule timeZone(ZoneId value) {
        return new Schedule(name, cron, interval, message, value, startAt, endAt, missedRuns);
    }

    /**
     * No fire before this instant.
     *
     * @param value an instant between 1970 and 9999; null for none
     * @return a copy with this start
     */
    public Schedule startAt(Instant value) {
        return new Schedule(name, cron, interval, message, timeZone, value, endAt, missedRuns);
    }

    /**
     * No fire after this instant; the schedule is then finished (kept, with no next run).
     *
     * @param value an instant after {@link #startAt} and before 9999; null for none
     * @return a copy with this end
     */
    public Schedule endAt(Instant value) {
        return new Schedule(name, cron, interval, message, timeZone, startAt, value, missedRuns);
    }

    /**
     * What to do with due times that passed while nothing ticked; {@link MissedRuns#fireOnce()} by default.
     *
     * @param value the policy
     * @return a copy with this policy
     */
    public Schedule missedRuns(MissedRuns value) {
        return new Schedule(name, cron, interval, message, timeZone, startAt, endAt, value);
    }

    /**
     * The schedule's name.
     *
     * @return the name
     */
    public String name() {
        return name;
    }

    /**
     * The cron expression.
     *
     * @return the expression; null for an interval schedule
     */
    public String cron() {
        return cron;
    }

    /**
     * The interval.
     *
     * @return the interval; null for a cron schedule
     */
    public Duration interval() {
        return interval;
    }

    /**
     * The message each fire publishes.
     *
     * @return the message; null until {@link #publishing(Message)} sets one
     */
    public Message message() {
        return message;
    }

    /**
     * The time zone the cron expression is read in.
     *
     * @return the time zone
     */
    public ZoneId timeZone() {
        return timeZone;
    }

    /**
     * The first instant a fire may happen.
     *
     * @return the start; null when not set
     */
    public Instant startAt() {
        return startAt;
    }

    /**
     * The last instant a fire may happen.
     *
     * @return the end; null when not set
     */
    public Instant endAt() {
        return endAt;
    }

    /**
     * What happens to due times missed.
     *
     * @return the policy
     */
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
