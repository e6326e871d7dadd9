package dev.queue.testkit.contract;

import dev.queue.api.DeadLetter;
import dev.queue.api.DeadLetters;
import dev.queue.api.Delivery;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.MessageInfo;
import dev.queue.api.MessageState;
import dev.queue.api.Outcome;
import dev.queue.api.Page;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Dead letters: how messages get there, and listing, getting, redriving and purging them. */
public abstract class DeadLetterContract extends ContractSupport {

    private static final MessageId UNKNOWN = MessageId.of(987_654_321L);

    /** Publishes to the topic, pulls it and fails it; the topic must have nothing else due. */
    private MessageId deadLetter(String topic, String reason) {
        MessageId id = publish(Message.to(topic).json("{\"reason\":\"" + reason + "\"}"));
        Delivery delivery = pullOne(topic);
        assertThat(delivery.id()).isEqualTo(id);
        assertThat(ns.fail(delivery, reason)).isEqualTo(Outcome.DEAD_LETTERED);
        return id;
    }

    private DeadLetters dl() {
        return ns.deadLetters();
    }

    /** More dead letters than a store call of the engine redrives or purges at once. */
    private static final int BEYOND_ONE_BATCH = 2_345;

    /** Publishes {@code count} one-attempt messages to the topic and lets every lease expire: all dead letters. */
    private void manyDeadLetters(String topic, int count) {
        List<Message> batch = new java.util.ArrayList<>();
        for (int i = 0; i < count; i++) {
            batch.add(Message.to(topic).maxAttempts(1).json("{\"n\":" + i + "}"));
        }
        ns.publishAll(batch);
        int pulled = 0;
        while (pulled < count) {
            pulled += ns.pull(pull(topic).limit(1000).visibility(Duration.ofSeconds(30))).size();
        }
        advance(Duration.ofSeconds(31));
        // Each pull rescues at most a batch of expired leases, and at most once per sweep interval.
        for (int pass = 0; ns.stats().topic(topic).dead() < count && pass < 20; pass++) {
            assertThat(tryPullOne(topic)).isEmpty();
            advance(options().sweepInterval().plusMillis(1));
        }
        assertThat(ns.stats().topic(topic).dead()).isEqualTo(count);
    }

    @Test
    public void redriveAllAndPurgeAllReachEveryDeadLetterOfATopicHoweverMany() {
        manyDeadLetters("bulk", BEYOND_ONE_BATCH);
        manyDeadLetters("other", 3);

        assertThat(dl().redriveAll("bulk")).isEqualTo(BEYOND_ONE_BATCH);
        assertThat(ns.stats().topic("bulk").dead()).isZero();
        assertThat(ns.stats().topic("bulk").pending()).isEqualTo(BEYOND_ONE_BATCH);
        assertThat(ns.stats().topic("other").dead()).as("another topic's dead letters stay").isEqualTo(3);
        assertThat(ns.pull(pull("bulk").limit(1000))).hasSize(1000)
                .allSatisfy(delivery -> assertThat(delivery.attempt()).as("attempts start again").isEqualTo(1));
    }

    @Test
    public void purgeAllOfATopicDeletesEveryDeadLetterHoweverMany() {
        manyDeadLetters("bulk", BEYOND_ONE_BATCH);
        manyDeadLetters("other", 3);

        assertThat(dl().purgeAll("bulk")).isEqualTo(BEYOND_ONE_BATCH);
        assertThat(ns.stats().topic("bulk").dead()).isZero();
        assertThat(dl().list("bulk", Page.first(10))).isEmpty();
        assertThat(ns.stats().topic("other").dead()).isEqualTo(3);
        assertThat(dl().purgeAll()).isEqualTo(3);
    }

    @Test
    public void runningOutOfAttemptsThroughNackDeadLetters() {
        MessageId id = publish(Message.to("t").maxAttempts(3));
        for (int attempt = 1; attempt <= 2; attempt++) {
            assertThat(ns.nack(pullOne("t"), "failure " + attempt, Duration.ZERO)).isEqualTo(Outcome.RETRY_SCHEDULED);
        }

        assertThat(ns.nack(pullOne("t"), "failure 3", Duration.ZERO)).isEqualTo(Outcome.DEAD_LETTERED);

        MessageInfo info = info(id);
        assertThat(info.state()).isEqualTo(MessageState.DEAD);
        assertThat(info.attempts()).isEqualTo(3);
        assertThat(info.lastError()).isEqualTo("failure 3");
        assertThat(ns.stats().dead()).isEqualTo(1);
        assertThat(ns.stats().pending()).isZero();
        assertThat(dl().list(Page.first(10))).extracting(DeadLetter::id).containsExactly(id);
        assertNothingDue("t");
    }

    @Test
    public void leaseExpiryOnLastAttemptDeadLettersOnNextPull() {
        MessageId id = publish(Message.to("t").maxAttempts(1));
        ns.pullOne(pull("t").visibility(Duration.ofSeconds(30))).orElseThrow();

        advance(Duration.ofSeconds(31));
        assertNothingDue("t");

        MessageInfo info = info(id);
        assertThat(info.state()).isEqualTo(MessageState.DEAD);
        assertThat(info.attempts()).isEqualTo(1);
        assertThat(info.lastError()).isEqualTo("lease expired on its last attempt");
        assertThat(ns.stats().dead()).isEqualTo(1);
        assertThat(ns.stats().running()).isZero();
        assertThat(dl().get(id)).isPresent();
    }

    @Test
    public void leaseExpiryWithAttemptsLeftRequeuesInsteadOfDeadLettering() {
        MessageId id = publish(Message.to("t").maxAttempts(2));
        pullOne("t");

        advance(Duration.ofSeconds(31));
        Delivery again = pullOne("t");

        assertThat(again.id()).isEqualTo(id);
        assertThat(again.attempt()).isEqualTo(2);
        assertThat(dl().get(id)).isEmpty();
    }

    @Test
    public void deadLetterCarriesEverythingAboutTheMessage() {
        MessageId id = publish(Message.to("t").json("{\"x\": 1}").header("h", "v").priority(3).maxAttempts(4));
        Delivery delivery = pullOne("t");
        advance(Duration.ofSeconds(5));
        Instant failedAt = now();
        ns.fail(delivery, "broken");

        DeadLetter dead = dl().get(id).orElseThrow();

        assertThat(dead.id()).isEqualTo(id);
        assertThat(dead.namespace()).isEqualTo(NAMESPACE);
        assertThat(dead.topic()).isEqualTo("t");
        assertThat(dead.json()).isEqualTo("{\"x\": 1}");
        assertThat(dead.headers()).isEqualTo(Map.of("h", "v"));
        assertThat(dead.priority()).isEqualTo(3);
        assertThat(dead.attempts()).isEqualTo(1);
        assertThat(dead.maxAttempts()).isEqualTo(4);
        assertThat(dead.lastError()).isEqualTo("broken");
        assertThat(dead.publishedAt()).isEqualTo(START);
        assertThat(dead.failedAt()).isEqualTo(failedAt);
    }

    @Test
    public void listIsOldestFirstWithKeysetPaging() {
        MessageId a1 = deadLetter("a", "1");
        MessageId b1 = deadLetter("b", "2");
        MessageId a2 = deadLetter("a", "3");
        MessageId b2 = deadLetter("b", "4");
        MessageId a3 = deadLetter("a", "5");

        List<DeadLetter> first = dl().list(Page.first(2));
        assertThat(first).extracting(DeadLetter::id).containsExactly(a1, b1);
        List<DeadLetter> second = dl().list(Page.first(2).after(first.get(1).id()));
        assertThat(second).extracting(DeadLetter::id).containsExactly(a2, b2);
        List<DeadLetter> third = dl().list(Page.first(2).after(second.get(1).id()));
        assertThat(third).extracting(DeadLetter::id).containsExactly(a3);
        assertThat(dl().list(Page.first(2).after(a3))).isEmpty();
    }

    @Test
    public void listByTopicShowsOnlyThatTopic() {
        MessageId a1 = deadLetter("a", "1");
        deadLetter("b", "2");
        MessageId a2 = deadLetter("a", "3");
        deadLetter("b", "4");

        assertThat(dl().list("a", Page.first(10))).extracting(DeadLetter::id).containsExactly(a1, a2);
        assertThat(dl().list("a", Page.first(1).after(a1))).extracting(DeadLetter::id).containsExactly(a2);
        assertThat(dl().list("nothing-here", Page.first(10))).isEmpty();
    }

    @Test
    public void listDoesNotShowLiveMessages() {
        MessageId running = publish("t", "{}");
        MessageId pending = publish("t", "{}");
        assertThat(pullOne("t").id()).isEqualTo(running);
        MessageId dead = deadLetter("u", "x");

        assertThat(dl().list(Page.first(10))).extracting(DeadLetter::id).containsExactly(dead);
        assertThat(dl().list("t", Page.first(10))).isEmpty();
        assertThat(dl().get(running)).isEmpty();
        assertThat(dl().get(pending)).isEmpty();
    }

    @Test
    public void getOfUnknownOrLiveMessageIsEmpty() {
        MessageId live = publish("t", "{}");

        assertThat(dl().get(UNKNOWN)).isEmpty();
        assertThat(dl().get(live)).isEmpty();
    }

    @Test
    public void redriveMakesDeadLetterPendingAgainWithSameIdAndZeroAttempts() {
        MessageId id = deadLetter("t", "broken");
        advance(Duration.ofMinutes(10));
        Instant redrivenAt = now();

        assertThat(dl().redrive(id)).isTrue();

        MessageInfo info = info(id);
        assertThat(info.state()).isEqualTo(MessageState.PENDING);
        assertThat(info.attempts()).isZero();
        assertThat(info.runAt()).isEqualTo(redrivenAt);
        assertThat(info.lastError()).isEqualTo("broken");
        assertThat(dl().get(id)).isEmpty();
        assertThat(ns.stats().dead()).isZero();
        assertThat(ns.stats().pending()).isEqualTo(1);

        Delivery delivery = pullOne("t");
        assertThat(delivery.id()).isEqualTo(id);
        assertThat(delivery.attempt()).isEqualTo(1);
        assertThat(delivery.json()).isEqualTo("{\"reason\":\"broken\"}");
        assertThat(ns.ack(delivery)).isEqualTo(Outcome.ACKED);
    }

    @Test
    public void redriveAllRedrivesOnlyThatTopic() {
        MessageId a1 = deadLetter("a", "1");
        MessageId b1 = deadLetter("b", "2");
        MessageId a2 = deadLetter("a", "3");

        assertThat(dl().redriveAll("a")).isEqualTo(2);

        assertThat(info(a1).state()).isEqualTo(MessageState.PENDING);
        assertThat(info(a2).state()).isEqualTo(MessageState.PENDING);
        assertThat(info(b1).state()).isEqualTo(MessageState.DEAD);
        assertThat(ns.stats().topic("a").pending()).isEqualTo(2);
        assertThat(ns.stats().topic("b").dead()).isEqualTo(1);
        assertThat(dl().redriveAll("a")).isZero();
    }

    @Test
    public void purgeDeletesOneDeadLetterForGood() {
        MessageId gone = deadLetter("t", "1");
        MessageId kept = deadLetter("t", "2");

        assertThat(dl().purge(gone)).isTrue();

        assertThat(dl().get(gone)).isEmpty();
        assertThat(ns.inspect(gone)).isEmpty();
        assertThat(dl().get(kept)).isPresent();
        assertThat(ns.stats().dead()).isEqualTo(1);
        assertThat(dl().purge(gone)).isFalse();
        assertThat(dl().redrive(gone)).isFalse();
    }

    @Test
    public void purgeAllOfTopicDeletesOnlyThatTopic() {
        deadLetter("a", "1");
        MessageId b1 = deadLetter("b", "2");
        deadLetter("a", "3");

        assertThat(dl().purgeAll("a")).isEqualTo(2);

        assertThat(dl().list(Page.first(10))).extracting(DeadLetter::id).containsExactly(b1);
        assertThat(ns.stats().topic("a").dead()).isZero();
        assertThat(ns.stats().topic("b").dead()).isEqualTo(1);
    }

    @Test
    public void purgeAllDeletesEveryDeadLetterOfTheNamespaceButNoLiveMessage() {
        deadLetter("a", "1");
        deadLetter("b", "2");
        deadLetter("c", "3");
        MessageId live = publish("a", "{}");

        assertThat(dl().purgeAll()).isEqualTo(3);

        assertThat(dl().list(Page.first(10))).isEmpty();
        assertThat(ns.stats().dead()).isZero();
        assertThat(info(live).state()).isEqualTo(MessageState.PENDING);
        assertThat(dl().purgeAll()).isZero();
    }

    @Test
    public void redriveAndPurgeOfUnknownIdAreFalse() {
        assertThat(dl().redrive(UNKNOWN)).isFalse();
        assertThat(dl().purge(UNKNOWN)).isFalse();
        assertThat(ns.stats().total()).isZero();
    }

    @Test
    public void redriveAndPurgeOfLiveMessageAreFalseAndChangeNothing() {
        MessageId pending = publish("t", "{}");
        Snapshot before = snapshot(pending);

        assertThat(dl().redrive(pending)).isFalse();
        assertThat(dl().purge(pending)).isFalse();

        assertUnchanged(before, pending);
    }
}
