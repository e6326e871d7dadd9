package dev.queue.testkit.contract;

import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.MessageState;
import dev.queue.api.Namespace;
import dev.queue.api.PublishResult;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Unique keys: a key is held while its message is pending or running, per namespace and topic. */
public abstract class DedupContract extends ContractSupport {

    private static final String KEY = "sync:user:42";

    private Message keyed(String topic) {
        return Message.to(topic).uniqueKey(KEY);
    }

    @Test
    public void duplicateWhilePendingReturnsExistingIdAndStoresNothing() {
        MessageId first = publish(keyed("t"));

        PublishResult second = ns.publish(keyed("t"));

        assertThat(second).isEqualTo(new PublishResult.Duplicate(first, KEY));
        assertThat(second.isDuplicate()).isTrue();
        assertThat(ns.stats().pending()).isEqualTo(1);
        assertThat(ns.stats().total()).isEqualTo(1);
        assertThat(info(first).uniqueKey()).isEqualTo(KEY);
    }

    @Test
    public void duplicateDoesNotChangeTheExistingMessage() {
        MessageId first = publish(keyed("t").json("{\"v\":1}").priority(5));
        var before = snapshot(first);

        ns.publish(keyed("t").json("{\"v\":2}").priority(0).delay(Duration.ofHours(1)));

        assertUnchanged(before, first);
    }

    @Test
    public void duplicateWhileRunningReturnsExistingId() {
        MessageId first = publish(keyed("t"));
        pullOne("t");

        PublishResult second = ns.publish(keyed("t"));

        assertThat(second).isEqualTo(new PublishResult.Duplicate(first, KEY));
        assertThat(ns.stats().total()).isEqualTo(1);
    }

    @Test
    public void duplicateWhileWaitingForRetry() {
        MessageId first = publish(keyed("t"));
        ns.nack(pullOne("t"), "later", Duration.ofMinutes(5));

        assertThat(ns.publish(keyed("t"))).isEqualTo(new PublishResult.Duplicate(first, KEY));
    }

    @Test
    public void keyIsFreeAfterAck() {
        MessageId first = publish(keyed("t"));
        ns.ack(pullOne("t"));

        PublishResult second = ns.publish(keyed("t"));

        assertThat(second).isInstanceOf(PublishResult.Published.class);
        assertThat(second.id()).isNotEqualTo(first);
        assertThat(info(second.id()).state()).isEqualTo(MessageState.PENDING);
    }

    @Test
    public void keyIsFreeAfterDeadLettering() {
        MessageId first = publish(keyed("t"));
        ns.fail(pullOne("t"), "dead");

        PublishResult second = ns.publish(keyed("t"));

        assertThat(second).isInstanceOf(PublishResult.Published.class);
        assertThat(second.id()).isNotEqualTo(first);
        assertThat(ns.stats().pending()).isEqualTo(1);
        assertThat(ns.stats().dead()).isEqualTo(1);
    }

    @Test
    public void keyIsFreeAfterRunningOutOfAttempts() {
        publish(keyed("t").maxAttempts(1));
        ns.nack(pullOne("t"), "last");

        assertThat(ns.publish(keyed("t"))).isInstanceOf(PublishResult.Published.class);
    }

    @Test
    public void sameKeyOnAnotherTopicIsNotDuplicate() {
        publish(keyed("a"));

        assertThat(ns.publish(keyed("b"))).isInstanceOf(PublishResult.Published.class);
        assertThat(ns.stats().pending()).isEqualTo(2);
    }

    @Test
    public void sameKeyInAnotherNamespaceIsNotDuplicate() {
        publish(keyed("t"));
        Namespace other = queue.namespace("contract-other");

        assertThat(other.publish(keyed("t"))).isInstanceOf(PublishResult.Published.class);
        assertThat(other.stats().pending()).isEqualTo(1);
        assertThat(ns.stats().pending()).isEqualTo(1);
    }

    @Test
    public void differentKeysOnOneTopicAreNotDuplicates() {
        publish(Message.to("t").uniqueKey("k1"));

        assertThat(ns.publish(Message.to("t").uniqueKey("k2"))).isInstanceOf(PublishResult.Published.class);
        assertThat(ns.publish(Message.to("t"))).isInstanceOf(PublishResult.Published.class);
        assertThat(ns.stats().pending()).isEqualTo(3);
    }

    @Test
    public void laterMessageInOneBatchIsDuplicateOfEarlierOne() {
        List<PublishResult> results = ns.publishAll(List.of(
                keyed("t").json("{\"n\":1}"),
                Message.to("t").json("{\"n\":2}"),
                keyed("t").json("{\"n\":3}")));

        assertThat(results.get(0)).isInstanceOf(PublishResult.Published.class);
        assertThat(results.get(1)).isInstanceOf(PublishResult.Published.class);
        assertThat(results.get(2)).isEqualTo(new PublishResult.Duplicate(results.get(0).id(), KEY));
        assertThat(ns.stats().pending()).isEqualTo(2);
        assertThat(info(results.get(0).id()).json()).isEqualTo("{\"n\":1}");
    }

    @Test
    public void batchMessageIsDuplicateOfAlreadyStoredMessage() {
        MessageId existing = publish(keyed("t"));

        List<PublishResult> results = ns.publishAll(List.of(Message.to("t"), keyed("t")));

        assertThat(results.get(0)).isInstanceOf(PublishResult.Published.class);
        assertThat(results.get(1)).isEqualTo(new PublishResult.Duplicate(existing, KEY));
        assertThat(ns.stats().pending()).isEqualTo(2);
    }

    @Test
    public void concurrentPublishersOfOneKeyStoreExactlyOne() throws Exception {
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch ready = new CountDownLatch(threads);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<PublishResult>> futures = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                int n = i;
                futures.add(pool.submit(() -> {
                    ready.countDown();
                    assertThat(go.await(10, TimeUnit.SECONDS)).isTrue();
                    return ns.publish(keyed("t").json("{\"publisher\":" + n + "}"));
                }));
            }
            assertThat(ready.await(10, TimeUnit.SECONDS)).isTrue();
            go.countDown();
            List<PublishResult> results = new ArrayList<>();
            for (Future<PublishResult> future : futures) {
                results.add(future.get(10, TimeUnit.SECONDS));
            }

            List<PublishResult> published = results.stream().filter(r -> !r.isDuplicate()).toList();
            assertThat(published).hasSize(1);
            MessageId winner = published.get(0).id();
            assertThat(results).filteredOn(PublishResult::isDuplicate).hasSize(threads - 1)
                    .allSatisfy(r -> assertThat(r).isEqualTo(new PublishResult.Duplicate(winner, KEY)));
            assertThat(ns.stats().pending()).isEqualTo(1);
            assertThat(ns.pull(pull("t").limit(100))).hasSize(1);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    public void redriveLeavesDeadLetterDeadWhileItsKeyIsHeldByLiveMessage() {
        MessageId dead = publish(keyed("t"));
        ns.fail(pullOne("t"), "dead");
        MessageId live = publish(keyed("t"));

        assertThat(ns.deadLetters().redrive(dead)).isFalse();

        assertThat(info(dead).state()).isEqualTo(MessageState.DEAD);
        assertThat(info(live).state()).isEqualTo(MessageState.PENDING);
        assertThat(ns.stats().pending()).isEqualTo(1);
        assertThat(ns.stats().dead()).isEqualTo(1);
    }

    @Test
    public void redrivenMessageHoldsItsKeyAgain() {
        MessageId dead = publish(keyed("t"));
        ns.fail(pullOne("t"), "dead");

        assertThat(ns.deadLetters().redrive(dead)).isTrue();

        assertThat(ns.publish(keyed("t"))).isEqualTo(new PublishResult.Duplicate(dead, KEY));
    }
}
