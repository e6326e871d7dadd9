package dev.queue.testkit.contract;

import dev.queue.api.Delivery;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.MessageState;
import dev.queue.api.Namespace;
import dev.queue.api.Outcome;
import dev.queue.api.Page;
import dev.queue.api.Pull;
import dev.queue.api.Queue;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

/** Isolation: nothing in one namespace is visible to, or changeable from, another. */
public abstract class NamespaceContract extends ContractSupport {

    private Namespace other() {
        return queue.namespace("other");
    }

    @Test
    public void namespaceHandleKnowsItsName() {
        assertThat(ns.name()).isEqualTo(NAMESPACE);
        assertThat(queue.defaultNamespace().name()).isEqualTo(Queue.DEFAULT_NAMESPACE);
    }

    @Test
    public void twoHandlesOfOneNamespaceSeeTheSameMessages() {
        MessageId id = publish("t", "{}");

        Namespace again = queue.namespace(NAMESPACE);

        assertThat(again.inspect(id)).isPresent();
        assertThat(again.pullOne(Pull.from("t").worker(WORKER))).map(Delivery::id).contains(id);
    }

    @Test
    public void otherNamespaceCannotPullMessages() {
        MessageId id = publish("t", "{}");

        assertThat(other().pull(Pull.from("t").worker(WORKER).limit(100))).isEmpty();
        assertThat(other().pull(Pull.fromAny("t", "u").worker(WORKER).limit(100))).isEmpty();
        assertThat(info(id).state()).isEqualTo(MessageState.PENDING);
        assertThat(info(id).attempts()).isZero();
    }

    @Test
    public void eachNamespacePullsOnlyItsOwnMessagesOfTheSameTopic() {
        MessageId mine = publish("t", "{\"ns\":\"a\"}");
        MessageId theirs = other().publish(Message.to("t").json("{\"ns\":\"b\"}")).id();

        assertThat(ns.pull(pull("t").limit(10))).extracting(Delivery::id).containsExactly(mine);
        List<Delivery> got = other().pull(Pull.from("t").worker(WORKER).limit(10));
        assertThat(got).extracting(Delivery::id).containsExactly(theirs);
        assertThat(got.get(0).namespace()).isEqualTo("other");
    }

    @Test
    public void otherNamespaceStatsAreEmpty() {
        publish("t", "{}");
        publish("u", "{}");
        ns.fail(pullOne("u"), "dead");

        assertThat(other().stats().total()).isZero();
        assertThat(other().stats().topicCount()).isZero();
        assertThat(other().stats().namespace()).isEqualTo("other");
        assertThat(ns.stats().total()).isEqualTo(2);
    }

    @Test
    public void otherNamespaceCannotInspect() {
        MessageId pending = publish("t", "{}");
        MessageId running = publish("t", "{}");
        MessageId dead = publish("u", "{}");
        pullOne("t");
        pullOne("t");
        ns.fail(pullOne("u"), "dead");

        assertThat(other().inspect(pending)).isEmpty();
        assertThat(other().inspect(running)).isEmpty();
        assertThat(other().inspect(dead)).isEmpty();
    }

    @Test
    public void otherNamespaceCannotSeeOrTouchDeadLetters() {
        MessageId dead = publish("t", "{}");
        ns.fail(pullOne("t"), "dead");
        MessageId dead2 = publish("t", "{}");
        ns.fail(pullOne("t"), "dead");
        var before = snapshot(dead);

        assertThat(other().deadLetters().list(Page.first(100))).isEmpty();
        assertThat(other().deadLetters().list("t", Page.first(100))).isEmpty();
        assertThat(other().deadLetters().get(dead)).isEmpty();
        assertThat(other().deadLetters().redrive(dead)).isFalse();
        assertThat(other().deadLetters().purge(dead)).isFalse();
        assertThat(other().deadLetters().redriveAll("t")).isZero();
        assertThat(other().deadLetters().purgeAll("t")).isZero();
        assertThat(other().deadLetters().purgeAll()).isZero();

        assertUnchanged(before, dead);
        assertThat(ns.deadLetters().list(Page.first(100))).hasSize(2);
        assertThat(info(dead2).state()).isEqualTo(MessageState.DEAD);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(LeaseContract.Operation.class)
    public void otherNamespaceCannotActOnDelivery(LeaseContract.Operation operation) {
        MessageId id = publish(Message.to("t").maxAttempts(5));
        Delivery delivery = pullOne("t");
        var before = snapshot(id);
        Namespace other = other();

        Outcome outcome;
        switch (operation) {
            case ACK:
                outcome = other.ack(delivery);
                break;
            case ACK_ALL: {
                Map<MessageId, Outcome> all = other.ackAll(List.of(delivery));
                assertThat(all).containsOnlyKeys(id);
                outcome = all.get(id);
                break;
            }
            case NACK:
                outcome = other.nack(delivery, "not yours");
                break;
            case NACK_WITH_DELAY:
                outcome = other.nack(delivery, "not yours", Duration.ofMinutes(1));
                break;
            case FAIL:
                outcome = other.fail(delivery, "not yours");
                break;
            case EXTEND:
                outcome = other.extend(delivery, Duration.ofHours(1));
                break;
            default:
                throw new AssertionError(operation);
        }

        assertThat(outcome).isEqualTo(Outcome.LEASE_LOST);
        assertUnchanged(before, id);
        assertThat(other.stats().total()).isZero();
        assertThat(ns.ack(delivery)).isEqualTo(Outcome.ACKED);
    }

    @Test
    public void otherNamespaceSubscriberDoesNotReceiveMessages() {
        MessageId mine = publish("t", "{}");
        MessageId theirs = other().publish(Message.to("t")).id();
        Set<String> handled = ConcurrentHashMap.newKeySet();

        try (Subscription subscription = other().subscribe(Subscriber.on("t").worker("sub").concurrency(1)
                .handleDelivery((delivery, ctx) -> handled.add(delivery.namespace() + "/" + delivery.id())))) {
            eventually().until(() -> other().inspect(theirs).isEmpty());
            assertThat(subscription.isRunning()).isTrue();
        }

        assertThat(handled).containsExactly("other/" + theirs);
        assertThat(info(mine).state()).isEqualTo(MessageState.PENDING);
        assertThat(info(mine).attempts()).isZero();
    }

    @Test
    public void expiredLeaseIsRedeliveredOnlyWithinItsNamespace() {
        MessageId mine = publish("t", "{}");
        pullOne("t");
        advance(Duration.ofSeconds(31));

        assertThat(other().pull(Pull.from("t").worker("w2").limit(10))).isEmpty();
        Delivery again = pullOne("t", "w2");

        assertThat(again.id()).isEqualTo(mine);
        assertThat(again.attempt()).isEqualTo(2);
    }

    /**
     * Fair share between namespaces: a process subscribed in a namespace with a large backlog and in one with a
     * few messages published after it starts the few at once, not after the backlog. The busy namespace's handlers
     * take about a millisecond each, so its backlog lasts seconds; the quiet namespace's messages must all start
     * while most of it is still waiting.
     */
    @Test
    public void aBacklogInOneNamespaceDoesNotHoldBackAnother() {
        Namespace busy = queue.namespace("busy");
        int backlog = 5_000;
        for (int published = 0; published < backlog; published += 500) {
            List<Message> batch = new ArrayList<>();
            for (int i = 0; i < 500; i++) {
                batch.add(Message.to("t").json("{\"n\":" + (published + i) + "}"));
            }
            assertThat(busy.publishAll(batch)).hasSize(500);
        }
        AtomicInteger busyStarted = new AtomicInteger();
        Map<MessageId, Integer> busyStartedWhenQuietStarted = new ConcurrentHashMap<>();

        try (Subscription busySubscription = busy.subscribe(Subscriber.on("t").worker("busy").concurrency(2)
                .handleDelivery((delivery, ctx) -> {
                    busyStarted.incrementAndGet();
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                }));
             Subscription quietSubscription = other().subscribe(Subscriber.on("t").worker("quiet").concurrency(2)
                     .handleDelivery((delivery, ctx) -> busyStartedWhenQuietStarted.put(delivery.id(), busyStarted.get())))) {
            eventually().until(() -> busyStarted.get() >= 50);
            for (int i = 0; i < 10; i++) {
                other().publish(Message.to("t"));
            }
            eventually().until(() -> busyStartedWhenQuietStarted.size() == 10);
            assertThat(busySubscription.isRunning()).isTrue();
            assertThat(quietSubscription.isRunning()).isTrue();
        }

        assertThat(busyStartedWhenQuietStarted.values()).allSatisfy(started -> assertThat(started).isLessThan(backlog / 2));
    }
}
