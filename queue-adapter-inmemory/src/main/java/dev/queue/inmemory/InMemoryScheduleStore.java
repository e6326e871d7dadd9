package dev.queue.inmemory;

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
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The schedule store of {@link InMemoryQueue}. A fire publishes through the {@link InMemoryMessageStore} under both
 * locks, this store's first, so its messages and the schedule's next run change together.
 */
public final class InMemoryScheduleStore implements ScheduleStore {

    private final InMemoryMessageStore messages;
    private final ReentrantLock lock = new ReentrantLock();
    // Guarded by lock.

    private final Map<ScheduleKey, ScheduleRecord> schedules = new TreeMap<>();

    public InMemoryScheduleStore(InMemoryMessageStore messages) {
        this.messages = Objects.requireNonNull(messages, "messages");
    }

    private record ScheduleKey(String namespace, String name) implements Comparable<ScheduleKey> {
        @Override
        public int compareTo(ScheduleKey o) {
            int byNamespace = namespace.compareTo(o.namespace);
            return byNamespace != 0 ? byNamespace : name.compareTo(o.name);
        }
    }

    @Override
    public boolean scheduleInsertIfAbsent(ScheduleRecord schedule) {
        lock.lock();
        try {
            return schedules.putIfAbsent(new ScheduleKey(schedule.namespace(), schedule.name()), schedule) == null;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public boolean scheduleReplaceIfPresent(ScheduleRecord schedule) {
        lock.lock();
        try {
            ScheduleKey key = new ScheduleKey(schedule.namespace(), schedule.name());
            ScheduleRecord stored = schedules.get(key);
            if (stored == null) {
                return false;
            }
            schedules.put(key, new ScheduleRecord(schedule.namespace(), schedule.name(), schedule.cron(), schedule.interval(),
                    schedule.timeZone(), schedule.topic(), schedule.json(), schedule.headers(), schedule.priority(),
                    schedule.maxAttempts(), schedule.startAt(), schedule.endAt(), schedule.missedRuns(), schedule.paused(),
                    schedule.nextRunAt(), stored.lastRunAt(), stored.createdAt(), schedule.updatedAt()));
            return true;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public boolean schedulePauseIfPresent(PauseCommand command) {
        ScheduleKey key = new ScheduleKey(command.schedule().namespace(), command.schedule().name());
        lock.lock();
        try {
            ScheduleRecord s = schedules.get(key);
            if (s == null) {
                return false;
            }
            schedules.put(key, new ScheduleRecord(s.namespace(), s.name(), s.cron(), s.interval(),
                    s.timeZone(), s.topic(), s.json(), s.headers(), s.priority(), s.maxAttempts(), s.startAt(), s.endAt(),
                    s.missedRuns(), command.paused(), command.nextRunAt() != null ? command.nextRunAt() : s.nextRunAt(),
                    s.lastRunAt(), s.createdAt(), command.updatedAt()));
            return true;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public boolean scheduleDeleteIfPresent(ScheduleRef schedule) {
        lock.lock();
        try {
            return schedules.remove(new ScheduleKey(schedule.namespace(), schedule.name())) != null;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public Optional<ScheduleRecord> scheduleFind(ScheduleRef schedule) {
        lock.lock();
        try {
            return Optional.ofNullable(schedules.get(new ScheduleKey(schedule.namespace(), schedule.name())));
        } finally {
            lock.unlock();
        }
    }

    @Override
    public List<ScheduleRecord> scheduleList(ScheduleQuery query) {
        lock.lock();
        try {
            List<ScheduleRecord> result = new ArrayList<>();
            for (ScheduleRecord record : schedules.values()) {
                if (query.namespace() == null || record.namespace().equals(query.namespace())) {
                    result.add(record);
                }
            }
            return result;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The schedule lock, then the message store's, make plan, publish and advance a single step, so concurrent
     * tickers fire each due time once.
     */
    @Override
    public List<FiredMessage> scheduleFireDue(FireCommand command) {
        lock.lock();
        try {
            return messages.storeUnderLock(command.time(), (now, store) -> {
                List<FiredMessage> fired = new ArrayList<>();
                int handled = 0;
                for (Map.Entry<ScheduleKey, ScheduleRecord> entry : schedules.entrySet()) {
                    ScheduleRecord s = entry.getValue();
                    if (handled >= command.limit()) {
                        break;
                    }
                    if ((command.namespace() != null && !command.namespace().equals(s.namespace())) || s.paused()
                            || s.nextRunAt() == null || s.nextRunAt().isAfter(now)) {
                        continue;
                    }
                    handled++;
                    FirePlan plan = command.planner().plan(s, now);
                    for (int i = 0; i < plan.messages().size(); i++) {
                        StoredOutcome stored = store.apply(plan.messages().get(i));
                        fired.add(new FiredMessage(s.namespace(), s.name(), plan.dueTimes().get(i), stored.id(),
                                stored.duplicate(), plan.nextRunAt()));
                    }
                    entry.setValue(new ScheduleRecord(s.namespace(), s.name(), s.cron(), s.interval(), s.timeZone(), s.topic(),
                            s.json(), s.headers(), s.priority(), s.maxAttempts(), s.startAt(), s.endAt(), s.missedRuns(),
                            s.paused(), plan.nextRunAt(), plan.lastRunAt(), s.createdAt(), s.updatedAt()));
                }
                return fired;
            });
        } finally {
            lock.unlock();
        }
    }

    @Override
    public Optional<Instant> scheduleNextRunAt(ScheduleQuery query) {
        lock.lock();
        try {
            Instant earliest = null;
            for (ScheduleRecord s : schedules.values()) {
                if ((query.namespace() == null || query.namespace().equals(s.namespace())) && !s.paused() && s.nextRunAt() != null
                        && (earliest == null || s.nextRunAt().isBefore(earliest))) {
                    earliest = s.nextRunAt();
                }
            }
            return Optional.ofNullable(earliest);
        } finally {
            lock.unlock();
        }
    }
}
