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
import java.util.List;
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
        return sessions.asActor("schedule insert", ScheduleMapper.class, m -> m.insertSchedule(row(schedule)));
    }

    @Override
    public boolean scheduleReplaceIfPresent(ScheduleRecord schedule) {
        return sessions.asActor("schedule update", ScheduleMapper.class, m -> m.replaceSchedule(row(schedule)));
    }

    @Override
    public boolean schedulePauseIfPresent(PauseCommand command) {
        ScheduleRef schedule = command.schedule();
        return sessions.asActor("schedule pause", ScheduleMapper.class, m -> m.setSchedulePaused(schedule.namespace(),
                schedule.name(), command.paused(), command.nextRunAt(), command.updatedAt()));
    }

    @Override
    public boolean scheduleDeleteIfPresent(ScheduleRef schedule) {
        return sessions.asActor("schedule delete", ScheduleMapper.class,
                m -> m.deleteSchedule(schedule.namespace(), schedule.name()));
    }

    @Override
    public Optional<ScheduleRecord> scheduleFind(ScheduleRef schedule) {
        ScheduleMapper.Row row = sessions.autoCommit("schedule lookup", ScheduleMapper.class,
                m -> m.findSchedule(schedule.namespace(), schedule.name()));
        return Optional.ofNullable(row).map(PostgresScheduleStore::toRecord);
    }

    @Override
    public List<ScheduleRecord> scheduleList(ScheduleQuery query) {
        String namespace = query.namespace();
        List<ScheduleMapper.Row> rows = sessions.autoCommit("schedule listing", ScheduleMapper.class,
                m -> m.listSchedules(namespace));
        return rows.stream().map(PostgresScheduleStore::toRecord).toList();
    }

    @Override
    public List<FiredMessage> scheduleFireDue(FireCommand command) {
        return sessions.inTransaction("firing due schedules", session -> {
            ScheduleMapper mapper = session.getMapper(ScheduleMapper.class);
            List<ScheduleMapper.Row> due = mapper.lockDueSchedules(command.namespace(), command.limit(),
                    command.time().givenOrNull());
            List<FiredMessage> fired = new ArrayList<>();
            for (ScheduleMapper.Row row : due) {
                ScheduleRecord schedule = toRecord(row);
                Instant now = command.time().resolve(row::dbNow);
                FirePlan plan = command.planner().plan(schedule, now);
                List<StoredOutcome> stored = plan.messages().isEmpty() ? List.of()
                        : messages.publishIn(session, new PublishCommand(plan.messages(), command.time()));
                for (int i = 0; i < stored.size(); i++) {
                    fired.add(new FiredMessage(schedule.namespace(), schedule.name(), plan.dueTimes().get(i),
                            stored.get(i).id(), stored.get(i).duplicate(), plan.nextRunAt()));
                }
                mapper.recordScheduleRun(schedule.namespace(), schedule.name(), plan.nextRunAt(), plan.lastRunAt());
            }
            return fired;
        });
    }

    @Override
    public Optional<Instant> scheduleNextRunAt(ScheduleQuery query) {
        String namespace = query.namespace();
        Instant next = sessions.autoCommit("next schedule run", ScheduleMapper.class, m -> m.nextScheduleRunAt(namespace));
        return Optional.ofNullable(next);
    }

    private static ScheduleMapper.Row row(ScheduleRecord s) {
        return new ScheduleMapper.Row(s.namespace(), s.name(), s.cron(),
                s.interval() == null ? null : PostgresMessageStore.micros(s.interval()), s.timeZone(), s.topic(), s.json(),
                HeadersJson.write(s.headers()), s.priority(), s.maxAttempts(), s.startAt(), s.endAt(),
                s.missedRuns().policy().name(), s.missedRuns().bound(), PostgresMessageStore.micros(s.missedRuns().grace()),
                s.paused(), s.nextRunAt(), s.lastRunAt(), s.createdAt(), s.updatedAt(), null);
    }

    private static ScheduleRecord toRecord(ScheduleMapper.Row row) {
        Duration interval = row.intervalMicros() == null ? null
                : Duration.ofNanos(Math.multiplyExact(row.intervalMicros(), 1000L));
        MissedRuns missed = new MissedRuns(MissedRuns.Policy.valueOf(row.missedPolicy()), row.missedBound(),
                Duration.ofNanos(Math.multiplyExact(row.missedGraceMicros(), 1000L)));
        return new ScheduleRecord(row.namespace(), row.name(), row.cron(), interval, row.timeZone(), row.topic(),
                row.payload(), HeadersJson.read(row.headers()), row.priority(), row.maxAttempts(), row.startAt(),
                row.endAt(), missed, row.paused(), row.nextRunAt(), row.lastRunAt(), row.createdAt(), row.updatedAt());
    }
}
