package dev.queue.testkit.contract;

import dev.queue.api.Backoff;
import dev.queue.api.Delivery;
import dev.queue.api.Message;
import dev.queue.api.MessageContext;
import dev.queue.api.MessageId;
import dev.queue.api.MessageInfo;
import dev.queue.api.MessageState;
import dev.queue.api.Pull;
import dev.queue.api.QueueClosedException;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Subscribers on their own threads: acknowledging, retrying with backoff, dead-lettering, concurrency limits, lease
 * extension, graceful close, competing subscriptions, topic order and undecodable payloads. Time that matters to the
 * queue moves only through the manual clock; real time is only waited on, boundedly, for threads to react.
 */
public abstract class SubscriberRuntimeContract extends ContractSupport {

    /** A topic whose configured backoff is a fixed 7 minutes. */
    protected static final String SLOW = "slow";

    private final List<CountDownLatch> gates = new CopyOnWriteArrayList<>();

    @Override
    protected QueueOptions options() {
        return super.options().backoff(SLOW, Backoff.fixed(Duration.ofMinutes(7)));
    }

    /**
     * A latch handlers block on; opened after each test at the latest, so closing never waits for it.
     *
     * @return a new latch with a count of one
     */
    protected CountDownLatch gate() {
        CountDownLatch gate = new CountDownLatch(1);
        gates.add(gate);
        return gate;
    }

    @AfterEach
    protected void openGates() {
        gates.forEach(CountDownLatch::countDown);
        gates.clear();
    }

    private static void await(CountDownLatch latch) throws InterruptedException {
        assertThat(latch.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("latch opened in time").isTrue();
    }

    private boolean isDead(MessageId id) {
        return ns.inspect(id).map(i -> i.state() == MessageState.DEAD).orElse(false);
    }

    private boolean isPendingWithAttempts(MessageId id, int attempts) {
        return ns.inspect(id).map(i -> i.state() == MessageState.PENDING && i.attempts() == attempts).orElse(false);
    }

    private boolean isDone(MessageId id) {
        return ns.inspect(id).isEmpty();
    }

    @Test
    public void handlerRunsAndMessageIsAcked() {
        List<MessageContext> seen = new CopyOnWriteArrayList<>();
        List<Delivery> deliveries = new CopyOnWriteArrayList<>();
        ns.subscribe(Subscriber.on("t").worker("sub-1").handleDelivery((delivery, ctx) -> {
            deliveries.add(delivery);
            seen.add(ctx);
        }));

        MessageId id = publish(Message.to("t").json("{\"a\": 1}").header("h", "v"));

        eventually().until(() -> isDone(id));
        assertThat(deliveries).hasSize(1);
        Delivery delivery = deliveries.get(0);
        assertThat(delivery.id()).isEqualTo(id);
        assertThat(delivery.json()).isEqualTo("{\"a\": 1}");
        assertThat(delivery.attempt()).isEqualTo(1);
        assertThat(delivery.worker()).isEqualTo("sub-1");
        MessageContext ctx = seen.get(0);
        assertThat(ctx.messageId()).isEqualTo(id);
        assertThat(ctx.namespace()).isEqualTo(NAMESPACE);
        assertThat(ctx.topic()).isEqualTo("t");
        assertThat(ctx.attempt()).isEqualTo(1);
        assertThat(ctx.headers()).isEqualTo(Map.of("h", "v"));
        assertThat(ns.stats().pending()).isZero();
        assertThat(ns.stats().running()).isZero();
        assertCompleted(ns.stats(), 1);
    }

    @Test
    public void messagesPublishedBeforeSubscribingAreHandled() {
        MessageId first = publish("t", "{}");
        MessageId second = publish("t", "{}");
        List<MessageId> handled = new CopyOnWriteArrayList<>();

        ns.subscribe(Subscriber.on("t").handleDelivery((delivery, ctx) -> handled.add(delivery.id())));

        eventually().until(() -> isDone(first) && isDone(second));
        assertThat(handled).containsExactlyInAnyOrder(first, second);
    }

    @Test
    public void typedHandlerReceivesDecodedPayload() {
        List<Order> received = new CopyOnWriteArrayList<>();
        ns.subscribe(Subscriber.on("orders").handle(Order.class, (order, ctx) -> received.add(order)));

        MessageId id = ns.publish("orders", new Order("o-9", 2));

        eventually().until(() -> isDone(id));
        assertThat(received).containsExactly(new Order("o-9", 2));
    }

    @Test
    public void throwingHandlerIsRetriedAfterBackoffWithAttemptTwo() {
        List<Integer> attempts = new CopyOnWriteArrayList<>();
        ns.subscribe(Subscriber.on("t").retry(Backoff.fixed(Duration.ofSeconds(5))).handleDelivery((delivery, ctx) -> {
            attempts.add(ctx.attempt());
            if (ctx.attempt() == 1) {
                throw new IllegalStateException("first try fails");
            }
        }));
        MessageId id = publish(Message.to("t").maxAttempts(5));

        eventually().until(() -> isPendingWithAttempts(id, 1));
        MessageInfo waiting = info(id);
        assertThat(waiting.runAt()).isEqualTo(START.plusSeconds(5));
        assertThat(waiting.lastError()).contains("first try fails");
        assertThat(attempts).containsExactly(1);

        advance(Duration.ofSeconds(5));

        eventually().until(() -> isDone(id));
        assertThat(attempts).containsExactly(1, 2);
    }

    private static int recurse(int depth) {
        return recurse(depth + 1) + 1;
    }

    @Test
    public void handlerErrorIsAFailedAttemptRetriedWithBackoffAndThePoolKeepsRunning() {
        List<Integer> attempts = new CopyOnWriteArrayList<>();
        List<MessageId> handled = new CopyOnWriteArrayList<>();
        ns.subscribe(Subscriber.on("t").concurrency(1).retry(Backoff.fixed(Duration.ofSeconds(5))).handleDelivery((delivery, ctx) -> {
            if (delivery.json().contains("deep")) {
                attempts.add(ctx.attempt());
                if (ctx.attempt() == 1) {
                    recurse(0);
                }
            }
            handled.add(delivery.id());
        }));
        MessageId deep = publish(Message.to("t").json("{\"deep\":true}").maxAttempts(5));

        eventually().until(() -> isPendingWithAttempts(deep, 1));
        MessageInfo waiting = info(deep);
        assertThat(waiting.lastError()).startsWith("java.lang.StackOverflowError");
        assertThat(waiting.runAt()).isEqualTo(START.plusSeconds(5));

        // The one handler slot is free again: the next message runs on it.
        MessageId next = publish(Message.to("t").json("{}"));
        eventually().until(() -> isDone(next));

        advance(Duration.ofSeconds(5));
        eventually().until(() -> isDone(deep));
        assertThat(attempts).containsExactly(1, 2);
        assertThat(handled).containsExactly(next, deep);
    }

    @Test
    public void handlerErrorOnTheLastAttemptDeadLettersTheMessage() {
        ns.subscribe(Subscriber.on("t").handleDelivery((delivery, ctx) -> {
            throw new OutOfMemoryError("simulated: no room for the report");
        }));
        MessageId id = publish(Message.to("t").maxAttempts(1));

        eventually().until(() -> isDead(id));

        assertThat(info(id).lastError()).isEqualTo("java.lang.OutOfMemoryError: simulated: no room for the report");
    }

    @Test
    public void throwingHandlerUsesTopicBackoffWhenSubscriberHasNone() {
        ns.subscribe(Subscriber.on(SLOW).handleDelivery((delivery, ctx) -> {
            throw new IllegalStateException("nope");
        }));
        MessageId id = publish(Message.to(SLOW).maxAttempts(5));

        eventually().until(() -> isPendingWithAttempts(id, 1));

        assertThat(info(id).runAt()).isEqualTo(START.plus(Duration.ofMinutes(7)));
    }

    @Test
    public void alwaysThrowingHandlerEndsDeadAfterMaxAttempts() {
        AtomicInteger calls = new AtomicInteger();
        ns.subscribe(Subscriber.on("t").retry(Backoff.fixed(Duration.ofSeconds(1))).handleDelivery((delivery, ctx) -> {
            calls.incrementAndGet();
            throw new IllegalArgumentException("kaboom on attempt " + ctx.attempt());
        }));
        MessageId id = publish(Message.to("t").maxAttempts(3));

        for (int attempt = 1; attempt <= 2; attempt++) {
            int expected = attempt;
            eventually().until(() -> isPendingWithAttempts(id, expected));
            advance(Duration.ofSeconds(1));
        }

        eventually().until(() -> isDead(id));
        MessageInfo info = info(id);
        assertThat(info.attempts()).isEqualTo(3);
        assertThat(info.lastError()).contains("kaboom on attempt 3");
        assertThat(calls).hasValue(3);
        assertThat(ns.deadLetters().get(id)).isPresent();
        assertThat(ns.stats().dead()).isEqualTo(1);
    }

    @Test
    public void contextFailDeadLettersAtOnce() {
        AtomicInteger calls = new AtomicInteger();
        ns.subscribe(Subscriber.on("t").handleDelivery((delivery, ctx) -> {
            calls.incrementAndGet();
            ctx.fail("invalid order");
        }));
        MessageId id = publish(Message.to("t").maxAttempts(10));

        eventually().until(() -> isDead(id));

        assertThat(info(id).attempts()).isEqualTo(1);
        assertThat(info(id).lastError()).isEqualTo("invalid order");
        assertThat(calls).hasValue(1);
    }

    @Test
    public void contextRetryInMakesMessagePendingDueAfterThatDelay() {
        List<Integer> attempts = new CopyOnWriteArrayList<>();
        ns.subscribe(Subscriber.on("t").handleDelivery((delivery, ctx) -> {
            attempts.add(ctx.attempt());
            if (ctx.attempt() == 1) {
                ctx.retryIn(Duration.ofMinutes(2), "not ready yet");
            }
        }));
        MessageId id = publish(Message.to("t").maxAttempts(5));

        eventually().until(() -> isPendingWithAttempts(id, 1));
        assertThat(info(id).runAt()).isEqualTo(START.plus(Duration.ofMinutes(2)));
        assertThat(info(id).lastError()).isEqualTo("not ready yet");

        advance(Duration.ofMinutes(2));

        eventually().until(() -> isDone(id));
        assertThat(attempts).containsExactly(1, 2);
    }

    @Test
    public void concurrencyLimitIsNeverExceeded() throws Exception {
        CountDownLatch gate = gate();
        AtomicInteger current = new AtomicInteger();
        AtomicInteger max = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        Subscription subscription = ns.subscribe(Subscriber.on("t").concurrency(2).handleDelivery((delivery, ctx) -> {
            max.accumulateAndGet(current.incrementAndGet(), Math::max);
            try {
                await(gate);
            } finally {
                current.decrementAndGet();
                done.incrementAndGet();
            }
        }));
        for (int i = 0; i < 6; i++) {
            publish("t", "{}");
        }

        eventually().until(() -> current.get() == 2);
        Awaitility.await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2))
                .until(() -> current.get() <= 2 && subscription.inFlight() <= 2);
        gate.countDown();

        eventually().until(() -> done.get() == 6 && ns.stats().pending() + ns.stats().running() == 0);
        assertThat(max).hasValue(2);
        assertCompleted(ns.stats(), 6);
    }

    /**
     * A subscriber working through a backlog refills a slot as soon as its handler finishes, even while the others
     * still run: waiting for more slots to free up (to claim them in one statement) must not leave a slow handler's
     * slot empty for longer than a moment.
     *
     * @throws Exception when interrupted while waiting for the handlers
     */
    @Test
    public void aSlotFreedWhileOtherHandlersStillRunIsRefilled() throws Exception {
        java.util.concurrent.Semaphore finishes = new java.util.concurrent.Semaphore(0);
        List<MessageId> started = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 10; i++) {
            publish("t", "{}");
        }
        ns.subscribe(Subscriber.on("t").concurrency(4).handleDelivery((delivery, ctx) -> {
            started.add(delivery.id());
            assertThat(finishes.tryAcquire(WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("handler allowed to finish in time").isTrue();
        }));
        try {
            eventually().until(() -> started.size() == 4);

            finishes.release();

            eventually().until(() -> started.size() == 5);
            Awaitility.await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> started.size() == 5);
        } finally {
            finishes.release(100);
        }
        eventually().until(() -> ns.stats().pending() + ns.stats().running() == 0);
        assertThat(started).hasSize(10).doesNotHaveDuplicates();
        assertCompleted(ns.stats(), 10);
    }

    @Test
    public void longRunningHandlerHasItsLeaseExtended() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch gate = gate();
        ns.subscribe(Subscriber.on("t").worker("long-runner").lease(Duration.ofSeconds(30)).handleDelivery((delivery, ctx) -> {
            started.countDown();
            await(gate);
        }));
        MessageId id = publish("t", "{}");
        await(started);
        Instant firstLeaseEnd = START.plusSeconds(30);
        assertThat(info(id).leaseUntil()).isEqualTo(firstLeaseEnd);

        advance(Duration.ofSeconds(20));
        eventually().untilAsserted(() -> assertThat(info(id).leaseUntil()).isAfter(firstLeaseEnd));
        advance(Duration.ofSeconds(20));

        assertThat(ns.pull(Pull.from("t").worker("w2").limit(10))).isEmpty();
        MessageInfo info = info(id);
        assertThat(info.state()).isEqualTo(MessageState.RUNNING);
        assertThat(info.worker()).isEqualTo("long-runner");
        assertThat(info.attempts()).isEqualTo(1);

        gate.countDown();
        eventually().until(() -> isDone(id));
        assertCompleted(ns.stats(), 1);
    }

    @Test
    public void closeStopsClaimingAndWaitsForHandlerInFlight() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch gate = gate();
        AtomicBoolean finished = new AtomicBoolean();
        List<MessageId> handled = new CopyOnWriteArrayList<>();
        Subscription subscription = ns.subscribe(Subscriber.on("t").concurrency(1).handleDelivery((delivery, ctx) -> {
            handled.add(delivery.id());
            started.countDown();
            await(gate);
            finished.set(true);
        }));
        MessageId first = publish("t", "{}");
        await(started);

        ExecutorService closer = Executors.newSingleThreadExecutor();
        try {
            Future<?> closing = closer.submit(() -> subscription.close());
            eventually().until(() -> !subscription.isRunning());
            MessageId second = publish("t", "{}");
            assertThat(closing.isDone()).as("close returned while a handler was still running").isFalse();

            gate.countDown();
            closing.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);

            assertThat(finished).as("handler finished before close returned").isTrue();
            eventually().until(() -> isDone(first));
            assertThat(subscription.inFlight()).isZero();
            MessageId third = publish("t", "{}");
            Awaitility.await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2))
                    .until(() -> handled.size() == 1);
            assertThat(handled).containsExactly(first);
            assertThat(info(second).state()).isEqualTo(MessageState.PENDING);
            assertThat(info(second).attempts()).isZero();
            assertThat(info(third).state()).isEqualTo(MessageState.PENDING);
            assertThat(ns.stats().running()).isZero();
        } finally {
            closer.shutdownNow();
        }
    }

    @Test
    public void closeIsIdempotentAndQueueCloseClosesSubscriptions() {
        Subscription first = ns.subscribe(Subscriber.on("t").handleDelivery((delivery, ctx) -> { }));
        Subscription second = ns.subscribe(Subscriber.on("u").handleDelivery((delivery, ctx) -> { }));
        assertThat(first.isRunning()).isTrue();

        first.close();
        first.close();
        assertThat(first.isRunning()).isFalse();

        queue.close();
        assertThat(second.isRunning()).isFalse();
        assertThatThrownBy(() -> ns.subscribe(Subscriber.on("t").handleDelivery((delivery, ctx) -> { })))
                .isInstanceOf(QueueClosedException.class);
    }

    @Test
    public void twoSubscriptionsOnOneTopicHandleEachMessageOnce() {
        Map<MessageId, AtomicInteger> counts = new ConcurrentHashMap<>();
        Map<String, AtomicInteger> perWorker = new ConcurrentHashMap<>();
        for (String worker : List.of("sub-a", "sub-b")) {
            ns.subscribe(Subscriber.on("t").worker(worker).concurrency(4).handleDelivery((delivery, ctx) -> {
                counts.computeIfAbsent(delivery.id(), k -> new AtomicInteger()).incrementAndGet();
                perWorker.computeIfAbsent(delivery.worker(), k -> new AtomicInteger()).incrementAndGet();
            }));
        }
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            batch.add(Message.to("t").json("{\"i\":" + i + "}"));
        }

        ns.publishAll(batch);

        eventually().until(() -> counts.size() == 200 && ns.stats().pending() + ns.stats().running() == 0);
        assertThat(counts.values()).allSatisfy(count -> assertThat(count).hasValue(1));
        assertThat(perWorker.keySet()).isSubsetOf("sub-a", "sub-b");
        assertCompleted(ns.stats(), 200);
    }

    @Test
    public void multiTopicSubscriberHonoursTopicOrder() {
        List<String> topics = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 3; i++) {
            publish("low", "{}");
        }
        for (int i = 0; i < 3; i++) {
            publish("high", "{}");
        }

        ns.subscribe(Subscriber.on("high", "low").concurrency(1).handleDelivery((delivery, ctx) -> topics.add(ctx.topic())));

        eventually().until(() -> topics.size() == 6);
        assertThat(topics).containsExactly("high", "high", "high", "low", "low", "low");
    }

    @Test
    public void undecodablePayloadIsDeadLetteredWithoutCallingHandler() {
        AtomicInteger calls = new AtomicInteger();
        ns.subscribe(Subscriber.on("orders").handle(Order.class, (order, ctx) -> calls.incrementAndGet()));

        MessageId id = publish(Message.to("orders").json("[1, 2, 3]").maxAttempts(5));

        eventually().until(() -> isDead(id));
        assertThat(calls).hasValue(0);
        assertThat(info(id).lastError()).isNotBlank();
        assertThat(info(id).attempts()).isEqualTo(1);
    }

    @Test
    public void delayedMessageIsHandledWhenClockReachesItsDueTime() {
        List<MessageId> handled = new CopyOnWriteArrayList<>();
        ns.subscribe(Subscriber.on("t").handleDelivery((delivery, ctx) -> handled.add(delivery.id())));
        MessageId id = publish(Message.to("t").delay(Duration.ofMinutes(1)));

        Awaitility.await().during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(2)).until(handled::isEmpty);
        advance(Duration.ofMinutes(1));

        eventually().until(() -> isDone(id));
        assertThat(handled).containsExactly(id);
    }

    @Test
    public void subscriberRescuesLeaseOfCrashedPuller() {
        List<Integer> attempts = new CopyOnWriteArrayList<>();
        MessageId id = publish(Message.to("t").maxAttempts(5));
        Delivery abandoned = ns.pullOne(pull("t").visibility(Duration.ofSeconds(30))).orElseThrow();
        ns.subscribe(Subscriber.on("t").handleDelivery((delivery, ctx) -> attempts.add(ctx.attempt())));

        advance(Duration.ofSeconds(31));

        eventually().until(() -> isDone(id));
        assertThat(attempts).containsExactly(2);
        assertThat(ns.ack(abandoned).isLeaseLost()).isTrue();
    }
}
