package dev.queue.testkit.contract;

import dev.queue.api.DeadLetter;
import dev.queue.api.Delivery;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.MessageInfo;
import dev.queue.api.MessageState;
import dev.queue.api.Outcome;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Finishing a message: ack, ackAll and fail, and how error texts are recorded. */
public abstract class CompleteContract extends ContractSupport {

    @Test
    public void ackRemovesMessageAndCountsItCompleted() {
        MessageId id = publish("t", "{}");
        Delivery delivery = pullOne("t");

        assertThat(ns.ack(delivery)).isEqualTo(Outcome.ACKED);

        assertGone(id);
        assertThat(ns.stats().pending()).isZero();
        assertThat(ns.stats().running()).isZero();
        assertThat(ns.stats().dead()).isZero();
        assertCompleted(ns.stats(), 1);
    }

    @Test
    public void secondAckOfSameDeliveryIsLeaseLost() {
        publish("t", "{}");
        Delivery delivery = pullOne("t");
        ns.ack(delivery);

        assertThat(ns.ack(delivery)).isEqualTo(Outcome.LEASE_LOST);
        assertCompleted(ns.stats(), 1);
    }

    @Test
    public void ackedMessageIsNeverDeliveredAgain() {
        publish("t", "{}");
        ns.ack(pullOne("t"));

        advance(Duration.ofHours(2));

        assertNothingDue("t");
    }

    @Test
    public void ackAfterExtendStillAcks() {
        MessageId id = publish("t", "{}");
        Delivery delivery = pullOne("t");
        assertThat(ns.extend(delivery, Duration.ofMinutes(5))).isEqualTo(Outcome.EXTENDED);

        assertThat(ns.ack(delivery)).isEqualTo(Outcome.ACKED);
        assertGone(id);
    }

    @Test
    public void ackAllReportsEachDeliveryAndAcksOnlyHeldOnes() {
        MessageId first = publish("t", "{}");
        MessageId second = publish("t", "{}");
        MessageId third = publish("t", "{}");
        List<Delivery> batch = ns.pull(pull("t").limit(3));
        Delivery alreadyAcked = batch.stream().filter(d -> d.id().equals(second)).findFirst().orElseThrow();
        ns.ack(alreadyAcked);

        Map<MessageId, Outcome> outcomes = ns.ackAll(batch);

        assertThat(outcomes).containsExactlyInAnyOrderEntriesOf(Map.of(
                first, Outcome.ACKED, second, Outcome.LEASE_LOST, third, Outcome.ACKED));
        assertGone(first);
        assertGone(third);
        assertCompleted(ns.stats(), 3);
    }

    @Test
    public void ackAllOfNoDeliveriesReturnsEmptyMap() {
        assertThat(ns.ackAll(List.of())).isEmpty();
    }

    @Test
    public void completedCounterIsKeptPerTopic() {
        publish("a", "{}");
        publish("a", "{}");
        publish("b", "{}");
        ns.ack(pullOne("a"));
        ns.ack(pullOne("a"));
        ns.ack(pullOne("b"));

        assertThat(ns.stats().pending() + ns.stats().running()).isZero();
        requires(dev.queue.testkit.Capability.COMPLETED_COUNTS);
        assertThat(ns.stats().topic("a").completed()).isEqualTo(2);
        assertThat(ns.stats().topic("b").completed()).isEqualTo(1);
        assertThat(ns.stats().completed()).isEqualTo(3);
    }

    @Test
    public void failMakesDeadLetterAtOnceWhateverAttemptsLeft() {
        MessageId id = publish(Message.to("t").maxAttempts(20));
        Delivery delivery = pullOne("t");

        assertThat(ns.fail(delivery, "bad data")).isEqualTo(Outcome.DEAD_LETTERED);

        MessageInfo info = info(id);
        assertThat(info.state()).isEqualTo(MessageState.DEAD);
        assertThat(info.attempts()).isEqualTo(1);
        assertThat(info.lastError()).isEqualTo("bad data");
        assertThat(ns.stats().dead()).isEqualTo(1);
        assertThat(ns.stats().running()).isZero();
        DeadLetter dead = ns.deadLetters().get(id).orElseThrow();
        assertThat(dead.lastError()).isEqualTo("bad data");
        assertThat(dead.attempts()).isEqualTo(1);
        assertThat(dead.maxAttempts()).isEqualTo(20);
    }

    @Test
    public void failedMessageIsNotDeliveredAgain() {
        publish("t", "{}");
        ns.fail(pullOne("t"), "no");

        advance(Duration.ofDays(1));

        assertNothingDue("t");
    }

    @Test
    public void failWithoutReasonRecordsNoReasonGiven() {
        MessageId id = publish("t", "{}");

        ns.fail(pullOne("t"), null);

        assertThat(info(id).lastError()).isEqualTo("no reason given");
    }

    @Test
    public void failReasonLongerThan8000CharsIsCut() {
        MessageId id = publish("t", "{}");
        String reason = "x".repeat(5000) + "y".repeat(5000);

        ns.fail(pullOne("t"), reason);

        String recorded = info(id).lastError();
        assertThat(recorded.length()).isLessThanOrEqualTo(8000);
        assertThat(recorded).startsWith("x".repeat(5000) + "y".repeat(2000));
    }

    @Test
    public void failReasonOfExactly8000CharsIsKeptWhole() {
        MessageId id = publish("t", "{}");
        String reason = "z".repeat(8000);

        ns.fail(pullOne("t"), reason);

        assertThat(info(id).lastError()).isEqualTo(reason);
    }

    @Test
    public void nulInFailReasonIsReplaced() {
        MessageId id = publish("t", "{}");

        ns.fail(pullOne("t"), "a\u0000b");

        assertThat(info(id).lastError()).isEqualTo("a\uFFFDb");
    }

    @Test
    public void nackReasonRulesMatchFailReasonRules() {
        MessageId nullReason = publish("t", "{}");
        MessageId nulReason = publish("t", "{}");

        ns.nack(pullOne("t"), null, Duration.ofMinutes(1));
        ns.nack(pullOne("t"), "c\u0000d", Duration.ofMinutes(1));

        assertThat(info(nullReason).lastError()).isEqualTo("no reason given");
        assertThat(info(nulReason).lastError()).isEqualTo("c\uFFFDd");
    }
}
