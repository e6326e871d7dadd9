package dev.queue.postgres;

import dev.queue.api.MissedRuns;
import dev.queue.domain.port.FireCommand;
import dev.queue.domain.port.FirePlan;
import dev.queue.domain.port.FiredMessage;
import dev.queue.domain.port.PauseCommand;
import dev.queue.domain.port.PublishCommand;
import dev.queue.domain.port.ScheduleQuery;
import dev.queue.domain.port.ScheduleRecord;
import dev.queue.domain.port.ScheduleRef;
import dev.queue.domain.port.ScheduleStore;
import dev.queue.domain.port.StoredOutcome;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The {@link ScheduleStore} on PostgreSQL: one row per schedule in the {@code schedules} table. Firing locks due
 * rows with {@code FOR UPDATE SKIP LOCKED}, asks the domain's planner what to publish, publishes with the message
 * store's statement and stores the next run, all in one transaction: the fleet's tickers fire each due time
 * exactly once, and the published messages wake subscribers when that transaction commits.
 */
final class PostgresScheduleStore implements ScheduleStore {

    private final Sessions sessions;
    private final PostgresMessageStore messages;

    PostgresScheduleStore(PostgresMessageStore messages) {
        this.messages = Objects.requireNonNull(messages, "messages");
        this.sessions = new Sessions(messages.sessions());
    }

    @Override
    public boolean scheduleInsertIfAbsent(ScheduleRecord schedule) {
        Integer inserted = sessions.autoCommit("schedule insert", s -> s.selectOne("queue.insertSchedule", params(schedule)));
        return inserted != null && inserted > 0;
    }

    @Override
    public boolean scheduleReplaceIfPresent(ScheduleRecord schedule) {
        return sessions.autoCommit("schedule update", s -> s.update("queue.replaceSchedule", params(schedule))) > 0;
    }

    @Override
    public boolean schedulePauseIfPresent(PauseCommand command) {
        Map<String, Object> params = new HashMap<>(key(command.schedule()));
        params.put("paused", command.paused());
        params.put("nextRunAt", command.nextRunAt());
        params.put("updatedAt", command.updatedAt());
        return sessions.autoCommit("schedule pause", s -> s.update("queue.setSchedulePaused", params)) > 0;
    }

    @Override
    public boolean scheduleDeleteIfPresent(ScheduleRef schedule) {
        return sessions.autoCommit("schedule delete", s -> s.delete("queue.deleteSchedule", key(schedule))) > 0;
    }

    @Override
    public Optional<ScheduleRecord> scheduleFind(ScheduleRef schedule) {
        Rows.ScheduleRow row = sessions.autoCommit("schedule lookup", s -> s.selectOne("queue.findSchedule", key(schedule)));
        return Optional.ofNullable(row).map(PostgresScheduleStore::toRecord);
    }

    @Override
    public List<ScheduleRecord> scheduleList(ScheduleQuery query) {
        String namespace = query.namespace();
        List<Rows.ScheduleRow> rows = sessions.autoCommit("schedule listing",
                s -> s.selectList("queue.listSchedules", Map.of("namespace", namespace)));
        return rows.stream().map(PostgresScheduleStore::toRecord).toList();
    }

    @Override
    public List<FiredMessage> scheduleFireDue(FireCommand command) {
        Map<String, Object> query = new HashMap<>();
        query.put("namespace", command.namespace());
        query.put("limit", command.limit());
        query.put("now", command.time().givenOrNull());
        return sessions.inTransaction("firing due schedules", session -> {
            List<Rows.ScheduleRow> due = session.selectList("queue.lockDueSchedules", query);
            List<FiredMessage> fired = new ArrayList<>();
            for (Rows.ScheduleRow row : due) {
                ScheduleRecord schedule = toRecord(row);
                Instant now = command.time().resolve(() -> row.dbNow);
                FirePlan plan = command.planner().plan(schedule, now);
                List<StoredOutcome> stored = plan.messages().isEmpty() ? List.of()
                        : messages.publishIn(session, new PublishCommand(plan.messages(), command.time()));
                for (int i = 0; i < stored.size(); i++) {
                    fired.add(new FiredMessage(schedule.namespace(), schedule.name(), plan.dueTimes().get(i),
                            stored.get(i).id(), stored.get(i).duplicate(), plan.nextRunAt()));
                }
                Map<String, Object> run = key(schedule.namespace(), schedule.name());
                run.put("nextRunAt", plan.nextRunAt());
                run.put("lastRunAt", plan.lastRunAt());
                session.update("queue.recordScheduleRun", run);
            }
            return fired;
        });
    }

    @Override
    public Optional<Instant> scheduleNextRunAt(ScheduleQuery query) {
        String namespace = query.namespace();
        Map<String, Object> params = new HashMap<>();
        params.put("namespace", namespace);
        Instant next = sessions.autoCommit("next schedule run", s -> s.selectOne("queue.nextScheduleRunAt", params));
        return Optional.ofNullable(next);
    }

    private static Map<String, Object> key(ScheduleRef schedule) {
        return key(schedule.namespace(), schedule.name());
    }

    private static Map<String, Object> key(String namespace, String name) {
        Map<String, Object> params = new HashMap<>();
        params.put("namespace", namespace);
        params.put("name", name);
        return params;
    }

    private static Map<String, Object> params(ScheduleRecord s) {
        Map<String, Object> params = key(s.namespace(), s.name());
        params.put("cron", s.cron());
        params.put("intervalMicros", s.interval() == null ? null : PostgresMessageStore.micros(s.interval()));
        params.put("timeZone", s.timeZone());
        params.put("topic", s.topic());
        params.put("payload", s.json());
        params.put("headers", HeadersJson.write(s.headers()));
        params.put("priority", s.priority());
        params.put("maxAttempts", s.maxAttempts());
        params.put("startAt", s.startAt());
        params.put("endAt", s.endAt());
        params.put("missedPolicy", s.missedRuns().policy().name());
        params.put("missedBound", s.missedRuns().bound());
        params.put("missedGraceMicros", PostgresMessageStore.micros(s.missedRuns().grace()));
        params.put("paused", s.paused());
        params.put("nextRunAt", s.nextRunAt());
        params.put("lastRunAt", s.lastRunAt());
        params.put("createdAt", s.createdAt());
        params.put("updatedAt", s.updatedAt());
        return params;
    }

    private static ScheduleRecord toRecord(Rows.ScheduleRow row) {
        Duration interval = row.intervalMicros == null ? null : Duration.ofNanos(Math.multiplyExact(row.intervalMicros, 1000L));
        MissedRuns missed = new MissedRuns(MissedRuns.Policy.valueOf(row.missedPolicy), row.missedBound,
                Duration.ofNanos(Math.multiplyExact(row.missedGraceMicros, 1000L)));
        return new ScheduleRecord(row.namespace, row.name, row.cron, interval, row.timeZone, row.topic, row.payload,
                HeadersJson.read(row.headers), row.priority, row.maxAttempts, row.startAt, row.endAt, missed, row.paused,
                row.nextRunAt, row.lastRunAt, row.createdAt, row.updatedAt);
    }
}
