package dev.queue.testkit.contract;

import dev.queue.api.BehindDeadLetter;
import dev.queue.api.Delivery;
import dev.queue.api.InvalidInputException;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.MessageInfo;
import dev.queue.api.MessageState;
import dev.queue.api.Outcome;
import dev.queue.api.PublishResult;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import dev.queue.api.Pull;
import dev.queue.api.TopicStats;
import dev.queue.testkit.Capability;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Ordering keys (docs/flow-control.md): the messages of one key start one at a time in publish order, a retry, snooze
 * or rescued lease keeps its place, a dead letter holds its key back or not by the topic's choice, cancels and
 * duplicates keep the line intact, keys and unkeyed messages do not wait for each other; and the same under eight
 * claiming threads over a thousand keys, checked from the handlers' side. Skipped, with the adapter's reason, when it
 * declares {@link Capability#ORDERING_KEYS} missing.
 */
public abstract class OrderingKeyContract extends ContractSupport {

    private static final String TOPIC = "orders";

    /** For subclasses. */
    protected OrderingKeyContract() {
    }

    /** Every test here needs the capability. */
    @BeforeEach
    protected void requireOrderingKeys() {
        requires(Capability.ORDERING_KEYS);
    }

    private MessageId keyed(String key, int n) {
        return publish(Message.to(TOPIC).orderingKey(key).json("{\"n\":" + n + "}"));
    }

    // ------------------------------------------------------------------ the line of one key

    @Test
    public void messagesOfAKeyRunOneAtATimeInPublishOrder() {
        MessageId first = keyed("k", 1);
        MessageId second = keyed("k", 2);
        MessageId third = keyed("k", 3);

        Delivery delivery = pullOne(TOPIC);
        assertThat(delivery.id()).isEqualTo(first);
        assertThat(delivery.orderingKey()).contains("k");
        assertNothingDue(TOPIC);

        MessageInfo waiting = info(second);
        assertThat(waiting.state()).isEqualTo(MessageState.PENDING);
        assertThat(waiting.orderingKey()).contains("k");
        assertThat(waiting.waitingForKey()).isTrue();
        assertThat(info(first).waitingForKey()).isFalse();
        assertThat(info(first).state()).isEqualTo(MessageState.RUNNING);

        assertThat(ns.ack(delivery)).isEqualTo(Outcome.ACKED);
        assertThat(info(second).waitingForKey()).isFalse();
        Delivery next = pullOne(TOPIC);
        assertThat(next.id()).isEqualTo(second);
        assertNothingDue(TOPIC);
        ns.ack(next);
        assertThat(pullOne(TOPIC).id()).isEqualTo(third);
    }

    @Test
    public void aWaitingMessageCountsAsPendingButNotAsDue() {
        keyed("k", 1);
        keyed("k", 2);
        keyed("k", 3);
        advance(Duration.ofMinutes(5));

        TopicStats stats = ns.stats().topics().get(TOPIC);
        assertThat(stats.pending()).isEqualTo(3);
        assertThat(stats.running()).isZero();
        pullOne(TOPIC);
        stats = ns.stats().topics().get(TOPIC);
        assertThat(stats.pending()).isEqualTo(2);
        assertThat(stats.running()).isEqualTo(1);
        // the waiting ones are not due: their wait is the running head's
        assertThat(stats.oldestDueAt()).isNull();
    }

    @Test
    public void aRetryKeepsItsPlace() {
        MessageId first = keyed("k", 1);
        MessageId second = keyed("k", 2);

        assertThat(ns.nack(pullOne(TOPIC), "boom", Duration.ofMinutes(1))).isEqualTo(Outcome.RETRY_SCHEDULED);
        assertNothingDue(TOPIC);
        assertThat(info(second).waitingForKey()).isTrue();

        advance(Duration.ofMinutes(2));
        Delivery again = pullOne(TOPIC);
        assertThat(again.id()).isEqualTo(first);
        assertThat(again.attempt()).isEqualTo(2);
        ns.ack(again);
        assertThat(pullOne(TOPIC).id()).isEqualTo(second);
    }

    @Test
    public void aSnoozeKeepsItsPlace() {
        MessageId first = keyed("k", 1);
        MessageId second = keyed("k", 2);

        assertThat(ns.snooze(pullOne(TOPIC), Duration.ofMinutes(1))).isEqualTo(Outcome.SNOOZED);
        assertNothingDue(TOPIC);
        advance(Duration.ofMinutes(2));
        Delivery again = pullOne(TOPIC);
        assertThat(again.id()).isEqualTo(first);
        ns.ack(again);
        assertThat(pullOne(TOPIC).id()).isEqualTo(second);
    }

    @Test
    public void aRescuedLeaseKeepsItsPlace() {
        MessageId first = keyed("k", 1);
        MessageId second = keyed("k", 2);

        ns.pullOne(pull(TOPIC).visibility(Duration.ofSeconds(30))).orElseThrow();
        advance(Duration.ofMinutes(1));
        // a pull runs the rescue of the namespace's expired leases first
        Delivery again = pullOne(TOPIC);
        assertThat(again.id()).isEqualTo(first);
        assertThat(info(second).waitingForKey()).isTrue();
        ns.ack(again);
        assertThat(pullOne(TOPIC).id()).isEqualTo(second);
    }

    @Test
    public void aDelayedEarlierMessageHoldsItsSuccessorsBack() {
        MessageId delayed = publish(Message.to(TOPIC).orderingKey("k").json("{}").delay(Duration.ofMinutes(10)));
        MessageId now = keyed("k", 2);

        assertNothingDue(TOPIC);
        advance(Duration.ofMinutes(11));
        Delivery first = pullOne(TOPIC);
        assertThat(first.id()).isEqualTo(delayed);
        ns.ack(first);
        assertThat(pullOne(TOPIC).id()).isEqualTo(now);
    }

    @Test
    public void keysDoNotWaitForEachOtherNorForUnkeyedMessages() {
        MessageId a1 = keyed("a", 1);
        keyed("a", 2);
        MessageId b1 = keyed("b", 1);
        MessageId plain = publish(TOPIC, "{}");
        MessageId otherTopic = publish(Message.to("other").orderingKey("a").json("{}"));

        List<Delivery> got = ns.pull(Pull.fromAny(TOPIC, "other").worker(WORKER).limit(10));
        assertThat(got).extracting(Delivery::id).containsExactlyInAnyOrder(a1, b1, plain, otherTopic);
        assertThat(got.stream().filter(d -> d.id().equals(plain)).findFirst().orElseThrow().orderingKey()).isEmpty();
    }

    @Test
    public void aPromotedMessageWakesItsTopicsSubscriber() {
        // sweeps far apart: only the wake-up of each promotion can bring the next message of the key in time
        recreateQueue(options().sweepInterval(Duration.ofHours(1)));
        List<MessageId> handled = new CopyOnWriteArrayList<>();
        Subscription subscription = ns.subscribe(Subscriber.on(TOPIC).concurrency(4)
                .handleDelivery((delivery, context) -> handled.add(delivery.id())));
        try {
            MessageId first = keyed("k", 1);
            MessageId second = keyed("k", 2);
            MessageId third = keyed("k", 3);
            eventually().until(() -> handled.size() == 3);
            assertThat(handled).containsExactly(first, second, third);
        } finally {
            subscription.close();
        }
    }

    // ------------------------------------------------------------------ behind a dead letter

    @Test
    public void behindADeadLetterTheKeyWaitsByDefaultUntilItIsRedriven() {
        MessageId first = publish(Message.to(TOPIC).orderingKey("k").json("{}").maxAttempts(1));
        MessageId second = keyed("k", 2);
        assertThat(ns.flowControl().behindDeadLetter(TOPIC)).isEqualTo(BehindDeadLetter.WAIT);

        assertThat(ns.fail(pullOne(TOPIC), "bad")).isEqualTo(Outcome.DEAD_LETTERED);
        assertNothingDue(TOPIC);
        assertThat(info(second).waitingForKey()).isTrue();
        assertThat(info(first).orderingKey()).contains("k");
        assertThat(ns.deadLetters().get(first)).isPresent();

        // redriven, it runs again before the ones behind it
        assertThat(ns.deadLetters().redrive(first)).isTrue();
        Delivery again = pullOne(TOPIC);
        assertThat(again.id()).isEqualTo(first);
        assertNothingDue(TOPIC);
        ns.ack(again);
        assertThat(pullOne(TOPIC).id()).isEqualTo(second);
    }

    @Test
    public void behindADeadLetterTheKeyGoesOnOnceItIsPurged() {
        MessageId first = publish(Message.to(TOPIC).orderingKey("k").json("{}").maxAttempts(1));
        MessageId second = keyed("k", 2);
        ns.fail(pullOne(TOPIC), "bad");
        assertNothingDue(TOPIC);

        assertThat(ns.deadLetters().purge(first)).isTrue();
        assertThat(pullOne(TOPIC).id()).isEqualTo(second);
    }

    @Test
    public void aMessagePublishedBehindADeadLetterWaitsToo() {
        publish(Message.to(TOPIC).orderingKey("k").json("{}").maxAttempts(1));
        ns.fail(pullOne(TOPIC), "bad");

        MessageId later = keyed("k", 2);
        assertThat(info(later).waitingForKey()).isTrue();
        assertNothingDue(TOPIC);
    }

    @Test
    public void withContinueTheNextGoesOnAndARedrivenDeadLetterRunsWhenItsKeyIsFree() {
        assertThat(ns.flowControl().setBehindDeadLetter(TOPIC, BehindDeadLetter.CONTINUE)).isTrue();
        assertThat(ns.flowControl().setBehindDeadLetter(TOPIC, BehindDeadLetter.CONTINUE)).isFalse();
        assertThat(ns.flowControl().behindDeadLetter(TOPIC)).isEqualTo(BehindDeadLetter.CONTINUE);
        MessageId first = publish(Message.to(TOPIC).orderingKey("k").json("{}").maxAttempts(1));
        MessageId second = keyed("k", 2);
        MessageId third = keyed("k", 3);

        ns.fail(pullOne(TOPIC), "bad");
        Delivery next = pullOne(TOPIC);
        assertThat(next.id()).isEqualTo(second);

        // the dead letter comes back while the second runs: it waits, then goes before the third
        assertThat(ns.deadLetters().redrive(first)).isTrue();
        assertThat(info(first).waitingForKey()).isTrue();
        assertNothingDue(TOPIC);
        ns.ack(next);
        Delivery redriven = pullOne(TOPIC);
        assertThat(redriven.id()).isEqualTo(first);
        ns.ack(redriven);
        assertThat(pullOne(TOPIC).id()).isEqualTo(third);
    }

    @Test
    public void switchingToContinueLetsKeysWaitingBehindADeadLetterGoOn() {
        publish(Message.to(TOPIC).orderingKey("k").json("{}").maxAttempts(1));
        MessageId second = keyed("k", 2);
        ns.fail(pullOne(TOPIC), "bad");
        assertNothingDue(TOPIC);

        assertThat(ns.flowControl().setBehindDeadLetter(TOPIC, BehindDeadLetter.CONTINUE)).isTrue();
        assertThat(pullOne(TOPIC).id()).isEqualTo(second);
        // back to WAIT: what already went on stays running, later dead letters hold their keys again
        assertThat(ns.flowControl().setBehindDeadLetter(TOPIC, BehindDeadLetter.WAIT)).isTrue();
        assertThat(ns.flowControl().behindDeadLetter(TOPIC)).isEqualTo(BehindDeadLetter.WAIT);
    }

    @Test
    public void theChoiceIsPerTopic() {
        ns.flowControl().setBehindDeadLetter(TOPIC, BehindDeadLetter.CONTINUE);
        assertThat(ns.flowControl().behindDeadLetter("other")).isEqualTo(BehindDeadLetter.WAIT);
        publish(Message.to("other").orderingKey("k").json("{}").maxAttempts(1));
        keyed("k", 1);
        MessageId otherSecond = publish(Message.to("other").orderingKey("k").json("{}"));
        ns.fail(pullOne("other"), "bad");
        assertNothingDue("other");
        assertThat(info(otherSecond).waitingForKey()).isTrue();
    }

    // ------------------------------------------------------------------ cancel, duplicates, pause

    @Test
    public void cancellingTheHeadLetsTheNextGoOn() {
        MessageId first = keyed("k", 1);
        MessageId second = keyed("k", 2);

        assertThat(ns.flowControl().cancel(first)).contains(MessageState.PENDING);
        assertThat(pullOne(TOPIC).id()).isEqualTo(second);
    }

    @Test
    public void cancellingARunningHeadLetsTheNextGoOn() {
        keyed("k", 1);
        MessageId second = keyed("k", 2);
        Delivery running = pullOne(TOPIC);

        assertThat(ns.flowControl().cancel(running.id())).contains(MessageState.RUNNING);
        assertThat(ns.ack(running)).isEqualTo(Outcome.LEASE_LOST);
        assertThat(pullOne(TOPIC).id()).isEqualTo(second);
    }

    @Test
    public void cancellingAWaitingMessageTakesItOutOfTheLine() {
        MessageId first = keyed("k", 1);
        MessageId second = keyed("k", 2);
        MessageId third = keyed("k", 3);

        assertThat(ns.flowControl().cancel(second)).contains(MessageState.PENDING);
        assertThat(ns.inspect(second)).isEmpty();
        Delivery head = pullOne(TOPIC);
        assertThat(head.id()).isEqualTo(first);
        assertNothingDue(TOPIC);
        ns.ack(head);
        assertThat(pullOne(TOPIC).id()).isEqualTo(third);
    }

    @Test
    public void aRefusedDuplicateChangesNothing() {
        MessageId first = publish(Message.to(TOPIC).orderingKey("k").uniqueKey("u").json("{}"));
        MessageId second = keyed("k", 2);
        Snapshot before = snapshot(second);

        PublishResult duplicate = ns.publish(Message.to(TOPIC).orderingKey("k").uniqueKey("u").json("{}"));
        assertThat(duplicate).isInstanceOf(PublishResult.Duplicate.class);
        assertThat(duplicate.id()).isEqualTo(first);
        assertUnchanged(before, second);
        Delivery head = pullOne(TOPIC);
        assertThat(head.id()).isEqualTo(first);
        ns.ack(head);
        assertThat(pullOne(TOPIC).id()).isEqualTo(second);
    }

    @Test
    public void whenTheFirstOfABatchIsADuplicateTheNextOfItsKeyLeads() {
        MessageId holder = publish(Message.to(TOPIC).uniqueKey("u").json("{}"));
        List<PublishResult> results = ns.publishAll(List.of(
                Message.to(TOPIC).orderingKey("k").uniqueKey("u").json("{}"),
                Message.to(TOPIC).orderingKey("k").json("{\"n\":2}"),
                Message.to(TOPIC).orderingKey("k").json("{\"n\":3}")));
        assertThat(results.get(0)).isInstanceOf(PublishResult.Duplicate.class);
        MessageId second = results.get(1).id();
        MessageId third = results.get(2).id();

        List<Delivery> got = ns.pull(pull(TOPIC).limit(10));
        assertThat(got).extracting(Delivery::id).containsExactlyInAnyOrder(holder, second);
        assertThat(info(third).waitingForKey()).isTrue();
    }

    @Test
    public void aBatchKeepsItsOrderWithinEachKey() {
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            batch.add(Message.to(TOPIC).orderingKey("k" + (i % 2)).json("{\"n\":" + i + "}"));
        }
        List<MessageId> ids = ns.publishAll(batch).stream().map(PublishResult::id).toList();

        List<MessageId> started = new ArrayList<>();
        for (int round = 0; round < 3; round++) {
            List<Delivery> got = ns.pull(pull(TOPIC).limit(10));
            assertThat(got).hasSize(2);
            got.forEach(d -> started.add(d.id()));
            ns.ackAll(got);
        }
        assertThat(started).containsExactlyInAnyOrderElementsOf(ids);
        assertThat(started.subList(0, 2)).containsExactlyInAnyOrder(ids.get(0), ids.get(1));
        assertThat(started.subList(2, 4)).containsExactlyInAnyOrder(ids.get(2), ids.get(3));
    }

    @Test
    public void aPromotionIntoAPausedTopicWaitsForTheResume() {
        keyed("k", 1);
        MessageId second = keyed("k", 2);
        Delivery head = pullOne(TOPIC);
        ns.flowControl().pause(TOPIC);

        ns.ack(head);
        assertNothingDue(TOPIC);
        assertThat(info(second).waitingForKey()).isFalse();
        ns.flowControl().resume(TOPIC);
        assertThat(pullOne(TOPIC).id()).isEqualTo(second);
    }

    // ------------------------------------------------------------------ input

    @Test
    public void badKeysAreRefusedAndStoreNothing() {
        for (String bad : List.of("", "x".repeat(256), "tab\there", "nul\u0000")) {
            assertThatThrownBy(() -> ns.publish(Message.to(TOPIC).orderingKey(bad).json("{}")))
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining("orderingKey");
        }
        assertThatThrownBy(() -> ns.flowControl().setBehindDeadLetter(TOPIC, null))
                .isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> ns.flowControl().setBehindDeadLetter("bad topic", BehindDeadLetter.WAIT))
                .isInstanceOf(InvalidInputException.class);
        assertThat(ns.stats().pending()).isZero();
        assertThat(publish(Message.to(TOPIC).orderingKey("x".repeat(255)).json("{}"))).isNotNull();
    }

    // ------------------------------------------------------------------ under load

    /**
     * Eight threads claim 3,000 messages over 1,000 keys, retrying some once and dead-lettering others (the topic goes
     * on behind dead letters). Each handler checks, as it starts, that no other message of its key runs and that every
     * earlier message of its key has left.
     */
    @Test
    public void eightClaimersOverAThousandKeysStartEachKeyInOrderAndOneAtATime() throws Exception {
        int keys = 1000;
        int perKey = 3;
        ns.flowControl().setBehindDeadLetter(TOPIC, BehindDeadLetter.CONTINUE);
        List<Message> batch = new ArrayList<>();
        for (int n = 0; n < perKey; n++) {
            for (int k = 0; k < keys; k++) {
                batch.add(Message.to(TOPIC).orderingKey("k" + k).header("k", Integer.toString(k))
                        .header("n", Integer.toString(n)).maxAttempts(3).json("{}"));
            }
        }
        for (int from = 0; from < batch.size(); from += 500) {
            ns.publishAll(batch.subList(from, Math.min(batch.size(), from + 500)));
        }

        AtomicIntegerArray left = new AtomicIntegerArray(keys);
        AtomicBoolean[] running = new AtomicBoolean[keys];
        for (int k = 0; k < keys; k++) {
            running[k] = new AtomicBoolean();
        }
        ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
        AtomicInteger done = new AtomicInteger();
        AtomicInteger retried = new AtomicInteger();
        AtomicInteger dead = new AtomicInteger();
        int total = keys * perKey;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        ExecutorService threads = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                String worker = "w" + t;
                futures.add(threads.submit(() -> {
                    while (done.get() < total && System.nanoTime() < deadline && violations.isEmpty()) {
                        for (Delivery delivery : ns.pull(Pull.from(TOPIC).worker(worker).limit(5))) {
                            int k = Integer.parseInt(delivery.headers().get("k"));
                            int n = Integer.parseInt(delivery.headers().get("n"));
                            if (!running[k].compareAndSet(false, true)) {
                                violations.add("key " + k + ": message " + n + " started while another of its key ran");
                            }
                            if (left.get(k) != n) {
                                violations.add("key " + k + ": message " + n + " started after " + left.get(k)
                                        + " of its key had left");
                            }
                            boolean retry = delivery.attempt() == 1 && (k + n) % 10 == 0;
                            boolean bury = !retry && (3 * k + n) % 37 == 0;
                            // the handler's side is over before the store hears of it
                            if (!retry) {
                                left.incrementAndGet(k);
                            }
                            running[k].set(false);
                            Outcome outcome = retry ? ns.nack(delivery, "once more", Duration.ZERO)
                                    : bury ? ns.fail(delivery, "bad") : ns.ack(delivery);
                            Outcome expected = retry ? Outcome.RETRY_SCHEDULED
                                    : bury ? Outcome.DEAD_LETTERED : Outcome.ACKED;
                            if (outcome != expected) {
                                violations.add("key " + k + ": message " + n + " settled " + outcome);
                            }
                            if (retry) {
                                retried.incrementAndGet();
                            } else {
                                if (bury) {
                                    dead.incrementAndGet();
                                }
                                done.incrementAndGet();
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> future : futures) {
                future.get(150, TimeUnit.SECONDS);
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(violations).isEmpty();
        assertThat(done.get()).isEqualTo(total);
        for (int k = 0; k < keys; k++) {
            assertThat(left.get(k)).as("messages of key %s that left", k).isEqualTo(perKey);
        }
        assertThat(retried.get()).isPositive();
        assertThat(dead.get()).isPositive();
        assertThat(ns.stats().pending()).isZero();
        assertThat(ns.stats().dead()).isEqualTo(dead.get());
    }
}
