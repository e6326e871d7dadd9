package dev.queue.domain.engine;

import dev.queue.api.FiredSchedule;
import dev.queue.api.InvalidInputException;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.MissedRuns;
import dev.queue.api.Schedule;
import dev.queue.api.ScheduleChange;
import dev.queue.api.ScheduleInfo;
import dev.queue.api.ScheduleNotFoundException;
import dev.queue.api.Schedules;
import dev.queue.domain.port.Clock;
import dev.queue.domain.port.FiredMessage;
import dev.queue.domain.port.NewMessage;
import dev.queue.domain.port.PauseCommand;
import dev.queue.domain.port.ScheduleQuery;
import dev.queue.domain.port.ScheduleRecord;
import dev.queue.domain.port.ScheduleRef;
import dev.queue.domain.port.ScheduleStore;
import dev.queue.domain.rules.InputRules;
import dev.queue.domain.schedule.DueTimes;
import dev.queue.domain.schedule.SchedulePlanner;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The schedules of one namespace: validation and the create/update rules over the schedule store. */
final class SchedulesService implements Schedules {

    private final String namespace;
    private final ScheduleFiring firing;
    private final InputRules rules;
    private final CallGate calls;
    private final Clock clock;
    private final MessageMapping mapping;
    private final Runnable schedulesChanged;

    /** @param schedulesChanged run after a change, so the ticker looks at the next due time again */
    SchedulesService(String namespace, ScheduleFiring firing, InputRules rules, CallGate calls, Clock clock, MessageMapping mapping,
                     Runnable schedulesChanged) {
        this.namespace = namespace;
        this.firing = firing;
        this.rules = rules;
        this.calls = calls;
        this.clock = clock;
        this.mapping = mapping;
        this.schedulesChanged = schedulesChanged;
    }

    /** Called inside the queue's call gate, which has already refused a closed queue. */
    private ScheduleStore store() {
        return firing.store();
    }

    @Override
    public ScheduleChange create(Schedule schedule) {
        return calls.call(() -> createNow(schedule));
    }

    private ScheduleChange createNow(Schedule schedule) {
        ScheduleStore store = store();
        Instant now = clock.now();
        ScheduleRecord wanted = toRecord(schedule, now);
        for (int attempt = 0; attempt < 3; attempt++) {
            if (store.scheduleInsertIfAbsent(wanted)) {
                schedulesChanged.run();
                return ScheduleChange.CREATED;
            }
            Optional<ScheduleRecord> existing = store.scheduleFind(new ScheduleRef(namespace, wanted.name()));
            if (existing.isPresent()) {
                if (existing.get().sameDefinitionAs(wanted)) {
                    return ScheduleChange.UNCHANGED;
                }
                if (store.scheduleReplaceIfPresent(replacing(existing.get(), wanted, now))) {
                    schedulesChanged.run();
                    return ScheduleChange.UPDATED;
                }
            }
        }
        throw new IllegalStateException("schedule " + wanted.name() + " in namespace " + namespace + " kept changing concurrently");
    }

    @Override
    public void update(Schedule schedule) {
        calls.run(() -> updateNow(schedule));
    }

    private void updateNow(Schedule schedule) {
        ScheduleStore store = store();
        Instant now = clock.now();
        ScheduleRecord wanted = toRecord(schedule, now);
        ScheduleRecord existing = existing(wanted.name());
        if (!store.scheduleReplaceIfPresent(replacing(existing, wanted, now))) {
            throw new ScheduleNotFoundException(namespace, wanted.name());
        }
        schedulesChanged.run();
    }

    /** The wanted definition with the existing identity and pause state; the next run computed anew. */
    private static ScheduleRecord replacing(ScheduleRecord existing, ScheduleRecord wanted, Instant now) {
        ScheduleRecord merged = withState(wanted, existing.paused(), null, existing.lastRunAt(), existing.createdAt(), now);
        return withState(merged, existing.paused(), SchedulePlanner.firstRun(merged, now), existing.lastRunAt(), existing.createdAt(), now);
    }

    @Override
    public boolean delete(String name) {
        rules.topic("schedule name", name);
        return calls.call(() -> store().scheduleDeleteIfPresent(new ScheduleRef(namespace, name)));
    }

    @Override
    public Optional<ScheduleInfo> get(String name) {
        rules.topic("schedule name", name);
        return calls.call(() -> store().scheduleFind(new ScheduleRef(namespace, name)).map(SchedulesService::info));
    }

    @Override
    public List<ScheduleInfo> list() {
        return calls.call(() -> {
            List<ScheduleInfo> infos = new ArrayList<>();
            for (ScheduleRecord record : store().scheduleList(new ScheduleQuery(namespace))) {
                infos.add(info(record));
            }
            return infos;
        });
    }

    @Override
    public void pause(String name) {
        calls.run(() -> {
            ScheduleRecord s = existing(name);
            Instant now = clock.now();
            if (!s.paused() && !store().schedulePauseIfPresent(new PauseCommand(new ScheduleRef(namespace, name), true, null, now))) {
                throw new ScheduleNotFoundException(namespace, name);
            }
        });
    }

    @Override
    public void resume(String name) {
        calls.run(() -> {
            ScheduleRecord s = existing(name);
            Instant now = clock.now();
            if (s.paused()) {
                if (!store().schedulePauseIfPresent(new PauseCommand(new ScheduleRef(namespace, name), false, SchedulePlanner.nextRunAfter(s, now), now))) {
                    throw new ScheduleNotFoundException(namespace, name);
                }
                schedulesChanged.run();
            }
        });
    }

    @Override
    public List<FiredSchedule> tick() {
        return calls.call(() -> {
            List<FiredSchedule> fired = new ArrayList<>();
            for (FiredMessage m : firing.fireDue(namespace)) {
                fired.add(new FiredSchedule(m.name(), m.dueAt(), MessageId.of(m.messageId()), m.nextRunAt()));
            }
            return fired;
        });
    }

    private ScheduleRecord existing(String name) {
        rules.topic("schedule name", name);
        return store().scheduleFind(new ScheduleRef(namespace, name)).orElseThrow(() -> new ScheduleNotFoundException(namespace, name));
    }

    private ScheduleRecord toRecord(Schedule schedule, Instant now) {
        if (schedule == null) {
            throw new InvalidInputException("schedule", null, "a Schedule, for example Schedule.cron(\"cleanup\", \"*/5 * * * *\")");
        }
        rules.topic("schedule name", schedule.name());
        if ((schedule.cron() == null) == (schedule.interval() == null)) {
            throw new InvalidInputException("schedule", schedule, "exactly one of a cron expression and an interval");
        }
        if (schedule.interval() != null && (schedule.interval().compareTo(Duration.ofSeconds(1)) < 0
                || schedule.interval().compareTo(InputRules.MAX_DELAY) > 0)) {
            throw new InvalidInputException("interval", schedule.interval(), "1 s to " + InputRules.MAX_DELAY.toDays() + " days");
        }
        ZoneId zone = schedule.timeZone();
        if (zone == null) {
            throw new InvalidInputException("timeZone", null, "a time zone, for example ZoneOffset.UTC");
        }
        String zoneId = zone.getId();
        try {
            ZoneId.of(zoneId);
        } catch (DateTimeException e) {
            throw new InvalidInputException("timeZone", zoneId, "a time zone id the JDK knows");
        }
        if (schedule.startAt() != null) {
            rules.runAt(schedule.startAt());
        }
        if (schedule.endAt() != null) {
            rules.runAt(schedule.endAt());
        }
        if (schedule.startAt() != null && schedule.endAt() != null && !schedule.endAt().isAfter(schedule.startAt())) {
            throw new InvalidInputException("endAt", schedule.endAt(), "an instant after startAt " + schedule.startAt());
        }
        MissedRuns missed = schedule.missedRuns();
        if (missed == null || missed.policy() == null || missed.bound() < 1 || missed.bound() > 1000 || missed.grace() == null
                || missed.grace().isNegative() || missed.grace().compareTo(InputRules.MAX_DELAY) > 0) {
            throw new InvalidInputException("missedRuns", missed, "MissedRuns.fireOnce(), skip(grace from 0 to 365 days) or fireEach(1 to 1000)");
        }
        Message message = schedule.message();
        if (message == null) {
            throw new InvalidInputException("schedule message", null, "the message each fire publishes: publishing(Message.to(topic)...)");
        }
        if (message.uniqueKey() != null) {
            throw new InvalidInputException("schedule message uniqueKey", message.uniqueKey(),
                    "none: each fire gets the key schedule:<name>:<due time>");
        }
        if (message.orderingKey() != null) {
            throw new InvalidInputException("schedule message orderingKey", message.orderingKey(),
                    "none: a schedule's messages take no ordering key");
        }
        if (message.delay() != null || message.runAt() != null) {
            throw new InvalidInputException("schedule message delay", message.delay() != null ? message.delay() : message.runAt(),
                    "none: a schedule's message is due at its due time");
        }
        if (message.headers() != null && message.headers().size() > InputRules.MAX_HEADERS - 2) {
            throw new InvalidInputException("schedule message headers", message.headers().size() + " headers",
                    "at most " + (InputRules.MAX_HEADERS - 2) + " (two are added by each fire)");
        }
        if (schedule.cron() != null) {
            DueTimes.cron(schedule.cron(), zone, schedule.startAt(), schedule.endAt());
        }
        NewMessage prepared = mapping.preparePublish(namespace, List.of(message)).messages().get(0);
        ScheduleRecord record = new ScheduleRecord(namespace, schedule.name(), schedule.cron() == null ? null : schedule.cron().trim(),
                schedule.interval() == null ? null : Duration.ofNanos(schedule.interval().toNanos() / 1000 * 1000), zoneId,
                prepared.topic(), prepared.json(), prepared.headers(), prepared.priority(), prepared.maxAttempts(),
                truncate(schedule.startAt()), truncate(schedule.endAt()), missed, false, null, null, now, now);
        requireSomeDueTime(record);
        return withState(record, false, SchedulePlanner.firstRun(record, now), null, now, now);
    }

    /** A schedule that can never fire would look like a finished one: refuse it, saying why. */
    private static void requireSomeDueTime(ScheduleRecord record) {
        if (SchedulePlanner.dueTimes(record).firstEver() != null) {
            return;
        }
        String within = record.startAt() == null && record.endAt() == null ? ""
                : " between startAt " + record.startAt() + " and endAt " + record.endAt();
        if (record.cron() != null) {
            throw new InvalidInputException("cron", record.cron(), "an expression that matches at least one time" + within
                    + ", but it never does");
        }
        throw new InvalidInputException("endAt", record.endAt(), "an end after the first run of every " + record.interval()
                + within + ", but no run falls before it");
    }

    private static Instant truncate(Instant instant) {
        return instant == null ? null : instant.truncatedTo(java.time.temporal.ChronoUnit.MICROS);
    }

    private static ScheduleRecord withState(ScheduleRecord s, boolean paused, Instant nextRunAt, Instant lastRunAt, Instant createdAt,
                                            Instant updatedAt) {
        return new ScheduleRecord(s.namespace(), s.name(), s.cron(), s.interval(), s.timeZone(), s.topic(), s.json(), s.headers(),
                s.priority(), s.maxAttempts(), s.startAt(), s.endAt(), s.missedRuns(), paused, nextRunAt, lastRunAt, createdAt, updatedAt);
    }

    private static ScheduleInfo info(ScheduleRecord s) {
        return new ScheduleInfo(s.namespace(), s.name(), s.cron(), s.interval(), s.timeZone(), s.topic(), s.json(), s.headers(),
                s.priority(), s.maxAttempts(), s.startAt(), s.endAt(), s.missedRuns(), s.paused(), s.nextRunAt(), s.lastRunAt(),
                s.createdAt(), s.updatedAt());
    }
}
