package dev.queue.testkit.contract;

import dev.queue.api.Delivery;
import dev.queue.api.InvalidInputException;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.MessageInfo;
import dev.queue.api.MessageState;
import dev.queue.api.Namespace;
import dev.queue.api.Outcome;
import dev.queue.api.Page;
import dev.queue.api.PublishResult;
import dev.queue.api.Pull;
import dev.queue.api.Subscriber;
import dev.queue.testkit.Capability;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Flow control (docs/flow-control.md): pausing and resuming topics, cancelling pending and running messages,
 * snoozing held ones; each from every starting state that matters, and raced with claims and completions. Skipped,
 * with the adapter's reason, when it declares {@link Capability#FLOW_CONTROL} missing.
 */
public abstract class FlowControlContract extends ContractSupport {

    /** For subclasses. */
    protected FlowControlContract() {
    }

    /** Every test here needs the capability. */
    @BeforeEach
    protected void requireFlowControl() {
        requires(Capability.FLOW_CONTROL);
    }

    /** What a holder can ask of a delivery. */
    public enum Settle {
        /** {@link Namespace#ack}. */
        ACK,
        /** {@link Namespace#nack(Delivery, String)}. */
        NACK,
        /** {@link Namespace#fail}. */
        FAIL,
        /** {@link Namespace#extend}. */
        EXTEND,
        /** {@link Namespace#snooze}. */
        SNOOZE
    }

    private Outcome settle(Settle how, Delivery delivery) {
        return switch (how) {
            case ACK -> ns.ack(delivery);
            case NACK -> ns.nack(delivery, "boom");
            case FAIL -> ns.fail(delivery, "bad");
            case EXTEND -> ns.extend(delivery, Duration.ofMinutes(5));
            case SNOOZE -> ns.snooze(delivery, Duration.ofSeconds(10));
        };
    }

    // ------------------------------------------------------------------ pause and resume

    @Test
    public void pausedTopicIsNotClaimedUntilResumed() {
        MessageId paused = publish("t", "{\"n\":1}");
        MessageId other = publish("u", "{\"n\":2}");

        assertThat(ns.flowControl().pause("t")).isTrue();
        assertThat(ns.flowControl().pause("t")).isFalse();
        assertThat(ns.flowControl().pausedTopics()).containsExactly("t");

        List<Delivery> claimed = ns.pull(Pull.fromAny("t", "u").worker(WORKER).limit(10));
        assertThat(claimed).extracting(Delivery::id).containsExactly(other);
        assertNothingDue("t");
        assertThat(info(paused).state()).isEqualTo(MessageState.PENDING);
        assertThat(info(paused).attempts()).isZero();

        assertThat(ns.flowControl().resume("t")).isTrue();
        assertThat(ns.flowControl().resume("t")).isFalse();
        assertThat(ns.flowControl().pausedTopics()).isEmpty();
        assertThat(pullOne("t").id()).isEqualTo(paused);
    }

    @Test
    public void pausedTopicKeepsAcceptingPublishesAndTheirDueTimes() {
        ns.flowControl().pause("t");
        MessageId delayed = publish(Message.to("t").json("{}").delay(Duration.ofMinutes(1)));

        advance(Duration.ofMinutes(2));
        assertNothingDue("t");
        assertThat(info(delayed).runAt()).isEqualTo(START.plus(Duration.ofMinutes(1)));

        ns.flowControl().resume("t");
        assertThat(pullOne("t").id()).isEqualTo(delayed);
    }

    @Test
    public void runningMessagesOfAPausedTopicFinishAndRetriesWait() {
        MessageId first = publish("t", "{\"n\":1}");
        MessageId second = publish("t", "{\"n\":2}");
        Delivery one = pullOne("t");
        Delivery two = pullOne("t");

        ns.flowControl().pause("t");

        assertThat(ns.ack(one)).isEqualTo(Outcome.ACKED);
        assertThat(ns.nack(two, "again", Duration.ZERO)).isEqualTo(Outcome.RETRY_SCHEDULED);
        assertGone(first);
        assertThat(info(second).state()).isEqualTo(MessageState.PENDING);
        assertNothingDue("t");

        ns.flowControl().resume("t");
        assertThat(pullOne("t").id()).isEqualTo(second);
    }

    @Test
    public void pauseIsPerNamespaceAndTopic() {
        Namespace other = queue.namespace("other");
        ns.flowControl().pause("t");
        MessageId elsewhere = other.publish(Message.to("t").json("{}")).id();
        MessageId sameNamespaceOtherTopic = publish("t2", "{}");

        assertThat(other.flowControl().pausedTopics()).isEmpty();
        assertThat(other.pullOne(Pull.from("t").worker(WORKER))).map(Delivery::id).contains(elsewhere);
        assertThat(pullOne("t2").id()).isEqualTo(sameNamespaceOtherTopic);
    }

    @Test
    public void subscriberSkipsAPausedTopicAndResumeWakesIt() {
        List<MessageId> handled = new CopyOnWriteArrayList<>();
        ns.flowControl().pause("t");
        MessageId waiting = publish("t", "{}");
        ns.subscribe(Subscriber.on("t", "u").handleDelivery((delivery, ctx) -> handled.add(delivery.id())));
        MessageId runs = publish("u", "{}");

        // Each claim looks at t before u: once u's message ran, t's was passed over while due.
        eventually().until(() -> ns.inspect(runs).isEmpty());
        assertThat(info(waiting).state()).isEqualTo(MessageState.PENDING);
        assertThat(handled).containsExactly(runs);

        ns.flowControl().resume("t");
        eventually().until(() -> ns.inspect(waiting).isEmpty());
        assertThat(handled).containsExactly(runs, waiting);
    }

    @Test
    public void noClaimStartsAfterPauseReturnsWhileClaimsRace() throws Exception {
        // enough that the claimers cannot empty the topic between the signal and the pause
        int messages = 10_000;
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < messages; i++) {
            batch.add(Message.to("t").json("{\"n\":" + i + "}"));
        }
        ns.publishAll(batch);
        int threads = 4;
        AtomicLong pausedAt = new AtomicLong(Long.MAX_VALUE);
        AtomicInteger claimedBeforePause = new AtomicInteger();
        AtomicInteger startedAfterPause = new AtomicInteger();
        AtomicInteger emptyAfterPause = new AtomicInteger();
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch claiming = new CountDownLatch(20);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> claimers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String worker = "claimer-" + t;
                claimers.add(pool.submit(() -> {
                    while (!stop.get()) {
                        long paused = pausedAt.get();
                        long start = System.nanoTime();
                        boolean afterPause = paused != Long.MAX_VALUE && start - paused > 0;
                        List<Delivery> got = ns.pull(Pull.from("t").worker(worker).limit(2));
                        if (afterPause) {
                            startedAfterPause.addAndGet(got.size());
                            emptyAfterPause.incrementAndGet();
                        } else {
                            claimedBeforePause.addAndGet(got.size());
                            got.forEach(d -> claiming.countDown());
                        }
                        got.forEach(ns::ack);
                    }
                    return null;
                }));
            }
            assertThat(claiming.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
            ns.flowControl().pause("t");
            pausedAt.set(System.nanoTime());
            eventually().until(() -> emptyAfterPause.get() >= threads * 20);
            stop.set(true);
            for (Future<?> claimer : claimers) {
                claimer.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            }
        } finally {
            stop.set(true);
            pool.shutdownNow();
        }

        assertThat(startedAfterPause.get()).isZero();
        long left = ns.stats().pending();
        assertThat(left).isPositive().isEqualTo(messages - claimedBeforePause.get());
        ns.flowControl().resume("t");
        assertThat(ns.pull(Pull.from("t").worker(WORKER).limit(1000))).hasSize((int) Math.min(left, 1000));
    }

    @Test
    public void pauseAndResumeRefuseBadTopics() {
        assertThatThrownBy(() -> ns.flowControl().pause("bad topic")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("bad topic");
        assertThatThrownBy(() -> ns.flowControl().resume(null)).isInstanceOf(InvalidInputException.class);
        assertThat(ns.flowControl().pausedTopics()).isEmpty();
    }

    // ------------------------------------------------------------------ cancel

    @Test
    public void cancelledPendingMessageNeverRunsAndFreesItsKey() {
        MessageId id = publish(Message.to("t").json("{}").uniqueKey("k-1"));

        assertThat(ns.flowControl().cancel(id)).contains(MessageState.PENDING);

        assertGone(id);
        assertNothingDue("t");
        assertThat(ns.flowControl().cancel(id)).isEmpty();
        assertThat(ns.publish(Message.to("t").json("{}").uniqueKey("k-1"))).isInstanceOf(PublishResult.Published.class);
        assertThat(ns.stats().dead()).isZero();
    }

    @Test
    public void cancelledDelayedMessageDoesNotRunWhenDue() {
        MessageId id = publish(Message.to("t").json("{}").delay(Duration.ofMinutes(5)));

        assertThat(ns.flowControl().cancel(id)).contains(MessageState.PENDING);
        advance(Duration.ofMinutes(10));

        assertNothingDue("t");
        assertThat(ns.stats().pending()).isZero();
    }

    @ParameterizedTest(name = "{0} after the message was cancelled is LEASE_LOST")
    @EnumSource(Settle.class)
    public void holderOfACancelledMessageCannotBringItBack(Settle how) {
        MessageId id = publish("t", "{}");
        Delivery delivery = pullOne("t");

        assertThat(ns.flowControl().cancel(id)).contains(MessageState.RUNNING);

        assertThat(settle(how, delivery)).isEqualTo(Outcome.LEASE_LOST);
        assertGone(id);
        assertThat(ns.deadLetters().list(Page.first(10))).isEmpty();
        assertThat(ns.stats().running()).isZero();
        assertNothingDue("t");
    }

    @Test
    public void cancelLeavesDeadUnknownAndOtherNamespacesMessagesAlone() {
        MessageId dead = publish("t", "{}");
        ns.fail(pullOne("t"), "given up");
        Namespace other = queue.namespace("other");
        MessageId theirs = other.publish(Message.to("t").json("{}")).id();

        assertThat(ns.flowControl().cancel(dead)).isEmpty();
        assertThat(ns.deadLetters().get(dead)).isPresent();
        assertThat(ns.flowControl().cancel(MessageId.of(987_654_321L))).isEmpty();
        assertThat(ns.flowControl().cancel(theirs)).isEmpty();
        assertThat(other.inspect(theirs)).map(MessageInfo::state).contains(MessageState.PENDING);
        assertThatThrownBy(() -> ns.flowControl().cancel(null)).isInstanceOf(InvalidInputException.class);
    }

    @Test
    public void cancelAfterAckFindsNothingAndAckAfterCancelIsLeaseLost() {
        MessageId acked = publish("t", "{\"n\":1}");
        Delivery first = pullOne("t");
        assertThat(ns.ack(first)).isEqualTo(Outcome.ACKED);
        assertThat(ns.flowControl().cancel(acked)).isEmpty();

        MessageId cancelled = publish("t", "{\"n\":2}");
        Delivery second = pullOne("t");
        assertThat(ns.flowControl().cancel(cancelled)).contains(MessageState.RUNNING);
        assertThat(ns.ack(second)).isEqualTo(Outcome.LEASE_LOST);
        assertGone(cancelled);
    }

    @Test
    public void cancelRacingWithAckHasExactlyOneWinnerPerMessage() throws Exception {
        int messages = 1000;
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < messages; i++) {
            batch.add(Message.to("t").json("{\"n\":" + i + "}"));
        }
        ns.publishAll(batch);
        List<Delivery> held = ns.pull(Pull.from("t").worker(WORKER).limit(messages));
        assertThat(held).hasSize(messages);

        ExecutorService pool = Executors.newFixedThreadPool(2);
        CountDownLatch go = new CountDownLatch(1);
        try {
            Future<List<Outcome>> acks = pool.submit(() -> {
                go.await();
                List<Outcome> outcomes = new ArrayList<>();
                held.forEach(d -> outcomes.add(ns.ack(d)));
                return outcomes;
            });
            Future<List<Optional<MessageState>>> cancels = pool.submit(() -> {
                go.await();
                List<Optional<MessageState>> outcomes = new ArrayList<>();
                // from the other end, so the two meet in the middle
                for (int i = held.size() - 1; i >= 0; i--) {
                    outcomes.add(0, ns.flowControl().cancel(held.get(i).id()));
                }
                return outcomes;
            });
            go.countDown();
            List<Outcome> ackOutcomes = acks.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            List<Optional<MessageState>> cancelOutcomes = cancels.get(WAIT.toSeconds(), TimeUnit.SECONDS);

            for (int i = 0; i < messages; i++) {
                boolean ackWon = ackOutcomes.get(i) == Outcome.ACKED;
                boolean cancelWon = cancelOutcomes.get(i).isPresent();
                assertThat(ackWon ^ cancelWon).as("message %d: ack %s, cancel %s", i, ackOutcomes.get(i),
                        cancelOutcomes.get(i)).isTrue();
                if (cancelWon) {
                    assertThat(ackOutcomes.get(i)).isEqualTo(Outcome.LEASE_LOST);
                    assertThat(cancelOutcomes.get(i)).contains(MessageState.RUNNING);
                }
            }
            assertThat(ns.stats().running() + ns.stats().pending() + ns.stats().dead()).isZero();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    public void runningHandlerSeesItsMessageCancelledAndItsOutcomeChangesNothing() {
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean sawCancelled = new AtomicBoolean();
        AtomicBoolean cancelledAtStart = new AtomicBoolean(true);
        ns.subscribe(Subscriber.on("t").handleDelivery((delivery, ctx) -> {
            cancelledAtStart.set(ctx.isCancelled());
            started.countDown();
            long deadline = System.nanoTime() + WAIT.toNanos();
            // a long handler asking between steps
            while (!ctx.isCancelled() && System.nanoTime() - deadline < 0) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
            sawCancelled.set(ctx.isCancelled());
        }));
        MessageId id = publish("t", "{}");
        eventually().until(() -> started.getCount() == 0);

        assertThat(ns.flowControl().cancel(id)).contains(MessageState.RUNNING);

        eventually().untilTrue(sawCancelled);
        assertThat(cancelledAtStart).isFalse();
        eventually().until(() -> ns.stats().running() == 0);
        assertGone(id);
        assertThat(ns.stats().dead()).isZero();
    }

    // ------------------------------------------------------------------ snooze

    @Test
    public void snoozeFromAHandlerRunsAgainLaterWithoutSpendingTheAttempt() {
        List<Integer> attempts = new CopyOnWriteArrayList<>();
        ns.subscribe(Subscriber.on("t").handleDelivery((delivery, ctx) -> {
            attempts.add(ctx.attempt());
            if (attempts.size() == 1) {
                ctx.snooze(Duration.ofSeconds(30));
            }
        }));
        // one attempt only: a retry would make it a dead letter
        MessageId id = publish(Message.to("t").json("{}").maxAttempts(1));

        // the handler's attempt first: a message read as pending before that could be the one not yet claimed
        eventually().until(() -> attempts.size() == 1
                && ns.inspect(id).map(i -> i.state() == MessageState.PENDING).orElse(false));
        MessageInfo snoozed = info(id);
        assertThat(snoozed.attempts()).isZero();
        assertThat(snoozed.runAt()).isEqualTo(START.plusSeconds(30));
        assertThat(snoozed.lastError()).isNull();
        assertThat(snoozed.attemptHistory()).isEmpty();

        advance(Duration.ofSeconds(30));
        eventually().until(() -> ns.inspect(id).isEmpty());
        assertThat(attempts).containsExactly(1, 1);
        assertThat(ns.stats().dead()).isZero();
    }

    @Test
    public void snoozeUntilFromAHandlerIsDueAtThatTime() {
        Instant later = START.plus(Duration.ofHours(1));
        ns.subscribe(Subscriber.on("t").handleDelivery((delivery, ctx) -> {
            if (delivery.json().contains("first")) {
                ctx.snoozeUntil(later);
            }
        }));
        MessageId id = publish("t", "{\"first\":true}");

        eventually().until(() -> ns.inspect(id).map(i -> i.state() == MessageState.PENDING && i.runAt().equals(later))
                .orElse(false));
        assertThat(info(id).attempts()).isZero();
    }

    @Test
    public void snoozedDeliveryIsPendingAgainAtItsTimeWithItsAttemptTakenBack() {
        MessageId id = publish(Message.to("t").json("{}").maxAttempts(1));
        Delivery delivery = pullOne("t");

        assertThat(ns.snooze(delivery, Duration.ofSeconds(10))).isEqualTo(Outcome.SNOOZED);

        MessageInfo snoozed = info(id);
        assertThat(snoozed.state()).isEqualTo(MessageState.PENDING);
        assertThat(snoozed.attempts()).isZero();
        assertThat(snoozed.runAt()).isEqualTo(START.plusSeconds(10));
        assertThat(snoozed.lastError()).isNull();
        assertNothingDue("t");
        advance(Duration.ofSeconds(10));
        Delivery again = pullOne("t");
        assertThat(again.attempt()).isEqualTo(1);
        assertThat(ns.nack(again, "now it fails")).isEqualTo(Outcome.DEAD_LETTERED);
    }

    @Test
    public void snoozeRacesWithCompletionInEitherOrder() {
        publish("t", "{\"n\":1}");
        Delivery acked = pullOne("t");
        assertThat(ns.ack(acked)).isEqualTo(Outcome.ACKED);
        assertThat(ns.snooze(acked, Duration.ofSeconds(5))).isEqualTo(Outcome.LEASE_LOST);

        MessageId second = publish("t", "{\"n\":2}");
        Delivery snoozed = pullOne("t");
        assertThat(ns.snooze(snoozed, Duration.ofSeconds(5))).isEqualTo(Outcome.SNOOZED);
        assertThat(ns.ack(snoozed)).isEqualTo(Outcome.LEASE_LOST);
        assertThat(ns.snooze(snoozed, Duration.ofSeconds(5))).isEqualTo(Outcome.LEASE_LOST);
        assertThat(info(second).state()).isEqualTo(MessageState.PENDING);
    }

    @Test
    public void snoozeAfterLeaseExpiryAndReclaimIsLeaseLost() {
        MessageId id = publish("t", "{}");
        Delivery stale = ns.pullOne(Pull.from("t").worker("w-old").visibility(Duration.ofSeconds(30))).orElseThrow();
        advance(Duration.ofSeconds(31));
        Delivery fresh = pullOne("t", "w-new");

        assertThat(ns.snooze(stale, Duration.ofMinutes(1))).isEqualTo(Outcome.LEASE_LOST);

        MessageInfo now = info(id);
        assertThat(now.state()).isEqualTo(MessageState.RUNNING);
        assertThat(now.worker()).isEqualTo("w-new");
        assertThat(ns.ack(fresh)).isEqualTo(Outcome.ACKED);
    }

    @Test
    public void snoozeRefusesBadDelaysAndChangesNothing() {
        MessageId id = publish("t", "{}");
        Delivery delivery = pullOne("t");
        Snapshot before = snapshot(id);

        for (Duration bad : new Duration[] {null, Duration.ofSeconds(-1), Duration.ofDays(366)}) {
            assertThatThrownBy(() -> ns.snooze(delivery, bad)).isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining("delay");
        }
        assertThatThrownBy(() -> ns.snooze(null, Duration.ZERO)).isInstanceOf(InvalidInputException.class);
        assertUnchanged(before, id);
    }

    @Test
    public void snoozeInAHandlerRefusesBadInputAndLeavesTheOutcomeAlone() {
        Map<String, Throwable> refused = new ConcurrentHashMap<>();
        ns.subscribe(Subscriber.on("t").handleDelivery((delivery, ctx) -> {
            try {
                ctx.snooze(Duration.ofDays(400));
            } catch (InvalidInputException e) {
                refused.put("delay", e);
            }
            try {
                ctx.snoozeUntil(null);
            } catch (InvalidInputException e) {
                refused.put("runAt", e);
            }
        }));
        MessageId id = publish("t", "{}");

        eventually().until(() -> ns.inspect(id).isEmpty());
        assertThat(refused).containsOnlyKeys("delay", "runAt");
    }
}
