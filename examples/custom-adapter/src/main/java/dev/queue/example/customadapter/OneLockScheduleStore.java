package dev.queue.example.customadapter;

import dev.queue.domain.port.FireCommand;
import dev.queue.domain.port.FirePlan;
import dev.queue.domain.port.FiredMessage;
import dev.queue.domain.port.PauseCommand;
import dev.queue.domain.port.ScheduleQuery;
import dev.queue.domain.port.ScheduleRecord;
import dev.queue.domain.port.ScheduleRef;
import dev.queue.domain.port.ScheduleStore;
import dev.queue.domain.port.StoredOutcome;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The schedules of the example, a sorted map guarded by the message store's lock (the one lock of the adapter):
 * a fire plans, publishes and stores the next run while holding it, so concurrent tickers fire each due time once
 * and a schedule's messages never show without its next run.
 */
final class OneLockScheduleStore implements ScheduleStore {

    private final OneLockMessageStore messages;
    /** By namespace, then name: the order lists are promised in. Guarded by the message store's lock. */
    private final TreeMap<ScheduleKey, ScheduleRecord> schedules = new TreeMap<>();

    OneLockScheduleStore(OneLockMessageStore messages) {
        this.messages = Objects.requireNonNull(messages, "messages");
    }

    private static ScheduleKey key(String namespace, String name) {
        return new ScheduleKey(namespace, name);
    }

    private record ScheduleKey(String namespace, String name) implements Comparable<ScheduleKey> {
        @Override
        public int compareTo(ScheduleKey other) {
            int byNamespace = namespace.compareTo(other.namespace);
            return byNamespace != 0 ? byNamespace : name.compareTo(other.name);
        }
    }

    @Override
    public boolean scheduleInsertIfAbsent(ScheduleRecord schedule) {
        return messages.locked(() -> schedules.putIfAbsent(key(schedule.namespace(), schedule.name()), schedule) == null);
    }

    @Override
    public boolean scheduleReplaceIfPresent(ScheduleRecord schedule) {
        return messages.locked(() -> {
            ScheduleRecord stored = schedules.get(key(schedule.namespace(), schedule.name()));
            if (stored == null) {
                return false;
            }
            // the last run is the ticker's to write, and the creation time stays
            schedules.put(key(schedule.namespace(), schedule.name()), withState(schedule, schedule.paused(),
                    schedule.nextRunAt(), stored.lastRunAt(), stored.createdAt(), schedule.updatedAt()));
            return true;
        });
    }

    @Override
    public boolean schedulePauseIfPresent(PauseCommand command) {
        ScheduleKey key = key(command.schedule().namespace(), command.schedule().name());
        return messages.locked(() -> {
            ScheduleRecord stored = schedules.get(key);
            if (stored == null) {
                return false;
            }
            Instant nextRunAt = command.nextRunAt() != null ? command.nextRunAt() : stored.nextRunAt();
            schedules.put(key, withState(stored, command.paused(), nextRunAt, stored.lastRunAt(), stored.createdAt(),
                    command.updatedAt()));
            return true;
        });
    }

    @Override
    public boolean scheduleDeleteIfPresent(ScheduleRef schedule) {
        return messages.locked(() -> schedules.remove(key(schedule.namespace(), schedule.name())) != null);
    }

    @Override
    public Optional<ScheduleRecord> scheduleFind(ScheduleRef schedule) {
        return messages.locked(() -> Optional.ofNullable(schedules.get(key(schedule.namespace(), schedule.name()))));
    }

    @Override
    public List<ScheduleRecord> scheduleList(ScheduleQuery query) {
        return messages.locked(() -> schedules.values().stream()
                .filter(schedule -> query.namespace() == null || query.namespace().equals(schedule.namespace()))
                .toList());
    }

    @Override
    public List<FiredMessage> scheduleFireDue(FireCommand command) {
        return messages.storing(command.time(), (now, store) -> {
            List<FiredMessage> fired = new ArrayList<>();
            List<ScheduleRecord> due = schedules.values().stream()
                    .filter(schedule -> (command.namespace() == null || command.namespace().equals(schedule.namespace()))
                            && !schedule.paused() && schedule.nextRunAt() != null && !schedule.nextRunAt().isAfter(now))
                    .limit(Math.max(0, command.limit()))
                    .toList();
            for (ScheduleRecord schedule : due) {
                FirePlan plan = command.planner().plan(schedule, now);
                for (int i = 0; i < plan.messages().size(); i++) {
                    StoredOutcome stored = store.apply(plan.messages().get(i));
                    fired.add(new FiredMessage(schedule.namespace(), schedule.name(), plan.dueTimes().get(i), stored.id(),
                            stored.duplicate(), plan.nextRunAt()));
                }
                schedules.put(key(schedule.namespace(), schedule.name()), withState(schedule, schedule.paused(),
                        plan.nextRunAt(), plan.lastRunAt(), schedule.createdAt(), schedule.updatedAt()));
            }
            return fired;
        });
    }

    @Override
    public Optional<Instant> scheduleNextRunAt(ScheduleQuery query) {
        return messages.locked(() -> schedules.values().stream()
                .filter(schedule -> (query.namespace() == null || query.namespace().equals(schedule.namespace()))
                        && !schedule.paused() && schedule.nextRunAt() != null)
                .map(ScheduleRecord::nextRunAt)
                .min(Comparator.naturalOrder()));
    }

    /** {@code definition}'s definition with the given state. */
    private static ScheduleRecord withState(ScheduleRecord definition, boolean paused, Instant nextRunAt, Instant lastRunAt,
                                            Instant createdAt, Instant updatedAt) {
        ScheduleRecord d = definition;
        return new ScheduleRecord(d.namespace(), d.name(), d.cron(), d.interval(), d.timeZone(), d.topic(), d.json(),
                d.headers(), d.priority(), d.maxAttempts(), d.startAt(), d.endAt(), d.missedRuns(), paused, nextRunAt,
                lastRunAt, createdAt, updatedAt);
    }
}
