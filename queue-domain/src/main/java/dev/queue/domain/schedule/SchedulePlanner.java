package dev.queue.domain.schedule;

import dev.queue.api.MissedRuns;
import dev.queue.domain.port.FirePlan;
import dev.queue.domain.port.FirePlanner;
import dev.queue.domain.port.NewMessage;
import dev.queue.domain.port.ScheduleRecord;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The pure rules of a schedule: its due times, what a tick fires under each missed-runs policy, and the unique
 * key of each fired message ({@code schedule:<name>:<due time>}), which makes a second publication of the
 * same due time a duplicate even if two tickers ever raced past the row lock.
 */
public final class SchedulePlanner implements FirePlanner {

    public static final String HEADER_SCHEDULE = "queue-schedule";
    public static final String HEADER_DUE_AT = "queue-due-at";

    /** The due times of a stored schedule. */
    public static DueTimes dueTimes(ScheduleRecord s) {
        if (s.cron() != null) {
            return DueTimes.cron(s.cron(), ZoneId.of(s.timeZone()), s.startAt(), s.endAt());
        }
        Instant anchor = s.startAt() != null ? s.startAt() : s.createdAt();
        return DueTimes.interval(anchor, s.interval(), s.startAt() != null ? 0 : 1, s.startAt(), s.endAt());
    }

    /** The first run of a new or replaced schedule: the first due time at or after now. */
    public static Instant firstRun(ScheduleRecord s, Instant now) {
        return dueTimes(s).firstAfter(now.minusNanos(1000));
    }

    /** The next run after a resume: what passed while paused is not fired. */
    public static Instant nextRunAfter(ScheduleRecord s, Instant now) {
        return dueTimes(s).firstAfter(now);
    }

    @Override
    public FirePlan plan(ScheduleRecord s, Instant now) {
        DueTimes times = dueTimes(s);
        Instant next = times.firstAfter(now);
        if (s.nextRunAt() == null || s.nextRunAt().isAfter(now)) {
            return new FirePlan(List.of(), List.of(), s.nextRunAt(), s.lastRunAt());
        }
        Instant latest = times.latestAtOrBefore(now);
        List<Instant> due = new ArrayList<>();
        MissedRuns missed = s.missedRuns();
        if (latest != null && !latest.isBefore(s.nextRunAt())) {
            switch (missed.policy()) {
                case FIRE_ONCE -> due.add(latest);
                case SKIP -> {
                    if (!latest.isBefore(now.minus(missed.grace()))) {
                        due.add(latest);
                    }
                }
                case FIRE_EACH -> {
                    Instant t = latest;
                    while (t != null && !t.isBefore(s.nextRunAt()) && due.size() < missed.bound()) {
                        due.add(t);
                        t = times.latestAtOrBefore(t.minusNanos(1000));
                    }
                    Collections.reverse(due);
                }
                default -> throw new IllegalStateException("unknown missed-runs policy " + missed.policy());
            }
        }
        List<NewMessage> messages = new ArrayList<>(due.size());
        for (Instant dueAt : due) {
            messages.add(messageFor(s, dueAt));
        }
        Instant lastRun = due.isEmpty() ? s.lastRunAt() : due.get(due.size() - 1);
        return new FirePlan(messages, due, next, lastRun);
    }

    private static NewMessage messageFor(ScheduleRecord s, Instant dueAt) {
        Map<String, String> headers = new LinkedHashMap<>(s.headers());
        headers.put(HEADER_SCHEDULE, s.name());
        headers.put(HEADER_DUE_AT, dueAt.toString());
        return new NewMessage(s.namespace(), s.topic(), s.json(), Map.copyOf(headers), s.priority(), s.maxAttempts(),
                uniqueKey(s.name(), dueAt), null, Duration.ZERO);
    }

    public static String uniqueKey(String scheduleName, Instant dueAt) {
        return "schedule:" + scheduleName + ":" + dueAt;
    }
}
