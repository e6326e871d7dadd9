package dev.queue.testkit.contract;

import dev.queue.api.Delivery;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.MessageInfo;
import dev.queue.api.MessageState;
import dev.queue.api.Outcome;
import dev.queue.api.Pull;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/** Pulling: attempts, lease fields, limits, exclusivity while leased, batches. */
public abstract class ClaimContract extends ContractSupport {

    @Test
    public void firstPullCountsAttemptOne() {
        MessageId id = publish("t", "{}");

        Delivery delivery = pullOne("t");

        assertThat(delivery.id()).isEqualTo(id);
        assertThat(delivery.attempt()).isEqualTo(1);
        assertThat(info(id).attempts()).isEqualTo(1);
        assertThat(info(id).state()).isEqualTo(MessageState.RUNNING);
    }

    @Test
    public void pullSetsLeaseFieldsAndRecordsWorker() {
        MessageId id = publish(Message.to("t").json("{\"k\":1}").header("h", "v").priority(4));

        Delivery delivery = ns.pullOne(Pull.from("t").worker("worker-7").visibility(Duration.ofSeconds(45))).orElseThrow();

        Instant expected = START.plusSeconds(45);
        assertThat(delivery.leaseUntil()).isEqualTo(expected);
        assertThat(delivery.worker()).isEqualTo("worker-7");
        assertThat(delivery.namespace()).isEqualTo(NAMESPACE);
        assertThat(delivery.topic()).isEqualTo("t");
        assertThat(delivery.json()).isEqualTo("{\"k\":1}");
        assertThat(delivery.headers()).containsExactly(Map.entry("h", "v"));
        assertThat(delivery.priority()).isEqualTo(4);
        assertThat(delivery.publishedAt()).isEqualTo(START);
        MessageInfo info = info(id);
        assertThat(info.state()).isEqualTo(MessageState.RUNNING);
        assertThat(info.leaseUntil()).isEqualTo(expected);
        assertThat(info.worker()).isEqualTo("worker-7");
    }

    @Test
    public void defaultVisibilityIsThirtySeconds() {
        publish("t", "{}");

        Delivery delivery = ns.pullOne(Pull.from("t").worker(WORKER)).orElseThrow();

        assertThat(delivery.leaseUntil()).isEqualTo(START.plus(Pull.DEFAULT_VISIBILITY));
    }

    @Test
    public void pullWithoutWorkerNameRecordsSomeWorker() {
        MessageId id = publish("t", "{}");

        Delivery delivery = ns.pullOne(Pull.from("t")).orElseThrow();

        assertThat(delivery.worker()).isNotBlank();
        assertThat(info(id).worker()).isEqualTo(delivery.worker());
    }

    @Test
    public void pullRespectsLimit() {
        for (int i = 0; i < 5; i++) {
            publish("t", "{}");
        }

        assertThat(ns.pull(pull("t").limit(3))).hasSize(3);
        assertThat(ns.pull(pull("t").limit(3))).hasSize(2);
        assertThat(ns.pull(pull("t").limit(3))).isEmpty();
    }

    @Test
    public void pullIsEmptyWhenNothingIsDue() {
        assertThat(ns.pull(pull("t").limit(10))).isEmpty();
        assertThat(ns.pullOne(pull("t"))).isEmpty();
    }

    @Test
    public void pullIsEmptyWhenOnlyOtherTopicsHaveMessages() {
        publish("other", "{}");

        assertThat(ns.pull(pull("t").limit(10))).isEmpty();
        assertThat(ns.stats().topic("other").pending()).isEqualTo(1);
    }

    @Test
    public void claimedMessageIsNotPulledAgainWhileLeased() {
        publish("t", "{}");
        pullOne("t");

        assertNothingDue("t");
        advance(Duration.ofSeconds(29));
        assertNothingDue("t");
        advance(Duration.ofSeconds(1));
        assertNothingDue("t");
    }

    @Test
    public void batchPullTakesTenOfTwentyFiveAndAckAllAcknowledgesThem() {
        List<MessageId> published = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
            published.add(publish("t", "{\"i\":" + i + "}"));
        }

        List<Delivery> batch = ns.pull(pull("t").limit(10));

        assertThat(batch).hasSize(10);
        Set<MessageId> ids = batch.stream().map(Delivery::id).collect(Collectors.toSet());
        assertThat(ids).hasSize(10).containsExactlyInAnyOrderElementsOf(published.subList(0, 10));
        assertThat(batch).allSatisfy(d -> assertThat(d.attempt()).isEqualTo(1));
        assertThat(ns.stats().running()).isEqualTo(10);
        assertThat(ns.stats().pending()).isEqualTo(15);

        Map<MessageId, Outcome> outcomes = ns.ackAll(batch);

        assertThat(outcomes).hasSize(10).containsOnlyKeys(ids);
        assertThat(outcomes.values()).containsOnly(Outcome.ACKED);
        assertThat(ns.stats().running()).isZero();
        assertThat(ns.stats().pending()).isEqualTo(15);
        ids.forEach(this::assertGone);
        assertCompleted(ns.stats(), 10);
    }

    @Test
    public void everyClaimGetsItsOwnLeaseToken() {
        publish("t", "{}");
        publish("t", "{}");
        publish("t", "{}");

        Set<Long> tokens = new HashSet<>();
        tokens.add(pullOne("t").leaseToken());
        tokens.add(pullOne("t").leaseToken());
        tokens.add(pullOne("t").leaseToken());

        assertThat(tokens).hasSize(3);
    }

    @Test
    public void pulledDeliveriesOfOneBatchShareNothingButAreAllRunning() {
        List<MessageId> ids = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            ids.add(publish("t", "{}"));
        }

        List<Delivery> batch = ns.pull(pull("t").limit(4).worker("batcher"));

        assertThat(batch).extracting(Delivery::id).doesNotHaveDuplicates();
        for (MessageId id : ids) {
            assertThat(info(id).state()).isEqualTo(MessageState.RUNNING);
            assertThat(info(id).worker()).isEqualTo("batcher");
        }
    }

    @Test
    public void pullLimitLargerThanAvailableReturnsAllDue() {
        publish("t", "{}");
        publish("t", "{}");
        publish(Message.to("t").delay(Duration.ofMinutes(1)));

        assertThat(ns.pull(pull("t").limit(1000))).hasSize(2);
    }
}
