package dev.queue.domain.engine;

import dev.queue.domain.port.ClaimPosition;
import dev.queue.domain.port.ClaimedMessage;
import dev.queue.domain.port.Clock;
import dev.queue.domain.port.CommandTime;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

class ClaimCursorTest {

    private static final Duration SWEEP = Duration.ofHours(1);
    private static final long MILLI = 1_000_000L;
    private static final List<String> TOPICS = List.of("a", "b", "t");

    private Instant now = Instant.parse("2026-01-01T00:00:00Z");
    private final Clock clock = new Clock() {
        @Override
        public Instant now() {
            return now;
        }

        @Override
        public CommandTime commandTime() {
            return CommandTime.at(now);
        }
    };
    private final List<Set<String>> asked = new ArrayList<>();
    private Set<String> granted = Set.of();
    private final Function<Set<String>, Set<String>> sweeps = topics -> {
        asked.add(topics);
        return granted;
    };

    private static ClaimedMessage message(String topic, long id) {
        return new ClaimedMessage(id, "ns", topic, "{}", Map.of(), 0, 1, 3, 1, "w", null, null,
                Instant.parse("2026-01-01T00:00:00Z"));
    }

    private static ClaimedMessage limited(String topic, long id) {
        return new ClaimedMessage(id, "ns", topic, "{}", Map.of(), 0, 1, 3, 1, "w", null, null,
                Instant.parse("2026-01-01T00:00:00Z"), true);
    }

    @Test
    void aClaimCutShortByALimitSaysNothingOfWhatALookFromTheHeadCosts() {
        ClaimCursor cursor = new ClaimCursor(SWEEP, clock);
        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("t", 1)), 1, MILLI);
        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("t", 2)), 5, MILLI);
        assertThat(cursor.limited("t")).isFalse();

        // held back at the limit after waiting for the topic's other claims: short, and slow
        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(limited("t", 3)), 5, 50 * MILLI);
        assertThat(cursor.headExpensive()).isFalse();
        assertThat(cursor.limited("t")).isTrue();
        assertThat(cursor.limited("a")).isFalse();
        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(), 5, 50 * MILLI);
        assertThat(cursor.headExpensive()).isFalse();
        assertThat(cursor.limited("t")).as("until a claim returns its messages unlimited").isTrue();

        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("t", 4)), 5, MILLI);
        assertThat(cursor.limited("t")).isFalse();
    }

    @Test
    void theFirstClaimLooksFromTheHeadAndAFullOneResumesAfterItsLastMessage() {
        ClaimCursor cursor = new ClaimCursor(SWEEP, clock);
        assertThat(cursor.next(TOPICS, sweeps)).isEqualTo(ClaimCursor.Next.fromHead(TOPICS));
        cursor.advance(List.of(message("t", 1), message("t", 2)), 2, MILLI);

        ClaimCursor.Next next = cursor.next(TOPICS, sweeps);

        assertThat(next.after()).containsOnlyKeys("t");
        assertThat(next.after().get("t").id()).isEqualTo(2);
        assertThat(next.behind()).isEmpty();
        assertThat(asked).as("asked for the fleet's sweep once, at the first resumed claim").hasSize(1);
    }

    @Test
    void aShortClaimIsFollowedByOneFromTheHeadWhileTheHeadIsCheap() {
        ClaimCursor cursor = new ClaimCursor(SWEEP, clock);
        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("t", 1)), 1, MILLI);
        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("t", 2)), 5, MILLI);

        assertThat(cursor.next(TOPICS, sweeps)).isEqualTo(ClaimCursor.Next.fromHead(TOPICS));
    }

    @Test
    void aShortClaimResumesAQuarterSweepBeforeItsPositionOnceALookFromTheHeadTookFarLongerThanResumedClaims() {
        ClaimCursor cursor = new ClaimCursor(SWEEP, clock);
        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("t", 1)), 1, MILLI);
        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("t", 2)), 5, MILLI);
        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("t", 3)), 5, 50 * MILLI);
        assertThat(cursor.headExpensive()).isTrue();

        ClaimCursor.Next next = cursor.next(TOPICS, sweeps);

        assertThat(next.after()).containsEntry("t",
                new ClaimPosition(0, Instant.parse("2026-01-01T00:00:00Z").minus(SWEEP.dividedBy(4)), 0));
        cursor.advance(List.of(message("t", 4)), 1, MILLI);
        assertThat(cursor.next(TOPICS, sweeps).after()).as("a full claim resumes right after its last message")
                .containsEntry("t", new ClaimPosition(0, Instant.parse("2026-01-01T00:00:00Z"), 4));
    }

    @Test
    void beforeAnyClaimResumedALookFromTheHeadAboveTheFloorIsExpensive() {
        ClaimCursor cursor = new ClaimCursor(SWEEP, clock);
        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("t", 1)), 5, MILLI);
        assertThat(cursor.headExpensive()).isFalse();
        assertThat(cursor.next(TOPICS, sweeps)).isEqualTo(ClaimCursor.Next.fromHead(TOPICS));

        // short claims only, each from the head, and one of them slow: the head is a run of old entries
        cursor.advance(List.of(message("t", 2)), 5, 3 * MILLI);

        assertThat(cursor.headExpensive()).isTrue();
        assertThat(cursor.next(TOPICS, sweeps).after()).containsKey("t");
    }

    @Test
    void aCheapLookFromTheHeadLetsShortClaimsLookFromTheHeadAgain() {
        ClaimCursor cursor = new ClaimCursor(SWEEP, clock);
        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("t", 1)), 1, MILLI);
        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("t", 2)), 5, MILLI);
        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("t", 3)), 1, 50 * MILLI);
        granted = Set.of("t");
        now = now.plus(SWEEP.dividedBy(2));

        ClaimCursor.Next sweep = cursor.next(TOPICS, sweeps);
        assertThat(sweep.behind()).containsExactly("t");
        cursor.advance(List.of(), 5, MILLI);

        assertThat(cursor.headExpensive()).isFalse();
        assertThat(cursor.next(TOPICS, sweeps)).isEqualTo(ClaimCursor.Next.fromHead(TOPICS));
    }

    @Test
    void theFleetsSweepIsAskedForEveryHalfIntervalAndLooksBehindOneTakenTopicPerClaim() {
        ClaimCursor cursor = new ClaimCursor(SWEEP, clock);
        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("a", 1), message("b", 2)), 2, MILLI);
        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("a", 3), message("b", 4)), 2, MILLI);
        assertThat(asked).hasSize(1);

        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("a", 5), message("b", 6)), 2, MILLI);
        assertThat(asked).as("not asked again within half an interval").hasSize(1);

        granted = Set.of("a", "b");
        now = now.plus(SWEEP.dividedBy(2));
        ClaimCursor.Next first = cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("a", 7), message("a", 8)), 2, MILLI);
        ClaimCursor.Next second = cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("a", 9), message("b", 10)), 2, MILLI);
        granted = Set.of();
        ClaimCursor.Next third = cursor.next(TOPICS, sweeps);

        assertThat(asked).hasSize(2);
        assertThat(asked.get(1)).containsExactlyInAnyOrder("a", "b");
        assertThat(first.behind()).containsExactly("a");
        assertThat(first.topics()).as("no later topic jumps ahead of a's messages after its position").containsExactly("a");
        assertThat(first.after()).containsOnlyKeys("a", "b");
        assertThat(second.behind()).containsExactly("b");
        assertThat(second.topics()).containsExactly("a", "b");
        assertThat(third.behind()).isEmpty();
        assertThat(third.topics()).isEqualTo(TOPICS);
        assertThat(cursor.sweepGap()).isEqualTo(SWEEP.multipliedBy(3).dividedBy(4));
    }

    @Test
    void theFleetsSweepsAreSpacedByFiveTimesHowLongTheLastLookBehindTook() {
        Duration sweep = Duration.ofSeconds(1);
        ClaimCursor cursor = new ClaimCursor(sweep, clock);
        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("t", 1)), 1, MILLI);
        granted = Set.of("t");
        assertThat(cursor.next(TOPICS, sweeps).behind()).containsExactly("t");
        cursor.advance(List.of(), 1, 100 * MILLI);
        assertThat(cursor.sweepGap()).as("a cheap look keeps three quarters of the interval").isEqualTo(Duration.ofMillis(750));

        now = now.plus(sweep);
        assertThat(cursor.next(TOPICS, sweeps).behind()).containsExactly("t");
        cursor.advance(List.of(), 1, 1_500 * MILLI);
        assertThat(cursor.sweepGap()).as("a look behind that stepped over a held horizon's entries").isEqualTo(Duration.ofMillis(7_500));

        granted = Set.of();
        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("t", 2)), 1, 2_000 * MILLI);
        assertThat(cursor.sweepGap()).as("only looks behind count").isEqualTo(Duration.ofMillis(7_500));

        granted = Set.of("t");
        now = now.plus(sweep);
        assertThat(cursor.next(TOPICS, sweeps).behind()).containsExactly("t");
        cursor.advance(List.of(), 1, MILLI);
        assertThat(cursor.sweepGap()).as("cheap again once the horizon moved on").isEqualTo(Duration.ofMillis(750));
    }

    @Test
    void aClockThatWentBackAsksAtOnce() {
        ClaimCursor cursor = new ClaimCursor(SWEEP, clock);
        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("t", 1)), 1, MILLI);
        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("t", 2)), 1, MILLI);
        now = now.minusSeconds(1);

        cursor.next(TOPICS, sweeps);

        assertThat(asked).hasSize(2);
    }

    @Test
    void aLookBehindAPositionSaysSoUntilTheNextClaim() {
        ClaimCursor cursor = new ClaimCursor(SWEEP, clock);
        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("t", 9)), 1, MILLI);
        granted = Set.of("t");

        assertThat(cursor.next(TOPICS, sweeps).behind()).containsExactly("t");
        cursor.advance(List.of(), 1, MILLI);
        assertThat(cursor.lookedBehindOnly()).as("empty, it says nothing of what lies after the position").isTrue();

        granted = Set.of();
        assertThat(cursor.next(TOPICS, sweeps).behind()).isEmpty();
        assertThat(cursor.lookedBehindOnly()).isFalse();
    }

    @Test
    void aLookBehindNeverMovesAPositionBack() {
        ClaimCursor cursor = new ClaimCursor(SWEEP, clock);
        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("t", 9)), 1, MILLI);
        granted = Set.of("t");
        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("t", 4)), 1, MILLI);

        ClaimPosition position = cursor.next(TOPICS, sweeps).after().get("t");

        assertThat(position.id()).isEqualTo(9);
    }

    @Test
    void aPromotionBehindThePositionMovesItBackToJustBeforeTheEarliestOnce() {
        Instant due = Instant.parse("2026-01-01T00:00:00Z");
        ClaimCursor cursor = new ClaimCursor(SWEEP, clock);
        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("t", 9)), 1, MILLI);

        assertThat(cursor.rewind("t", new ClaimPosition(0, due, 7))).isTrue();
        assertThat(cursor.rewind("t", new ClaimPosition(0, due, 5))).isTrue();
        assertThat(cursor.rewind("t", new ClaimPosition(0, due, 6))).isTrue();

        assertThat(cursor.next(TOPICS, sweeps).after()).containsEntry("t", new ClaimPosition(0, due, 4));
        cursor.advance(List.of(message("t", 5)), 1, MILLI);
        assertThat(cursor.next(TOPICS, sweeps).after()).as("resumes after what it claimed since")
                .containsEntry("t", new ClaimPosition(0, due, 5));

        cursor.advance(List.of(message("t", 6)), 1, MILLI);
        cursor.rewind("t", new ClaimPosition(0, due, 50));
        assertThat(cursor.next(TOPICS, sweeps).after()).as("a promotion ahead of the position changes nothing")
                .containsEntry("t", new ClaimPosition(0, due, 6));
    }

    @Test
    void aPromotionDueLongerThanASweepIntervalAgoIsLeftToTheSweep() {
        Instant due = Instant.parse("2026-01-01T00:00:00Z");
        ClaimCursor cursor = new ClaimCursor(SWEEP, clock);
        cursor.next(TOPICS, sweeps);
        cursor.advance(List.of(message("t", 9)), 1, MILLI);
        now = now.plus(SWEEP).plusSeconds(1);

        assertThat(cursor.rewind("t", new ClaimPosition(0, due, 5))).isFalse();

        assertThat(cursor.next(TOPICS, sweeps).after()).containsEntry("t", new ClaimPosition(0, due, 9));
    }
}
