package dev.queue.testkit.contract;

import dev.queue.api.Attempt;
import dev.queue.api.AttemptOutcome;
import dev.queue.api.Backoff;
import dev.queue.api.Delivery;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.MessageInfo;
import dev.queue.api.MessageState;
import dev.queue.api.Outcome;
import dev.queue.api.Pull;
import dev.queue.api.QueueOptions;
import dev.queue.testkit.Capability;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * Retries: nack outcomes, the backoff schedule of a topic (exact without jitter, bounded with it), explicit delays,
 * recorded errors, the attempt history, and redelivery after a lease expires.
 */
public abstract class RetryAndBackoffContract extends ContractSupport {

    /** Exponential 1 s doubling, capped at 8 s, no jitter. */
    protected static final String EXACT = "t";
    /** Exponential from 10 s with 50% jitter. */
    protected static final String JITTERED = "j";
    /** Exponential 1 s tripling, no jitter. */
    protected static final String TRIPLING = "m";
    /** Always 7 s. */
    protected static final String FIXED = "f";

    @Override
    protected QueueOptions options() {
        return super.options()
                .backoff(EXACT, Backoff.exponential(Duration.ofSeconds(1), Duration.ofSeconds(8)).withoutJitter())
                .backoff(JITTERED, Backoff.exponential(Duration.ofSeconds(10), Duration.ofHours(1)).jitter(0.5))
                .backoff(TRIPLING, Backoff.exponential(Duration.ofSeconds(1), Duration.ofHours(1)).multiplier(3).withoutJitter())
                .backoff(FIXED, Backoff.fixed(Duration.ofSeconds(7)));
    }

    @Test
    public void nackSchedulesRetryAndRecordsError() {
        MessageId id = publish(Message.to(EXACT).maxAttempts(5));
        Delivery delivery = pullOne(EXACT);

        assertThat(ns.nack(delivery, "timeout calling billing")).isEqualTo(Outcome.RETRY_SCHEDULED);

        MessageInfo info = info(id);
        assertThat(info.state()).isEqualTo(MessageState.PENDING);
        assertThat(info.attempts()).isEqualTo(1);
        assertThat(info.lastError()).isEqualTo("timeout calling billing");
        assertThat(info.leaseUntil()).isNull();
        assertThat(ns.stats().pending()).isEqualTo(1);
        assertThat(ns.stats().running()).isZero();
    }

    @Test
    public void inspectListsEveryFailedAttemptWithItsErrorWorkerAndNumber() {
        MessageId id = publish(Message.to(FIXED).maxAttempts(3));
        assertThat(info(id).attemptHistory()).isEmpty();
        ns.nack(pullOne(FIXED, "w1"), "first");
        advance(Duration.ofSeconds(7));
        ns.nack(pullOne(FIXED, "w2"), "second");
        advance(Duration.ofSeconds(7));
        assertThat(ns.fail(pullOne(FIXED, "w3"), "third")).isEqualTo(Outcome.DEAD_LETTERED);

        MessageInfo info = info(id);
        assertThat(info.state()).isEqualTo(MessageState.DEAD);
        assertThat(info.attemptHistory())
                .extracting(a -> a.attempt() + " " + a.error() + " " + a.worker())
                .containsExactly("1 first w1", "2 second w2", "3 third w3");
        assertThat(info.attemptHistory()).allSatisfy(a -> assertThat(a.endedAt()).isNotNull());
    }

    @Test
    public void theAttemptHistoryKeepsTheLastTwentyFailuresAndCountsTheRest() {
        MessageId id = publish(Message.to(FIXED).maxAttempts(30));
        for (int i = 1; i <= 25; i++) {
            assertThat(ns.nack(pullOne(FIXED), "failure " + i, Duration.ZERO)).isEqualTo(Outcome.RETRY_SCHEDULED);
        }
        MessageInfo info = info(id);
        assertThat(info.attemptHistory()).hasSize(MessageInfo.HISTORY_LIMIT)
                .extracting(a -> a.attempt() + " " + a.error())
                .startsWith("6 failure 6").endsWith("25 failure 25");
        assertThat(info.attemptsNotKept()).isEqualTo(5);

        // the count goes with the message to the dead letters and back
        assertThat(ns.fail(pullOne(FIXED), "failure 26")).isEqualTo(Outcome.DEAD_LETTERED);
        assertThat(ns.deadLetters().redrive(id)).isTrue();
        info = info(id);
        assertThat(info.attemptHistory()).hasSize(MessageInfo.HISTORY_LIMIT)
                .extracting(a -> a.attempt() + " " + a.outcome())
                .startsWith("7 RETRY").endsWith("25 RETRY", "26 DEAD");
        assertThat(info.attemptsNotKept()).isEqualTo(6);
    }

    @Test
    public void eachAttemptKeepsItsWorkerStartEndAndOutcomeThroughDeadLetteringAndRedrive() {
        MessageId id = publish(Message.to(FIXED).maxAttempts(3));
        Instant start1 = now();
        Delivery first = pullOne(FIXED, "w1");
        Instant end1 = advance(Duration.ofSeconds(2));
        assertThat(ns.nack(first, "first")).isEqualTo(Outcome.RETRY_SCHEDULED);

        Instant start2 = advance(Duration.ofSeconds(7));
        assertThat(ns.pullOne(Pull.from(FIXED).worker("w2").visibility(Duration.ofSeconds(30)))).isPresent();
        assertThat(info(id).attemptHistory())
                .extracting(Attempt::attempt, Attempt::outcome, Attempt::worker, Attempt::startedAt, Attempt::endedAt)
                .containsExactly(tuple(1, AttemptOutcome.RETRY, "w1", start1, end1),
                        tuple(2, AttemptOutcome.RUNNING, "w2", start2, null));

        Instant end2 = advance(Duration.ofSeconds(31));
        assertThat(ns.pull(pull("elsewhere"))).as("a pull rescues the expired lease").isEmpty();
        assertThat(info(id).state()).isEqualTo(MessageState.PENDING);

        Instant start3 = advance(Duration.ofSeconds(1));
        Delivery third = pullOne(FIXED, "w3");
        Instant end3 = advance(Duration.ofSeconds(3));
        assertThat(ns.fail(third, "third")).isEqualTo(Outcome.DEAD_LETTERED);

        List<Tuple> ended = List.of(
                tuple(1, AttemptOutcome.RETRY, "w1", start1, end1, "first"),
                tuple(2, AttemptOutcome.LEASE_EXPIRED, "w2", start2, end2, "lease expired"),
                tuple(3, AttemptOutcome.DEAD, "w3", start3, end3, "third"));
        MessageInfo dead = info(id);
        assertThat(dead.state()).isEqualTo(MessageState.DEAD);
        assertThat(dead.attemptHistory())
                .extracting(Attempt::attempt, Attempt::outcome, Attempt::worker, Attempt::startedAt, Attempt::endedAt,
                        Attempt::error)
                .containsExactlyElementsOf(ended);
        assertThat(dead.attemptHistory()).allSatisfy(a -> assertThat(a.startedAt()).isBeforeOrEqualTo(a.endedAt()));
        assertThat(dead.attemptsNotKept()).isZero();

        assertThat(ns.deadLetters().redrive(id)).isTrue();
        Instant start4 = advance(Duration.ofSeconds(1));
        assertThat(pullOne(FIXED, "w4").attempt()).isEqualTo(1);
        List<Attempt> history = info(id).attemptHistory();
        assertThat(history.subList(0, 3))
                .extracting(Attempt::attempt, Attempt::outcome, Attempt::worker, Attempt::startedAt, Attempt::endedAt,
                        Attempt::error)
                .containsExactlyElementsOf(ended);
        assertThat(history.subList(3, history.size()))
                .extracting(Attempt::attempt, Attempt::outcome, Attempt::worker, Attempt::startedAt, Attempt::endedAt)
                .containsExactly(tuple(1, AttemptOutcome.RUNNING, "w4", start4, null));
    }

    @Test
    public void aLeaseExpiringOnTheLastAttemptEndsItAsDead() {
        MessageId id = publish(Message.to(FIXED).maxAttempts(1));
        Instant start = now();
        assertThat(ns.pullOne(Pull.from(FIXED).worker("w1").visibility(Duration.ofSeconds(30)))).isPresent();
        Instant end = advance(Duration.ofSeconds(31));
        assertThat(ns.pull(pull("elsewhere"))).as("a pull rescues the expired lease").isEmpty();

        MessageInfo dead = info(id);
        assertThat(dead.state()).isEqualTo(MessageState.DEAD);
        assertThat(dead.attemptHistory())
                .extracting(Attempt::attempt, Attempt::outcome, Attempt::worker, Attempt::startedAt, Attempt::endedAt)
                .containsExactly(tuple(1, AttemptOutcome.DEAD, "w1", start, end));
    }

    @Test
    public void aCancelledMessageLeavesWithItsAttemptHistory() {
        requires(Capability.FLOW_CONTROL);
        MessageId id = publish(Message.to(FIXED).maxAttempts(5));
        ns.nack(pullOne(FIXED, "w1"), "first");
        advance(Duration.ofSeconds(7));
        pullOne(FIXED, "w2");
        assertThat(info(id).attemptHistory()).extracting(Attempt::outcome)
                .containsExactly(AttemptOutcome.RETRY, AttemptOutcome.RUNNING);

        assertThat(ns.flowControl().cancel(id)).contains(MessageState.RUNNING);

        assertThat(ns.inspect(id)).isEmpty();
    }

    @Test
    public void backoffScheduleDoublesUpToCapWithoutJitter() {
        MessageId id = publish(Message.to(EXACT).maxAttempts(10));
        long[] expectedSeconds = {1, 2, 4, 8, 8, 8};

        for (int i = 0; i < expectedSeconds.length; i++) {
            Delivery delivery = pullOne(EXACT);
            assertThat(delivery.id()).isEqualTo(id);
            assertThat(delivery.attempt()).isEqualTo(i + 1);
            Instant nackedAt = now();

            assertThat(ns.nack(delivery, "failure " + (i + 1))).isEqualTo(Outcome.RETRY_SCHEDULED);

            Duration wait = Duration.ofSeconds(expectedSeconds[i]);
            MessageInfo info = info(id);
            assertThat(info.runAt()).as("due time after failure of attempt %d", i + 1).isEqualTo(nackedAt.plus(wait));
            assertThat(info.lastError()).isEqualTo("failure " + (i + 1));
            advance(wait.minusMillis(1));
            assertNothingDue(EXACT);
            advance(Duration.ofMillis(1));
        }
        assertThat(pullOne(EXACT).attempt()).isEqualTo(expectedSeconds.length + 1);
    }

    @Test
    public void multiplierShapesTheSchedule() {
        MessageId id = publish(Message.to(TRIPLING).maxAttempts(10));
        long[] expectedSeconds = {1, 3, 9, 27};

        for (long seconds : expectedSeconds) {
            Delivery delivery = pullOne(TRIPLING);
            Instant nackedAt = now();
            ns.nack(delivery, "again");
            assertThat(info(id).runAt()).isEqualTo(nackedAt.plusSeconds(seconds));
            advance(Duration.ofSeconds(seconds));
        }
    }

    @Test
    public void fixedBackoffWaitsTheSameEveryTime() {
        MessageId id = publish(Message.to(FIXED).maxAttempts(10));

        for (int i = 0; i < 3; i++) {
            Delivery delivery = pullOne(FIXED);
            Instant nackedAt = now();
            ns.nack(delivery, "again");
            assertThat(info(id).runAt()).isEqualTo(nackedAt.plusSeconds(7));
            advance(Duration.ofSeconds(7));
        }
    }

    @Test
    public void retryIsNotDueOneMillisecondEarlyAndIsDueExactlyOnTime() {
        MessageId id = publish(Message.to(FIXED).maxAttempts(5));
        ns.nack(pullOne(FIXED), "later");

        advance(Duration.ofSeconds(7).minusMillis(1));
        assertNothingDue(FIXED);
        advance(Duration.ofMillis(1));

        Delivery again = pullOne(FIXED);
        assertThat(again.id()).isEqualTo(id);
        assertThat(again.attempt()).isEqualTo(2);
    }

    @Test
    public void explicitNackDelayOverridesBackoff() {
        MessageId id = publish(Message.to(EXACT).maxAttempts(5));
        Delivery delivery = pullOne(EXACT);

        assertThat(ns.nack(delivery, "slow down", Duration.ofMinutes(5))).isEqualTo(Outcome.RETRY_SCHEDULED);

        assertThat(info(id).runAt()).isEqualTo(START.plus(Duration.ofMinutes(5)));
        advance(Duration.ofMinutes(5).minusMillis(1));
        assertNothingDue(EXACT);
        advance(Duration.ofMillis(1));
        assertThat(pullOne(EXACT).id()).isEqualTo(id);
    }

    @Test
    public void nackWithZeroDelayIsDueImmediately() {
        MessageId id = publish(Message.to(EXACT).maxAttempts(5));
        ns.nack(pullOne(EXACT), "again", Duration.ZERO);

        assertThat(info(id).runAt()).isEqualTo(START);
        Delivery again = pullOne(EXACT);
        assertThat(again.id()).isEqualTo(id);
        assertThat(again.attempt()).isEqualTo(2);
    }

    @Test
    public void jitterStaysWithinBoundsAndVaries() {
        int count = 200;
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            batch.add(Message.to(JITTERED).maxAttempts(5));
        }
        ns.publishAll(batch);
        List<Delivery> deliveries = ns.pull(pull(JITTERED).limit(count));
        assertThat(deliveries).hasSize(count);
        Instant nackedAt = now();

        Set<Instant> dueTimes = new HashSet<>();
        for (Delivery delivery : deliveries) {
            assertThat(ns.nack(delivery, "jittered")).isEqualTo(Outcome.RETRY_SCHEDULED);
            Instant runAt = info(delivery.id()).runAt();
            assertThat(runAt).isBetween(nackedAt.plusSeconds(5), nackedAt.plusSeconds(15));
            dueTimes.add(runAt);
        }
        assertThat(dueTimes).as("distinct due times of %d jittered retries", count).hasSizeGreaterThan(10);
    }

    @Test
    public void defaultBackoffAppliesToTopicsWithoutOwnBackoff() {
        MessageId id = publish(Message.to("unconfigured").maxAttempts(5));
        ns.nack(pullOne("unconfigured"), "default backoff");

        // Backoff.DEFAULT: 1 s for the first retry, spread by 20% either way.
        assertThat(info(id).runAt()).isBetween(START.plusMillis(800), START.plusMillis(1200));
    }

    @Test
    public void nackOnLastAttemptDeadLetters() {
        MessageId id = publish(Message.to(EXACT).maxAttempts(2));
        ns.nack(pullOne(EXACT), "first");
        advance(Duration.ofSeconds(1));
        Delivery last = pullOne(EXACT);
        assertThat(last.isLastAttempt()).isTrue();

        assertThat(ns.nack(last, "second")).isEqualTo(Outcome.DEAD_LETTERED);

        assertThat(info(id).state()).isEqualTo(MessageState.DEAD);
        assertThat(info(id).attempts()).isEqualTo(2);
        assertThat(info(id).lastError()).isEqualTo("second");
    }

    @Test
    public void lastErrorIsReplacedByEachFailure() {
        MessageId id = publish(Message.to(EXACT).maxAttempts(5));
        ns.nack(pullOne(EXACT), "first");
        advance(Duration.ofSeconds(1));
        ns.nack(pullOne(EXACT), "second");

        assertThat(info(id).lastError()).isEqualTo("second");
    }

    @Test
    public void lastErrorIsKeptWhileRunningAgain() {
        MessageId id = publish(Message.to(EXACT).maxAttempts(5));
        ns.nack(pullOne(EXACT), "first");
        advance(Duration.ofSeconds(1));
        pullOne(EXACT);

        assertThat(info(id).lastError()).isEqualTo("first");
    }

    @Test
    public void expiredLeaseIsRedeliveredWithNextAttemptAndNewToken() {
        MessageId id = publish(Message.to(EXACT).maxAttempts(5));
        Delivery first = ns.pullOne(pull(EXACT).visibility(Duration.ofSeconds(30))).orElseThrow();

        advance(Duration.ofSeconds(31));
        Delivery second = pullOne(EXACT, "w2");

        assertThat(second.id()).isEqualTo(id);
        assertThat(second.attempt()).isEqualTo(2);
        assertThat(second.leaseToken()).isNotEqualTo(first.leaseToken());
        assertThat(second.worker()).isEqualTo("w2");
        assertThat(ns.ack(first)).isEqualTo(Outcome.LEASE_LOST);
        assertThat(info(id).state()).isEqualTo(MessageState.RUNNING);
        assertThat(ns.ack(second)).isEqualTo(Outcome.ACKED);
        assertGone(id);
    }

    @Test
    public void expiredLeaseRecordsLeaseExpiredAsLastError() {
        MessageId id = publish(Message.to(EXACT).maxAttempts(5));
        pullOne(EXACT);

        advance(Duration.ofSeconds(31));
        pullOne(EXACT, "w2");

        assertThat(info(id).lastError()).isEqualTo("lease expired");
    }
}
