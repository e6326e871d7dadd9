package dev.queue.domain.schedule;

import dev.queue.api.MissedRuns;
import dev.queue.domain.port.FirePlan;
import dev.queue.domain.port.ScheduleRecord;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class SchedulePlannerTest {

    private static final Instant CREATED = Instant.parse("2030-01-01T00:00:00Z");
    private final SchedulePlanner planner = new SchedulePlanner();

    private static ScheduleRecord everyMinute(MissedRuns missed, Instant nextRunAt) {
        return new ScheduleRecord("ns", "tick", "* * * * *", null, "UTC", "t", "{}", Map.of(), 0, 5, null, null, missed, false,
                nextRunAt, null, CREATED, CREATED);
    }

    @Test
    void onTimeTickFiresTheDueTimeAndAdvances() {
        Instant due = Instant.parse("2030-01-01T00:01:00Z");
        FirePlan plan = planner.plan(everyMinute(MissedRuns.fireOnce(), due), due.plusMillis(300));
        assertThat(plan.dueTimes()).containsExactly(due);
        assertThat(plan.nextRunAt()).isEqualTo(Instant.parse("2030-01-01T00:02:00Z"));
        assertThat(plan.messages().get(0).uniqueKey()).isEqualTo("schedule:tick:2030-01-01T00:01:00Z");
        assertThat(plan.messages().get(0).headers()).containsEntry(SchedulePlanner.HEADER_SCHEDULE, "tick");
    }

    @Test
    void fireOnceStandsForAllMissedRunsWithTheLatest() {
        Instant due = Instant.parse("2030-01-01T00:01:00Z");
        Instant now = Instant.parse("2030-01-01T00:10:30Z");
        FirePlan plan = planner.plan(everyMinute(MissedRuns.fireOnce(), due), now);
        assertThat(plan.dueTimes()).containsExactly(Instant.parse("2030-01-01T00:10:00Z"));
        assertThat(plan.nextRunAt()).isEqualTo(Instant.parse("2030-01-01T00:11:00Z"));
    }

    @Test
    void skipDropsDueTimesOlderThanTheGrace() {
        Instant due = Instant.parse("2030-01-01T00:01:00Z");
        FirePlan late = planner.plan(everyMinute(MissedRuns.skip(Duration.ofSeconds(10)), due), Instant.parse("2030-01-01T00:10:30Z"));
        assertThat(late.dueTimes()).isEmpty();
        assertThat(late.nextRunAt()).isEqualTo(Instant.parse("2030-01-01T00:11:00Z"));
        FirePlan onTime = planner.plan(everyMinute(MissedRuns.skip(Duration.ofSeconds(10)), due), Instant.parse("2030-01-01T00:10:05Z"));
        assertThat(onTime.dueTimes()).containsExactly(Instant.parse("2030-01-01T00:10:00Z"));
    }

    @Test
    void fireEachFiresTheLatestMissedUpToTheBoundInOrder() {
        Instant due = Instant.parse("2030-01-01T00:01:00Z");
        FirePlan plan = planner.plan(everyMinute(MissedRuns.fireEach(3), due), Instant.parse("2030-01-01T00:10:30Z"));
        assertThat(plan.dueTimes()).containsExactly(Instant.parse("2030-01-01T00:08:00Z"), Instant.parse("2030-01-01T00:09:00Z"),
                Instant.parse("2030-01-01T00:10:00Z"));
        FirePlan all = planner.plan(everyMinute(MissedRuns.fireEach(100), due), Instant.parse("2030-01-01T00:03:00Z"));
        assertThat(all.dueTimes()).hasSize(3);
        assertThat(all.lastRunAt()).isEqualTo(Instant.parse("2030-01-01T00:03:00Z"));
    }

    @Test
    void notYetDueFiresNothing() {
        Instant due = Instant.parse("2030-01-01T00:01:00Z");
        FirePlan plan = planner.plan(everyMinute(MissedRuns.fireOnce(), due), due.minusMillis(1));
        assertThat(plan.messages()).isEmpty();
        assertThat(plan.nextRunAt()).isEqualTo(due);
    }

    @Test
    void endedScheduleHasNoNextRun() {
        ScheduleRecord s = new ScheduleRecord("ns", "once", null, Duration.ofHours(1), "UTC", "t", "{}", Map.of(), 0, 5,
                CREATED, CREATED.plusSeconds(3600), MissedRuns.fireOnce(), false, CREATED.plusSeconds(3600), null, CREATED, CREATED);
        FirePlan plan = planner.plan(s, CREATED.plusSeconds(3601));
        assertThat(plan.dueTimes()).containsExactly(CREATED.plusSeconds(3600));
        assertThat(plan.nextRunAt()).isNull();
        assertThat(List.of(plan.lastRunAt())).containsExactly(CREATED.plusSeconds(3600));
    }
}
