package dev.queue.testkit.contract;

import dev.queue.api.Delivery;
import dev.queue.api.FiredSchedule;
import dev.queue.api.InvalidInputException;
import dev.queue.api.Message;
import dev.queue.api.MissedRuns;
import dev.queue.api.QueueOptions;
import dev.queue.api.Schedule;
import dev.queue.api.ScheduleChange;
import dev.queue.api.ScheduleInfo;
import dev.queue.api.ScheduleNotFoundException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Schedules driven by explicit ticks: the automatic ticker is off here (see {@link ScheduleRuntimeContract}), so
 * every fire in these tests comes from a {@code tick()} the test makes. The clock starts at 2030-01-01T00:00Z.
 */
public abstract class ScheduleContract extends ContractSupport {

    private static final Message CLEANUP = Message.to("maintenance").json("{\"action\":\"expire_sessions\"}");

    @Override
    protected QueueOptions options() {
        return super.options().scheduleTickInterval(Duration.ZERO);
    }

    private Instant at(String time) {
        return Instant.parse("2030-01-01T" + time + "Z");
    }

    private void advanceTo(Instant instant) {
        advance(Duration.between(now(), instant));
    }

    @Test
    void aScheduleCreatedExactlyAtADueTimeIsDueAtOnce() {
        ns.schedules().create(Schedule.cron("cleanup", "*/5 * * * *").publishing(CLEANUP));
        assertThat(ns.schedules().get("cleanup").orElseThrow().nextRunAt()).isEqualTo(START);
    }

    @Test
    void createStoresTheDefinitionAndTheFirstRun() {
        advanceTo(at("00:02:30"));
        assertThat(ns.schedules().create(Schedule.cron("cleanup", "*/5 * * * *").publishing(CLEANUP.priority(3).maxAttempts(4)
                .header("origin", "cron")))).isEqualTo(ScheduleChange.CREATED);
        ScheduleInfo info = ns.schedules().get("cleanup").orElseThrow();
        assertThat(info.cron()).isEqualTo("*/5 * * * *");
        assertThat(info.topic()).isEqualTo("maintenance");
        assertThat(info.json()).isEqualTo("{\"action\":\"expire_sessions\"}");
        assertThat(info.priority()).isEqualTo(3);
        assertThat(info.maxAttempts()).isEqualTo(4);
        assertThat(info.headers()).containsEntry("origin", "cron");
        assertThat(info.timeZone()).isEqualTo("Z");
        assertThat(info.paused()).isFalse();
        assertThat(info.nextRunAt()).isEqualTo(at("00:05:00"));
        assertThat(info.lastRunAt()).isNull();
    }

    @Test
    void creatingTheSameDefinitionAgainChangesNothing() {
        ns.schedules().create(Schedule.cron("cleanup", "*/5 * * * *").publishing(CLEANUP));
        advance(Duration.ofMinutes(1));
        assertThat(ns.schedules().create(Schedule.cron("cleanup", "*/5 * * * *").publishing(CLEANUP)))
                .isEqualTo(ScheduleChange.UNCHANGED);
        assertThat(ns.schedules().list()).hasSize(1);
    }

    @Test
    void creatingADifferentDefinitionUnderTheNameIsAnUpdate() {
        ns.schedules().create(Schedule.cron("cleanup", "*/5 * * * *").publishing(CLEANUP));
        advanceTo(at("00:01:00"));
        assertThat(ns.schedules().create(Schedule.cron("cleanup", "*/2 * * * *").publishing(CLEANUP)))
                .isEqualTo(ScheduleChange.UPDATED);
        ScheduleInfo info = ns.schedules().get("cleanup").orElseThrow();
        assertThat(info.cron()).isEqualTo("*/2 * * * *");
        assertThat(info.nextRunAt()).isEqualTo(at("00:02:00"));
    }

    @Test
    void updateReplacesAndUnknownNamesFailClearly() {
        ns.schedules().create(Schedule.every("sync", Duration.ofHours(2)).publishing(CLEANUP));
        ns.schedules().update(Schedule.every("sync", Duration.ofHours(1)).publishing(CLEANUP));
        assertThat(ns.schedules().get("sync").orElseThrow().interval()).isEqualTo(Duration.ofHours(1));
        assertThatThrownBy(() -> ns.schedules().update(Schedule.every("nope", Duration.ofHours(1)).publishing(CLEANUP)))
                .isInstanceOf(ScheduleNotFoundException.class).hasMessageContaining("nope");
        assertThatThrownBy(() -> ns.schedules().pause("nope")).isInstanceOf(ScheduleNotFoundException.class);
        assertThatThrownBy(() -> ns.schedules().resume("nope")).isInstanceOf(ScheduleNotFoundException.class);
    }

    @Test
    void listIsOrderedByNameAndDeleteRemoves() {
        ns.schedules().create(Schedule.every("b", Duration.ofHours(1)).publishing(CLEANUP));
        ns.schedules().create(Schedule.every("a", Duration.ofHours(1)).publishing(CLEANUP));
        assertThat(ns.schedules().list()).extracting(ScheduleInfo::name).containsExactly("a", "b");
        assertThat(ns.schedules().delete("a")).isTrue();
        assertThat(ns.schedules().delete("a")).isFalse();
        assertThat(ns.schedules().get("a")).isEmpty();
        assertThat(ns.schedules().list()).extracting(ScheduleInfo::name).containsExactly("b");
    }

    @Test
    void tickFiresADueScheduleOnceAndAdvancesItsNextRun() {
        advanceTo(at("00:01:00"));
        ns.schedules().create(Schedule.cron("cleanup", "*/5 * * * *").publishing(CLEANUP.header("k", "v")));
        advanceTo(at("00:04:59"));
        assertThat(ns.schedules().tick()).isEmpty();
        advanceTo(at("00:05:00"));
        List<FiredSchedule> fired = ns.schedules().tick();
        assertThat(fired).hasSize(1);
        assertThat(fired.get(0).name()).isEqualTo("cleanup");
        assertThat(fired.get(0).dueAt()).isEqualTo(at("00:05:00"));
        assertThat(fired.get(0).nextRunAt()).isEqualTo(at("00:10:00"));
        assertThat(ns.schedules().tick()).as("a second tick at the same time").isEmpty();

        Delivery delivery = pullOne("maintenance");
        assertThat(delivery.id()).isEqualTo(fired.get(0).messageId());
        assertThat(delivery.json()).isEqualTo("{\"action\":\"expire_sessions\"}");
        assertThat(delivery.headers()).containsEntry("k", "v").containsEntry("queue-schedule", "cleanup");
        ScheduleInfo info = ns.schedules().get("cleanup").orElseThrow();
        assertThat(info.lastRunAt()).isEqualTo(at("00:05:00"));
        assertThat(info.nextRunAt()).isEqualTo(at("00:10:00"));
    }

    @Test
    void intervalScheduleFiresEveryInterval() {
        ns.schedules().create(Schedule.every("sync", Duration.ofHours(2)).publishing(CLEANUP));
        List<Instant> due = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            advance(Duration.ofHours(2));
            due.addAll(ns.schedules().tick().stream().map(FiredSchedule::dueAt).toList());
        }
        assertThat(due).containsExactly(at("02:00:00"), at("04:00:00"), at("06:00:00"));
    }

    @Test
    void intervalWithAStartFiresAtTheStart() {
        ns.schedules().create(Schedule.every("sync", Duration.ofMinutes(30)).startAt(at("01:00:00")).publishing(CLEANUP));
        assertThat(ns.schedules().get("sync").orElseThrow().nextRunAt()).isEqualTo(at("01:00:00"));
    }

    @Test
    void pausedScheduleKeepsItsDefinitionAndDoesNotFire() {
        ns.schedules().create(Schedule.cron("cleanup", "*/5 * * * *").publishing(CLEANUP));
        ns.schedules().pause("cleanup");
        advance(Duration.ofMinutes(30));
        assertThat(ns.schedules().tick()).isEmpty();
        ScheduleInfo info = ns.schedules().get("cleanup").orElseThrow();
        assertThat(info.paused()).isTrue();
        assertThat(info.cron()).isEqualTo("*/5 * * * *");
        assertThat(ns.stats().pending()).isZero();
    }

    @Test
    void resumeComputesTheNextRunFromNowWithoutBackfill() {
        ns.schedules().create(Schedule.cron("cleanup", "*/5 * * * *").publishing(CLEANUP));
        ns.schedules().pause("cleanup");
        advanceTo(at("00:31:00"));
        ns.schedules().resume("cleanup");
        assertThat(ns.schedules().get("cleanup").orElseThrow().nextRunAt()).isEqualTo(at("00:35:00"));
        assertThat(ns.schedules().tick()).isEmpty();
        advanceTo(at("00:35:00"));
        assertThat(ns.schedules().tick()).extracting(FiredSchedule::dueAt).containsExactly(at("00:35:00"));
    }

    @Test
    void missedRunsFireOnceByDefault() {
        ns.schedules().create(Schedule.cron("every-minute", "* * * * *").publishing(CLEANUP));
        advanceTo(at("00:10:30"));
        assertThat(ns.schedules().tick()).extracting(FiredSchedule::dueAt).containsExactly(at("00:10:00"));
        assertThat(ns.stats().pending()).isEqualTo(1);
        assertThat(ns.schedules().get("every-minute").orElseThrow().nextRunAt()).isEqualTo(at("00:11:00"));
    }

    @Test
    void missedRunsCanBeSkipped() {
        ns.schedules().create(Schedule.cron("every-minute", "* * * * *").missedRuns(MissedRuns.skip(Duration.ofSeconds(10)))
                .publishing(CLEANUP));
        advanceTo(at("00:10:30"));
        assertThat(ns.schedules().tick()).isEmpty();
        assertThat(ns.schedules().get("every-minute").orElseThrow().nextRunAt()).isEqualTo(at("00:11:00"));
        advanceTo(at("00:11:01"));
        assertThat(ns.schedules().tick()).extracting(FiredSchedule::dueAt).containsExactly(at("00:11:00"));
    }

    @Test
    void missedRunsCanEachFireUpToABound() {
        ns.schedules().create(Schedule.cron("every-minute", "* * * * *").missedRuns(MissedRuns.fireEach(3)).publishing(CLEANUP));
        advanceTo(at("00:10:30"));
        assertThat(ns.schedules().tick()).extracting(FiredSchedule::dueAt)
                .containsExactly(at("00:08:00"), at("00:09:00"), at("00:10:00"));
        assertThat(ns.stats().pending()).isEqualTo(3);
    }

    @Test
    void scheduleEndsAfterItsEnd() {
        ns.schedules().create(Schedule.every("twice", Duration.ofMinutes(10)).startAt(at("00:10:00")).endAt(at("00:20:00"))
                .publishing(CLEANUP));
        advanceTo(at("00:10:00"));
        assertThat(ns.schedules().tick()).hasSize(1);
        advanceTo(at("00:20:00"));
        List<FiredSchedule> last = ns.schedules().tick();
        assertThat(last).hasSize(1);
        assertThat(last.get(0).nextRunAt()).isNull();
        advanceTo(at("01:00:00"));
        assertThat(ns.schedules().tick()).isEmpty();
        assertThat(ns.schedules().get("twice").orElseThrow().nextRunAt()).isNull();
    }

    @Test
    void cronIsReadInTheSchedulesTimeZone() {
        ns.schedules().create(Schedule.cron("nine", "0 9 * * *").timeZone(ZoneId.of("Europe/Paris")).publishing(CLEANUP));
        assertThat(ns.schedules().get("nine").orElseThrow().nextRunAt()).isEqualTo(at("08:00:00"));
    }

    @Test
    void schedulesAreIsolatedByNamespace() {
        ns.schedules().create(Schedule.every("sync", Duration.ofMinutes(1)).publishing(CLEANUP));
        var other = queue.namespace("other");
        assertThat(other.schedules().list()).isEmpty();
        assertThat(other.schedules().get("sync")).isEmpty();
        assertThat(other.schedules().delete("sync")).isFalse();
        advance(Duration.ofMinutes(1));
        assertThat(other.schedules().tick()).isEmpty();
        assertThat(ns.schedules().tick()).hasSize(1);
        assertThat(other.stats().pending()).isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {"* * * *", "* * * * * * *", "61 * * * *", "every minute", "*/0 * * * *", ""})
    void invalidCronIsRejectedNamingItAndNothingIsStored(String expression) {
        assertThatThrownBy(() -> ns.schedules().create(Schedule.cron("bad", expression).publishing(CLEANUP)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("cron").hasMessageContaining(expression);
        assertThat(ns.schedules().list()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"0 0 31 2 *", "0 0 30 2 *", "0 0 31 4 *", "0 0 0 30 2 MON-FRI"})
    void cronThatNeverMatchesIsRejectedOnCreate(String expression) {
        assertThatThrownBy(() -> ns.schedules().create(Schedule.cron("month-end", expression).publishing(CLEANUP)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("cron").hasMessageContaining(expression)
                .hasMessageContaining("never");
        assertThat(ns.schedules().list()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"0 0 31 2 *", "0 0 30 2 *", "0 0 31 4 *", "0 0 0 30 2 MON-FRI"})
    void cronThatNeverMatchesIsRejectedOnUpdateAndTheScheduleIsKept(String expression) {
        ns.schedules().create(Schedule.cron("month-end", "0 0 28 2 *").publishing(CLEANUP));
        ScheduleInfo before = ns.schedules().get("month-end").orElseThrow();

        assertThatThrownBy(() -> ns.schedules().update(Schedule.cron("month-end", expression).publishing(CLEANUP)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining(expression).hasMessageContaining("never");
        assertThatThrownBy(() -> ns.schedules().create(Schedule.cron("month-end", expression).publishing(CLEANUP)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining(expression);

        assertThat(ns.schedules().get("month-end")).contains(before);
    }

    @Test
    void cronThatMatchesOnlyOutsideItsBoundsIsRejected() {
        // February 29th falls in 2032, not between these bounds.
        Schedule leapDay = Schedule.cron("leap-day", "0 0 29 2 *").startAt(Instant.parse("2030-01-01T00:00:00Z"))
                .endAt(Instant.parse("2031-12-31T00:00:00Z")).publishing(CLEANUP);

        assertThatThrownBy(() -> ns.schedules().create(leapDay))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("0 0 29 2 *").hasMessageContaining("between startAt");
        assertThat(ns.schedules().create(leapDay.endAt(Instant.parse("2032-03-01T00:00:00Z")))).isEqualTo(ScheduleChange.CREATED);
        assertThat(ns.schedules().get("leap-day").orElseThrow().nextRunAt()).isEqualTo(Instant.parse("2032-02-29T00:00:00Z"));
    }

    @Test
    void intervalWhoseEndComesBeforeItsFirstRunIsRejected() {
        assertThatThrownBy(() -> ns.schedules().create(Schedule.every("hourly", Duration.ofHours(1))
                .endAt(START.plusSeconds(60)).publishing(CLEANUP)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("endAt");
        assertThat(ns.schedules().list()).isEmpty();
    }

    @Test
    void otherInvalidDefinitionsAreRejectedAndNothingIsStored() {
        assertThatThrownBy(() -> ns.schedules().create(Schedule.every("fast", Duration.ofMillis(10)).publishing(CLEANUP)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("interval");
        assertThatThrownBy(() -> ns.schedules().create(Schedule.every("no-message", Duration.ofMinutes(1))))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("message");
        assertThatThrownBy(() -> ns.schedules().create(Schedule.every("bad name!", Duration.ofMinutes(1)).publishing(CLEANUP)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("bad name!");
        assertThatThrownBy(() -> ns.schedules().create(Schedule.every("keyed", Duration.ofMinutes(1))
                .publishing(CLEANUP.uniqueKey("k")))).isInstanceOf(InvalidInputException.class).hasMessageContaining("uniqueKey");
        assertThatThrownBy(() -> ns.schedules().create(Schedule.every("backwards", Duration.ofMinutes(1))
                .startAt(at("02:00:00")).endAt(at("01:00:00")).publishing(CLEANUP)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("endAt");
        assertThatThrownBy(() -> ns.schedules().create(Schedule.every("bad-payload", Duration.ofMinutes(1))
                .publishing(Message.to("t").json("{oops")))).isInstanceOf(InvalidInputException.class).hasMessageContaining("{oops");
        assertThatThrownBy(() -> ns.schedules().create(Schedule.every("cut-header", Duration.ofMinutes(1))
                .publishing(Message.to("t").header("who", "Zo\u00eb \uD83D")))).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("U+D83D at index 4");
        assertThatThrownBy(() -> ns.schedules().create(Schedule.every("many", Duration.ofMinutes(1))
                .missedRuns(MissedRuns.fireEach(0)).publishing(CLEANUP))).isInstanceOf(InvalidInputException.class);
        assertThat(ns.schedules().list()).isEmpty();
    }

    @Test
    void concurrentTickersFireEachDueTimeExactlyOnce() throws Exception {
        int schedules = 20;
        int dueTimes = 30;
        for (int i = 0; i < schedules; i++) {
            ns.schedules().create(Schedule.every("s" + i, Duration.ofMinutes(1)).publishing(CLEANUP));
        }
        ExecutorService tickers = Executors.newFixedThreadPool(4);
        Map<String, Integer> firedPerDueTime = new ConcurrentHashMap<>();
        try {
            for (int step = 0; step < dueTimes; step++) {
                advance(Duration.ofMinutes(1));
                CountDownLatch go = new CountDownLatch(1);
                List<Future<List<FiredSchedule>>> results = new ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    results.add(tickers.submit(() -> {
                        go.await();
                        return ns.schedules().tick();
                    }));
                }
                go.countDown();
                for (Future<List<FiredSchedule>> result : results) {
                    for (FiredSchedule fired : result.get(30, TimeUnit.SECONDS)) {
                        firedPerDueTime.merge(fired.name() + "@" + fired.dueAt(), 1, Integer::sum);
                    }
                }
            }
        } finally {
            tickers.shutdownNow();
        }
        assertThat(firedPerDueTime).hasSize(schedules * dueTimes);
        assertThat(Set.copyOf(firedPerDueTime.values())).containsExactly(1);
        assertThat(ns.stats().pending()).isEqualTo((long) schedules * dueTimes);
        Map<String, Integer> perSchedule = new HashMap<>();
        firedPerDueTime.keySet().forEach(key -> perSchedule.merge(key.substring(0, key.indexOf('@')), 1, Integer::sum));
        assertThat(Set.copyOf(perSchedule.values())).containsExactly(dueTimes);
    }
}
