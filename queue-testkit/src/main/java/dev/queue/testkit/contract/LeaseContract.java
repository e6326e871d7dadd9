package dev.queue.testkit.contract;

import dev.queue.api.Delivery;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.MessageInfo;
import dev.queue.api.MessageState;
import dev.queue.api.Outcome;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Leases: every guarded operation from every state the message can be in when the caller acts, lease expiry and
 * redelivery, and extension.
 */
public abstract class LeaseContract extends ContractSupport {

    /** The guarded operations a lease holder can call. */
    public enum Operation {
        ACK, ACK_ALL, NACK, NACK_WITH_DELAY, FAIL, EXTEND
    }

    private static final Duration NACK_DELAY = Duration.ofMinutes(2);
    private static final Duration EXTENSION = Duration.ofMinutes(5);
    private static final Duration VISIBILITY = Duration.ofSeconds(30);

    private MessageId id;
    private Delivery first;

    /** A message with attempts to spare, leased by {@link #WORKER} for 30 s. */
    private void leaseOne() {
        id = publish(Message.to("t").json("{\"n\":1}").maxAttempts(5));
        first = ns.pullOne(pull("t").visibility(VISIBILITY)).orElseThrow();
        assertThat(first.id()).isEqualTo(id);
    }

    private Outcome apply(Operation operation, Delivery delivery) {
        switch (operation) {
            case ACK:
                return ns.ack(delivery);
            case ACK_ALL: {
                Map<MessageId, Outcome> outcomes = ns.ackAll(List.of(delivery));
                assertThat(outcomes).containsOnlyKeys(delivery.id());
                return outcomes.get(delivery.id());
            }
            case NACK:
                return ns.nack(delivery, "boom");
            case NACK_WITH_DELAY:
                return ns.nack(delivery, "boom", NACK_DELAY);
            case FAIL:
                return ns.fail(delivery, "boom");
            case EXTEND:
                return ns.extend(delivery, EXTENSION);
            default:
                throw new AssertionError(operation);
        }
    }

    private void assertLeaseLostAndNothingChanged(Operation operation) {
        Snapshot before = snapshot(id);

        assertThat(apply(operation, first)).as("%s with a lost lease", operation).isEqualTo(Outcome.LEASE_LOST);

        assertUnchanged(before, id);
    }

    // ---- (a) the message is running under this lease ----

    @ParameterizedTest(name = "{0}")
    @EnumSource(Operation.class)
    public void operationOnCurrentLeaseTakesEffect(Operation operation) {
        leaseOne();
        Instant at = now();

        Outcome outcome = apply(operation, first);

        switch (operation) {
            case ACK:
            case ACK_ALL:
                assertThat(outcome).isEqualTo(Outcome.ACKED);
                assertGone(id);
                assertThat(ns.stats().running()).isZero();
                assertThat(ns.stats().pending()).isZero();
                assertCompleted(ns.stats(), 1);
                break;
            case NACK: {
                assertThat(outcome).isEqualTo(Outcome.RETRY_SCHEDULED);
                MessageInfo info = info(id);
                assertThat(info.state()).isEqualTo(MessageState.PENDING);
                assertThat(info.attempts()).isEqualTo(1);
                assertThat(info.lastError()).isEqualTo("boom");
                assertThat(info.leaseUntil()).isNull();
                // default backoff: 1 s with 20% jitter for the first retry
                assertThat(info.runAt()).isBetween(at.plusMillis(800), at.plusMillis(1200));
                assertThat(ns.stats().pending()).isEqualTo(1);
                assertThat(ns.stats().running()).isZero();
                break;
            }
            case NACK_WITH_DELAY: {
                assertThat(outcome).isEqualTo(Outcome.RETRY_SCHEDULED);
                MessageInfo info = info(id);
                assertThat(info.state()).isEqualTo(MessageState.PENDING);
                assertThat(info.runAt()).isEqualTo(at.plus(NACK_DELAY));
                assertThat(info.lastError()).isEqualTo("boom");
                assertThat(ns.stats().pending()).isEqualTo(1);
                break;
            }
            case FAIL: {
                assertThat(outcome).isEqualTo(Outcome.DEAD_LETTERED);
                MessageInfo info = info(id);
                assertThat(info.state()).isEqualTo(MessageState.DEAD);
                assertThat(info.lastError()).isEqualTo("boom");
                assertThat(ns.deadLetters().get(id)).isPresent();
                assertThat(ns.stats().dead()).isEqualTo(1);
                assertThat(ns.stats().running()).isZero();
                break;
            }
            case EXTEND: {
                assertThat(outcome).isEqualTo(Outcome.EXTENDED);
                MessageInfo info = info(id);
                assertThat(info.state()).isEqualTo(MessageState.RUNNING);
                assertThat(info.leaseUntil()).isEqualTo(at.plus(EXTENSION));
                assertThat(info.worker()).isEqualTo(WORKER);
                assertThat(info.attempts()).isEqualTo(1);
                assertThat(ns.stats().running()).isEqualTo(1);
                break;
            }
            default:
                throw new AssertionError(operation);
        }
    }

    // ---- (b) running again under another worker's newer lease ----

    @ParameterizedTest(name = "{0}")
    @EnumSource(Operation.class)
    public void operationAfterLeaseExpiredAndOtherWorkerReclaimedIsLeaseLost(Operation operation) {
        leaseOne();
        advance(VISIBILITY.plusSeconds(1));
        Delivery second = pullOne("t", "w2");
        assertThat(second.id()).isEqualTo(id);
        assertThat(second.attempt()).isEqualTo(2);

        assertLeaseLostAndNothingChanged(operation);

        assertThat(info(id).worker()).isEqualTo("w2");
        assertThat(ns.ack(second)).isEqualTo(Outcome.ACKED);
    }

    // ---- (c) pending again after a nack ----

    @ParameterizedTest(name = "{0}")
    @EnumSource(Operation.class)
    public void operationAfterNackIsLeaseLost(Operation operation) {
        leaseOne();
        assertThat(ns.nack(first, "first failure", Duration.ofMinutes(1))).isEqualTo(Outcome.RETRY_SCHEDULED);

        assertLeaseLostAndNothingChanged(operation);

        assertThat(info(id).state()).isEqualTo(MessageState.PENDING);
    }

    // ---- (c') pending again after its expired lease was rescued ----

    @ParameterizedTest(name = "{0}")
    @EnumSource(Operation.class)
    public void operationAfterExpiredLeaseWasRescuedIsLeaseLost(Operation operation) {
        leaseOne();
        advance(VISIBILITY.plusSeconds(1));
        // a pull of another topic runs the rescue of the namespace's expired leases
        assertThat(ns.pull(pull("elsewhere"))).isEmpty();
        assertThat(info(id).state()).isEqualTo(MessageState.PENDING);

        assertLeaseLostAndNothingChanged(operation);
    }

    // ---- (d) completed ----

    @ParameterizedTest(name = "{0}")
    @EnumSource(Operation.class)
    public void operationAfterAckIsLeaseLost(Operation operation) {
        leaseOne();
        assertThat(ns.ack(first)).isEqualTo(Outcome.ACKED);

        assertLeaseLostAndNothingChanged(operation);

        assertGone(id);
        assertCompleted(ns.stats(), 1);
    }

    // ---- (e) dead ----

    @ParameterizedTest(name = "{0}")
    @EnumSource(Operation.class)
    public void operationAfterDeadLetteringIsLeaseLost(Operation operation) {
        leaseOne();
        assertThat(ns.fail(first, "dead already")).isEqualTo(Outcome.DEAD_LETTERED);

        assertLeaseLostAndNothingChanged(operation);

        assertThat(info(id).state()).isEqualTo(MessageState.DEAD);
        assertThat(info(id).lastError()).isEqualTo("dead already");
    }

    // ---- expiry and extension ----

    @Test
    public void expiredLeaseIsRedeliveredToNextPuller() {
        leaseOne();

        advance(Duration.ofSeconds(31));
        Delivery second = pullOne("t", "w2");

        assertThat(second.id()).isEqualTo(id);
        assertThat(second.attempt()).isEqualTo(2);
        assertThat(second.leaseToken()).isNotEqualTo(first.leaseToken());
        assertThat(ns.ack(first)).isEqualTo(Outcome.LEASE_LOST);
        assertThat(ns.ack(second)).isEqualTo(Outcome.ACKED);
        assertGone(id);
    }

    @Test
    public void ackOfExpiredLeaseNobodyRescuedYetStillAcks() {
        // The guard is "running under this token"; an expired lease that no pull or sweep has rescued is still held.
        leaseOne();
        advance(Duration.ofMinutes(5));

        assertThat(ns.ack(first)).isEqualTo(Outcome.ACKED);

        assertGone(id);
        assertNothingDue("t");
    }

    @Test
    public void leaseEndingExactlyNowIsNotYetExpired() {
        leaseOne();

        advance(VISIBILITY);

        assertNothingDue("t");
        assertThat(info(id).state()).isEqualTo(MessageState.RUNNING);
    }

    @Test
    public void extendPushesLeaseEndFromNow() {
        leaseOne();
        advance(Duration.ofSeconds(20));

        assertThat(ns.extend(first, Duration.ofMinutes(1))).isEqualTo(Outcome.EXTENDED);

        assertThat(info(id).leaseUntil()).isEqualTo(START.plusSeconds(20).plus(Duration.ofMinutes(1)));
        assertThat(first.leaseUntil()).as("a Delivery is immutable").isEqualTo(START.plus(VISIBILITY));
    }

    @Test
    public void extendedLeaseIsNotRedeliveredAfterOriginalEnd() {
        leaseOne();
        ns.extend(first, Duration.ofMinutes(2));

        advance(Duration.ofSeconds(31));
        assertNothingDue("t");
        advance(Duration.ofSeconds(89));
        assertNothingDue("t");
        advance(Duration.ofSeconds(1));

        Delivery second = pullOne("t", "w2");
        assertThat(second.id()).isEqualTo(id);
        assertThat(second.attempt()).isEqualTo(2);
    }

    @Test
    public void extendMayShortenTheLease() {
        leaseOne();

        assertThat(ns.extend(first, Duration.ofSeconds(5))).isEqualTo(Outcome.EXTENDED);

        assertThat(info(id).leaseUntil()).isEqualTo(START.plusSeconds(5));
    }

    @Test
    public void newHolderCanExtendAndOldHolderCannot() {
        leaseOne();
        advance(Duration.ofSeconds(31));
        Delivery second = pullOne("t", "w2");

        assertThat(ns.extend(first, Duration.ofMinutes(10))).isEqualTo(Outcome.LEASE_LOST);
        assertThat(ns.extend(second, Duration.ofMinutes(10))).isEqualTo(Outcome.EXTENDED);
        assertThat(info(id).leaseUntil()).isEqualTo(now().plus(Duration.ofMinutes(10)));
    }

    @Test
    public void expiredLeaseRedeliveryCountsTowardsMaxAttempts() {
        leaseOne();
        for (int attempt = 2; attempt <= 5; attempt++) {
            advance(Duration.ofSeconds(31));
            Delivery again = pullOne("t");
            assertThat(again.attempt()).isEqualTo(attempt);
        }
        assertThat(info(id).attempts()).isEqualTo(5);

        advance(Duration.ofSeconds(31));
        assertNothingDue("t");

        assertThat(info(id).state()).isEqualTo(MessageState.DEAD);
    }
}
