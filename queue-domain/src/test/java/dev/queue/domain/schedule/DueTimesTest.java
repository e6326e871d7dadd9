package dev.queue.domain.schedule;

import dev.queue.api.InvalidInputException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DueTimesTest {

    private static final Instant T = Instant.parse("2030-01-01T10:02:30Z");

    @Test
    void unixCronWithFiveFields() {
        DueTimes times = DueTimes.cron("*/5 * * * *", ZoneOffset.UTC, null, null);
        assertThat(times.firstAfter(T)).isEqualTo(Instant.parse("2030-01-01T10:05:00Z"));
        assertThat(times.latestAtOrBefore(T)).isEqualTo(Instant.parse("2030-01-01T10:00:00Z"));
        assertThat(times.latestAtOrBefore(Instant.parse("2030-01-01T10:05:00Z"))).isEqualTo(Instant.parse("2030-01-01T10:05:00Z"));
        assertThat(times.firstAfter(Instant.parse("2030-01-01T10:05:00Z"))).isEqualTo(Instant.parse("2030-01-01T10:10:00Z"));
    }

    @Test
    void cronWithSecondsFirst() {
        DueTimes times = DueTimes.cron("*/10 * * * * *", ZoneOffset.UTC, null, null);
        assertThat(times.firstAfter(T)).isEqualTo(Instant.parse("2030-01-01T10:02:40Z"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"* * * *", "* * * * * * *", "61 * * * *", "not a cron", "*/0 * * * *", ""})
    void rejectsOtherFormsNamingTheExpression(String expression) {
        assertThatThrownBy(() -> DueTimes.cron(expression, ZoneOffset.UTC, null, null))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("cron");
    }

    /** cron-utils parses these, then fails with its own exceptions when asked for a time: refused up front instead. */
    @ParameterizedTest
    @ValueSource(strings = {"1-5/ * * * *", "0 0 * * 1#", "0 0 0 * * 5-1/2", "0 0 0 1,? * *", "0 0 0 * 12-1/2 *",
            "0|1 0|1|2 * * *"})
    void rejectsExpressionsTheCronLibraryParsesButCannotEvaluate(String expression) {
        assertThatThrownBy(() -> DueTimes.cron(expression, ZoneOffset.UTC, null, null).firstEver())
                .isInstanceOf(InvalidInputException.class).hasMessageContaining(expression);
    }

    @Test
    void rejectsWrongFieldCountSayingHowMany() {
        assertThatThrownBy(() -> DueTimes.cron("* * * *", ZoneOffset.UTC, null, null)).hasMessageContaining("has 4")
                .hasMessageContaining("\"* * * *\"");
    }

    @ParameterizedTest
    @ValueSource(strings = {"0 0 31 2 *", "0 0 30 2 *", "0 0 31 4 *", "0 0 0 30 2 MON-FRI", "0 0 0 31 11 *"})
    void cronThatNeverMatchesHasNoFirstDueTime(String expression) {
        assertThat(DueTimes.cron(expression, ZoneOffset.UTC, null, null).firstEver()).isNull();
    }

    @Test
    void firstEverRespectsTheBounds() {
        Instant start = Instant.parse("2030-01-01T00:00:00Z");
        assertThat(DueTimes.cron("0 0 29 2 *", ZoneOffset.UTC, start, Instant.parse("2031-12-31T00:00:00Z")).firstEver()).isNull();
        assertThat(DueTimes.cron("0 0 29 2 *", ZoneOffset.UTC, start, null).firstEver()).isEqualTo(Instant.parse("2032-02-29T00:00:00Z"));
        assertThat(DueTimes.cron("0 0 1 1 *", ZoneOffset.UTC, start, null).firstEver()).isEqualTo(start);
    }

    /** What docs/schedules.md says of the two forms, held true here. */
    @Test
    void fiveFieldsMatchDayOfMonthOrDayOfWeekWhileSixFieldsMatchBoth() {
        Instant december = Instant.parse("2026-12-01T00:00:00Z");
        // Unix cron: with both day fields restricted, either one matching is enough (the 29th, or any Monday).
        assertThat(DueTimes.cron("0 0 29 2 1", ZoneOffset.UTC, null, null).firstAfter(december))
                .isEqualTo(Instant.parse("2027-02-01T00:00:00Z"));
        // With seconds first (Spring's form), both must match: a February 29th that is a Monday.
        assertThat(DueTimes.cron("0 0 0 29 2 1", ZoneOffset.UTC, null, null).firstAfter(december))
                .isEqualTo(Instant.parse("2044-02-29T00:00:00Z"));
        assertThat(DueTimes.cron("0 0 0 29 2 MON", ZoneOffset.UTC, null, null).firstAfter(december))
                .isEqualTo(Instant.parse("2044-02-29T00:00:00Z"));
    }

    @Test
    void cronIsReadInItsTimeZone() {
        DueTimes nineInParis = DueTimes.cron("0 9 * * *", ZoneId.of("Europe/Paris"), null, null);
        assertThat(nineInParis.firstAfter(Instant.parse("2030-01-01T00:00:00Z"))).isEqualTo(Instant.parse("2030-01-01T08:00:00Z"));
        assertThat(nineInParis.firstAfter(Instant.parse("2030-07-01T00:00:00Z"))).isEqualTo(Instant.parse("2030-07-01T07:00:00Z"));
    }

    @Test
    void springForwardGapFiresOnceThatDayAfterTheGap() {
        // 2030-03-31 in Paris: 02:00 local jumps to 03:00; 02:30 does not exist that day.
        DueTimes times = DueTimes.cron("30 2 * * *", ZoneId.of("Europe/Paris"), null, null);
        Instant next = times.firstAfter(Instant.parse("2030-03-30T23:00:00Z"));
        assertThat(next).isIn(Instant.parse("2030-03-31T01:30:00Z"), Instant.parse("2030-04-01T00:30:00Z"));
        Instant after = times.firstAfter(next);
        assertThat(Duration.between(next, after)).isGreaterThanOrEqualTo(Duration.ofHours(22));
    }

    @Test
    void fallBackOverlapFiresOnce() {
        // 2030-10-27 in Paris: 03:00 local goes back to 02:00; 02:30 happens twice.
        DueTimes times = DueTimes.cron("30 2 * * *", ZoneId.of("Europe/Paris"), null, null);
        Instant first = times.firstAfter(Instant.parse("2030-10-26T22:00:00Z"));
        Instant second = times.firstAfter(first);
        assertThat(Duration.between(first, second)).isGreaterThanOrEqualTo(Duration.ofHours(23));
    }

    @Test
    void intervalFromStartIncludesTheStart() {
        Instant start = Instant.parse("2030-01-01T09:00:00Z");
        DueTimes every2h = DueTimes.interval(start, Duration.ofHours(2), 0, start, null);
        assertThat(every2h.firstAfter(Instant.parse("2030-01-01T08:00:00Z"))).isEqualTo(start);
        assertThat(every2h.firstAfter(start)).isEqualTo(Instant.parse("2030-01-01T11:00:00Z"));
        assertThat(every2h.latestAtOrBefore(Instant.parse("2030-01-01T12:59:59Z"))).isEqualTo(Instant.parse("2030-01-01T11:00:00Z"));
        assertThat(every2h.latestAtOrBefore(Instant.parse("2030-01-01T08:59:59Z"))).isNull();
    }

    @Test
    void intervalWithoutStartBeginsOneIntervalAfterTheAnchor() {
        Instant created = Instant.parse("2030-01-01T09:00:00Z");
        DueTimes every5m = DueTimes.interval(created, Duration.ofMinutes(5), 1, null, null);
        assertThat(every5m.firstAfter(created.minusNanos(1000))).isEqualTo(Instant.parse("2030-01-01T09:05:00Z"));
        assertThat(every5m.latestAtOrBefore(Instant.parse("2030-01-01T09:04:00Z"))).isNull();
    }

    @Test
    void nothingIsDueAfterTheEnd() {
        DueTimes times = DueTimes.cron("0 * * * *", ZoneOffset.UTC, null, Instant.parse("2030-01-01T12:00:00Z"));
        assertThat(times.firstAfter(Instant.parse("2030-01-01T11:30:00Z"))).isEqualTo(Instant.parse("2030-01-01T12:00:00Z"));
        assertThat(times.firstAfter(Instant.parse("2030-01-01T12:00:00Z"))).isNull();
        assertThat(times.latestAtOrBefore(Instant.parse("2030-01-02T00:00:00Z"))).isEqualTo(Instant.parse("2030-01-01T12:00:00Z"));
    }
}
