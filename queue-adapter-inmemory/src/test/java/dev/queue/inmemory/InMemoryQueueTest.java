package dev.queue.inmemory;

import dev.queue.api.Backoff;
import dev.queue.api.DeadLetter;
import dev.queue.api.ManualClock;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.MessageState;
import dev.queue.api.Pull;
import dev.queue.api.Namespace;
import dev.queue.api.Page;
import dev.queue.api.PublishResult;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import dev.queue.api.UnsupportedCapabilityException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

class InMemoryQueueTest {

    record OrderPaid(long orderId, String customer) {
    }

    private final ManualClock clock = new ManualClock(Instant.parse("2025-03-01T12:00:00Z"));
    private InMemoryQueue queue;

    @AfterEach
    void close() {
        if (queue != null) {
            queue.close();
        }
    }

    record Order(String id, int cents) {
    }

    @Test
    void expiredLeasesOfEveryOpenedNamespaceAreRescuedWithoutAnyPull() {
        queue = InMemoryQueue.threaded(clock, QueueOptions.defaults().sweepInterval(Duration.ofMillis(50)));
        Namespace shop = queue.namespace("shop");
        Namespace mail = queue.namespace("mail");
        MessageId order = shop.publish("order.paid", "{}");
        MessageId letter = mail.publish("mail.send", "{}");
        assertThat(shop.pull(Pull.from("order.paid").visibility(Duration.ofSeconds(30)))).hasSize(1);
        assertThat(mail.pull(Pull.from("mail.send").visibility(Duration.ofSeconds(30)))).hasSize(1);
        // The rescuer runs once anything subscribes; this subscriber's topic has nothing to claim.
        shop.subscribe(Subscriber.on("elsewhere").handleDelivery((delivery, ctx) -> { }));

        clock.advance(Duration.ofSeconds(31));

        await().atMost(Duration.ofSeconds(10)).until(() -> shop.inspect(order).orElseThrow().state() == MessageState.PENDING
                && mail.inspect(letter).orElseThrow().state() == MessageState.PENDING);
    }

    @Test
    void runDueRescuesExpiredLeasesBeforeItRunsHandlers() {
        queue = InMemoryQueue.withClock(clock);
        Namespace shop = queue.defaultNamespace();
        shop.publish("order.paid", "{}");
        assertThat(shop.pull(Pull.from("order.paid").visibility(Duration.ofSeconds(30)))).hasSize(1);
        List<Integer> attempts = new CopyOnWriteArrayList<>();
        shop.subscribe(Subscriber.on("order.paid").handleDelivery((delivery, ctx) -> attempts.add(ctx.attempt())));
        assertThat(queue.runDue()).as("still leased").isZero();

        clock.advance(Duration.ofSeconds(31));

        assertThat(queue.runDue()).isEqualTo(1);
        assertThat(attempts).containsExactly(2);
    }

    /** The "ten lines" of the README, kept compiling and passing. */
    @Test
    void theTenLinesOfTheReadmeWork() {
        List<Order> billing = new CopyOnWriteArrayList<>();
        ManualClock clock = ManualClock.startingNow();
        try (InMemoryQueue queue = InMemoryQueue.withClock(clock)) {
            Namespace shop = queue.namespace("shop");
            shop.subscribe(Subscriber.on("order.paid").handle(Order.class, (order, ctx) -> billing.add(order)));
            shop.publish("order.paid", new Order("o-1", 4200));
            queue.runDue();
            clock.advance(Duration.ofMinutes(1));
            queue.runDue();
            assertThat(shop.deadLetters().list(Page.first(10))).isEmpty();
        }
        assertThat(billing).containsExactly(new Order("o-1", 4200));
    }

    @Test
    void theReadmeFlowRunsHandlersRetriesThemInTimeAndDeadLettersThem() {
        queue = InMemoryQueue.withClock(clock, QueueOptions.defaults().defaultMaxAttempts(3));
        Namespace shop = queue.defaultNamespace();
        List<OrderPaid> charged = new CopyOnWriteArrayList<>();
        AtomicInteger failuresLeft = new AtomicInteger(0);
        shop.subscribe(Subscriber.on("order.paid").retry(Backoff.fixed(Duration.ofMinutes(1)))
                .handle(OrderPaid.class, (order, ctx) -> {
                    if (failuresLeft.getAndDecrement() > 0) {
                        throw new IllegalStateException("billing is down");
                    }
                    charged.add(order);
                }));

        // 1. publish, run: the handler ran on this thread
        shop.publish("order.paid", new OrderPaid(1, "ada"));
        assertThat(queue.runDue()).isEqualTo(1);
        assertThat(charged).containsExactly(new OrderPaid(1, "ada"));
        assertThat(shop.stats().topic("order.paid").completed()).isEqualTo(1);

        // 2. a failure is retried after the backoff, once the clock gets there
        failuresLeft.set(1);
        shop.publish("order.paid", new OrderPaid(2, "bob"));
        assertThat(queue.runDue()).isEqualTo(1);
        assertThat(charged).hasSize(1);
        assertThat(shop.stats().topic("order.paid").pending()).isEqualTo(1);
        clock.advance(Duration.ofSeconds(59));
        assertThat(queue.runDue()).isZero();
        clock.advance(Duration.ofSeconds(1));
        assertThat(queue.runDue()).isEqualTo(1);
        assertThat(charged).containsExactly(new OrderPaid(1, "ada"), new OrderPaid(2, "bob"));

        // 3. out of attempts: a dead letter, with the last error and its attempts
        failuresLeft.set(Integer.MAX_VALUE);
        var id = shop.publish("order.paid", new OrderPaid(3, "cy"));
        assertThat(queue.runDue()).isEqualTo(1);
        clock.advance(Duration.ofMinutes(1));
        assertThat(queue.runDue()).isEqualTo(1);
        clock.advance(Duration.ofMinutes(1));
        assertThat(queue.runDue()).isEqualTo(1);
        clock.advance(Duration.ofHours(1));
        assertThat(queue.runDue()).isZero();

        DeadLetter dead = shop.deadLetters().get(id).orElseThrow();
        assertThat(dead.attempts()).isEqualTo(3);
        assertThat(dead.lastError()).contains("billing is down");
        assertThat(shop.deadLetters().list(Page.first(10))).extracting(DeadLetter::id).containsExactly(id);
        assertThat(shop.stats().topic("order.paid")).extracting("pending", "running", "completed", "dead")
                .containsExactly(0L, 0L, 2L, 1L);

        // 4. redriven, it runs again from attempt one
        failuresLeft.set(0);
        assertThat(shop.deadLetters().redrive(id)).isTrue();
        assertThat(queue.runDue()).isEqualTo(1);
        assertThat(charged).last().isEqualTo(new OrderPaid(3, "cy"));
        assertThat(shop.stats().dead()).isZero();
    }

    @Test
    void delayedMessagesRunOnlyOnceTheClockReachesThem() {
        queue = InMemoryQueue.withClock(clock);
        AtomicInteger runs = new AtomicInteger();
        queue.defaultNamespace().subscribe(Subscriber.on("reminder").handleDelivery((delivery, ctx) -> runs.incrementAndGet()));

        queue.defaultNamespace().publish(Message.to("reminder").payload(Map.of("to", "ada")).delay(Duration.ofHours(2)));

        assertThat(queue.runDue()).isZero();
        clock.advance(Duration.ofHours(2));
        assertThat(queue.runDue()).isEqualTo(1);
        assertThat(runs).hasValue(1);
        assertThat(queue.clock()).isSameAs(clock);
    }

    @Test
    void publishedRecordsWhatWasStoredPerNamespaceAndTopic() {
        queue = InMemoryQueue.withClock(clock);
        Namespace shop = queue.namespace("shop");
        Namespace other = queue.namespace("other");

        var first = shop.publish("order.paid", new OrderPaid(7, "ada"));
        shop.publish(Message.to("order.shipped").json("{\"orderId\":7}").header("trace", "abc"));
        PublishResult duplicate = shop.publish(Message.to("order.paid").payload(new OrderPaid(8, "bob")).uniqueKey("k"));
        assertThat(shop.publish(Message.to("order.paid").payload(new OrderPaid(9, "cy")).uniqueKey("k")).isDuplicate())
                .isTrue();
        other.publish("order.paid", new OrderPaid(1, "zed"));

        List<PublishedMessage> paid = queue.published("shop", "order.paid");
        assertThat(paid).extracting(PublishedMessage::id).containsExactly(first, duplicate.id());
        assertThat(paid.get(0).payload(OrderPaid.class)).isEqualTo(new OrderPaid(7, "ada"));
        assertThat(paid.get(0).publishedAt()).isEqualTo(clock.now());
        assertThat(paid.get(0).namespace()).isEqualTo("shop");
        assertThat(queue.published("shop")).hasSize(3);
        assertThat(queue.published("shop", "order.shipped")).singleElement().satisfies(m -> {
            assertThat(m.json()).isEqualTo("{\"orderId\":7}");
            assertThat(m.headers()).containsEntry("trace", "abc");
        });
        assertThat(queue.published("other")).singleElement()
                .satisfies(m -> assertThat(m.payload(OrderPaid.class).customer()).isEqualTo("zed"));

        queue.clearPublished();
        assertThat(queue.published("shop")).isEmpty();
        assertThat(shop.stats().pending()).isEqualTo(3);
    }

    @Test
    void runDueNeedsManualDispatchAndClockNeedsAManualClock() {
        queue = InMemoryQueue.threaded(clock, QueueOptions.defaults());
        assertThatThrownBy(queue::runDue).isInstanceOf(UnsupportedCapabilityException.class).hasMessageContaining("manualDispatch");
        assertThat(queue.clock()).isSameAs(clock);

        try (InMemoryQueue system = InMemoryQueue.create()) {
            assertThatThrownBy(system::clock).isInstanceOf(UnsupportedCapabilityException.class).hasMessageContaining("machine's clock");
        }
    }

    @Test
    void threadedSubscribersRunOnTheirOwnThreadsAndWakeOnPublish() {
        queue = InMemoryQueue.threaded(clock, QueueOptions.defaults());
        List<String> threads = new CopyOnWriteArrayList<>();
        Subscription subscription = queue.defaultNamespace().subscribe(Subscriber.on("jobs").concurrency(4)
                .handle(OrderPaid.class, (order, ctx) -> threads.add(Thread.currentThread().getName())));
        for (int i = 0; i < 20; i++) {
            queue.defaultNamespace().publish("jobs", new OrderPaid(i, "c" + i));
        }

        await().atMost(Duration.ofSeconds(10))
                .until(() -> queue.defaultNamespace().stats().topic("jobs").completed() == 20);
        assertThat(threads).hasSize(20).doesNotContain(Thread.currentThread().getName());
        subscription.close();
        assertThat(subscription.isRunning()).isFalse();
    }

    @Test
    void threadedSubscribersPickUpARetryWhenTheClockAdvances() {
        queue = InMemoryQueue.threaded(clock, QueueOptions.defaults().sweepInterval(Duration.ofHours(1)));
        AtomicInteger attempts = new AtomicInteger();
        queue.defaultNamespace().subscribe(Subscriber.on("jobs").retry(Backoff.fixed(Duration.ofSeconds(30)))
                .handleDelivery((delivery, ctx) -> {
                    if (attempts.incrementAndGet() == 1) {
                        throw new IllegalStateException("first time fails");
                    }
                }));

        queue.defaultNamespace().publish("jobs", Map.of("n", 1));
        await().atMost(Duration.ofSeconds(10)).until(() -> queue.defaultNamespace().stats().topic("jobs").pending() == 1);
        assertThat(attempts).hasValue(1);

        clock.advance(Duration.ofSeconds(30));
        await().atMost(Duration.ofSeconds(10)).until(() -> queue.defaultNamespace().stats().topic("jobs").completed() == 1);
        assertThat(attempts).hasValue(2);
    }

    @Test
    void aSystemClockQueueDeliversToSubscribers() {
        queue = InMemoryQueue.create();
        List<OrderPaid> seen = new CopyOnWriteArrayList<>();
        queue.defaultNamespace().subscribe(Subscriber.on("t").handle(OrderPaid.class, (order, ctx) -> seen.add(order)));

        queue.defaultNamespace().publish("t", new OrderPaid(5, "e"));

        await().atMost(Duration.ofSeconds(10)).until(() -> seen.size() == 1);
        assertThat(seen).containsExactly(new OrderPaid(5, "e"));
    }
}
