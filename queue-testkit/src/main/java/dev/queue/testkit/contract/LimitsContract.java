package dev.queue.testkit.contract;

import dev.queue.api.Delivery;
import dev.queue.api.FlowControl;
import dev.queue.api.InvalidInputException;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.MessageState;
import dev.queue.api.Namespace;
import dev.queue.api.Outcome;
import dev.queue.api.Pull;
import dev.queue.api.Queue;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import dev.queue.api.TopicLimits;
import dev.queue.testkit.Capability;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Fleet-wide limits (docs/flow-control.md, "Limits"): at most so many messages of a topic (and of each partition)
 * running at once, at most so many starts per period; set, changed and cleared at run time; never exceeded by four
 * queues over one store claiming at once. Skipped, with the adapter's reason, when it declares {@link Capability#LIMITS}
 * missing.
 */
public abstract class LimitsContract extends ContractSupport {

    /** Messages of the races between four queue instances. */
    protected static final int RACE_MESSAGES = 20_000;
    private static final Duration RACE_WAIT = Duration.ofMinutes(5);

    /** For subclasses. */
    protected LimitsContract() {
    }

    /** Every test here needs the capability. */
    @BeforeEach
    protected void requireLimits() {
        requires(Capability.LIMITS);
    }

    private List<Delivery> pullAll(String topic) {
        return ns.pull(Pull.from(topic).worker(WORKER).limit(1000));
    }

    private void publishMany(String topic, int count, java.util.function.IntFunction<String> partition) {
        for (int start = 0; start < count; start += 1000) {
            List<Message> batch = new ArrayList<>();
            for (int i = start; i < Math.min(count, start + 1000); i++) {
                Message message = Message.to(topic).json("{\"i\":" + i + "}");
                String part = partition == null ? null : partition.apply(i);
                batch.add(part == null ? message : message.header("customer", part));
            }
            ns.publishAll(batch);
        }
    }

    // ------------------------------------------------------------------ setting

    @Test
    public void limitsAreSetChangedAndClearedAtRunTime() {
        FlowControl flow = ns.flowControl();
        TopicLimits limits = TopicLimits.none().withMaxRunning(5)
                .partitionedBy(TopicLimits.Partition.header("customer")).withMaxRunningPerPartition(2)
                .withRate(10, Duration.ofSeconds(1)).withRatePerPartition(3, Duration.ofMillis(500));
        assertThat(flow.limits("t")).isEmpty();
        assertThat(flow.setLimits("t", limits)).isTrue();
        assertThat(flow.setLimits("t", limits)).isFalse();
        assertThat(flow.limits("t")).contains(limits);
        assertThat(flow.allLimits()).isEqualTo(Map.of("t", limits));

        TopicLimits changed = TopicLimits.none().withRate(1, Duration.ofMinutes(1));
        assertThat(flow.setLimits("t", changed)).isTrue();
        assertThat(flow.limits("t")).contains(changed);
        assertThat(flow.setLimits("u", TopicLimits.none().withMaxRunning(1))).isTrue();
        assertThat(flow.allLimits().keySet()).containsExactly("t", "u");
        assertThat(queue.namespace("other").flowControl().allLimits()).isEmpty();

        assertThat(flow.clearLimits("t")).isTrue();
        assertThat(flow.clearLimits("t")).isFalse();
        assertThat(flow.limits("t")).isEmpty();
        assertThat(flow.allLimits().keySet()).containsExactly("u");
    }

    @Test
    public void badLimitsAreRefusedAndChangeNothing() {
        FlowControl flow = ns.flowControl();
        TopicLimits kept = TopicLimits.none().withMaxRunning(3);
        flow.setLimits("t", kept);
        TopicLimits.Partition customer = TopicLimits.Partition.header("customer");
        List<TopicLimits> bad = List.of(
                TopicLimits.none(),
                TopicLimits.none().withMaxRunning(0),
                TopicLimits.none().withMaxRunning(TopicLimits.MAX_RUNNING + 1),
                TopicLimits.none().withMaxRunningPerPartition(2),
                TopicLimits.none().withMaxRunning(2).partitionedBy(customer),
                TopicLimits.none().partitionedBy(TopicLimits.Partition.header("no spaces")).withMaxRunningPerPartition(1),
                TopicLimits.none().partitionedBy(customer).withMaxRunningPerPartition(-1),
                TopicLimits.none().withRate(0, Duration.ofSeconds(1)),
                TopicLimits.none().withRate(TopicLimits.MAX_STARTS + 1, Duration.ofSeconds(1)),
                TopicLimits.none().withRate(1, Duration.ZERO),
                TopicLimits.none().withRate(1, Duration.ofSeconds(-1)),
                TopicLimits.none().withRate(1, Duration.ofDays(1).plusMillis(1)),
                TopicLimits.none().withRate(1, Duration.ofNanos(1_500_001)),
                TopicLimits.none().partitionedBy(customer).withRatePerPartition(1, Duration.ofMillis(0)));
        for (TopicLimits limits : bad) {
            assertThatThrownBy(() -> flow.setLimits("t", limits)).as("%s", limits)
                    .isInstanceOf(InvalidInputException.class);
        }
        assertThatThrownBy(() -> flow.setLimits("t", null)).isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> TopicLimits.Partition.header(null)).isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> TopicLimits.none().withRate(1, null)).isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> TopicLimits.none().partitionedBy(null)).isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> flow.setLimits("bad topic", kept)).isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> flow.setLimits(null, kept)).isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> flow.limits("bad topic")).isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> flow.clearLimits("")).isInstanceOf(InvalidInputException.class);
        assertThat(flow.allLimits()).isEqualTo(Map.of("t", kept));
    }

    // ------------------------------------------------------------------ concurrency

    @Test
    public void maxRunningHoldsBackClaimsUntilMessagesStopRunning() {
        ns.flowControl().setLimits("t", TopicLimits.none().withMaxRunning(2));
        List<MessageId> ids = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            ids.add(publish("t", "{\"n\":" + i + "}"));
        }
        MessageId other = publish("u", "{}");

        List<Delivery> first = ns.pull(Pull.fromAny("t", "u").worker(WORKER).limit(10));
        assertThat(first).extracting(Delivery::id).containsExactly(ids.get(0), ids.get(1), other);
        assertNothingDue("t");

        // an acknowledgement frees a place
        assertThat(ns.ack(first.get(0))).isEqualTo(Outcome.ACKED);
        List<Delivery> second = pullAll("t");
        assertThat(second).extracting(Delivery::id).containsExactly(ids.get(2));
        assertNothingDue("t");

        // a retry frees one, and the retried message waits its turn like the others: retries are starts too
        assertThat(ns.nack(first.get(1), "boom", Duration.ZERO)).isEqualTo(Outcome.RETRY_SCHEDULED);
        List<Delivery> third = pullAll("t");
        assertThat(third).extracting(Delivery::id).containsExactly(ids.get(1));
        assertThat(third.get(0).attempt()).isEqualTo(2);

        // a snooze frees one
        assertThat(ns.snooze(second.get(0), Duration.ofHours(1))).isEqualTo(Outcome.SNOOZED);
        assertThat(pullAll("t")).extracting(Delivery::id).containsExactly(ids.get(3));
        assertNothingDue("t");

        // a cancel of a running message frees one
        assertThat(ns.flowControl().cancel(ids.get(3))).contains(MessageState.RUNNING);
        assertThat(pullAll("t")).extracting(Delivery::id).containsExactly(ids.get(4));

        // an expired lease, rescued, makes its message pending again: it runs no more and waits like the others
        advance(Duration.ofMinutes(5));
        assertThat(pullAll("t")).hasSize(2);
        assertNothingDue("t");
    }

    @Test
    public void limitsCountTheMessagesAlreadyRunningWhenSet() {
        for (int i = 0; i < 7; i++) {
            publish("t", "{\"n\":" + i + "}");
        }
        List<Delivery> running = ns.pull(pull("t").limit(3));
        assertThat(running).hasSize(3);

        ns.flowControl().setLimits("t", TopicLimits.none().withMaxRunning(2));
        assertNothingDue("t");
        ns.ack(running.get(0));
        assertNothingDue("t");
        ns.ack(running.get(1));
        assertThat(pullAll("t")).hasSize(1);

        // raising the limit lets more start at once, clearing it lets everything start
        ns.flowControl().setLimits("t", TopicLimits.none().withMaxRunning(3));
        assertThat(pullAll("t")).hasSize(1);
        assertNothingDue("t");
        ns.flowControl().clearLimits("t");
        assertThat(pullAll("t")).hasSize(2);
    }

    @Test
    public void perPartitionLimitHoldsBackOnlyFullPartitions() {
        ns.flowControl().setLimits("t", TopicLimits.none()
                .partitionedBy(TopicLimits.Partition.header("customer")).withMaxRunningPerPartition(1));
        MessageId a1 = publish(Message.to("t").json("{}").header("customer", "a"));
        MessageId a2 = publish(Message.to("t").json("{}").header("customer", "a"));
        MessageId b1 = publish(Message.to("t").json("{}").header("customer", "b"));
        MessageId none1 = publish(Message.to("t").json("{}"));
        MessageId none2 = publish(Message.to("t").json("{}"));
        MessageId b2 = publish(Message.to("t").json("{}").header("customer", "b"));

        List<Delivery> first = pullAll("t");
        assertThat(first).extracting(Delivery::id).containsExactly(a1, b1, none1);
        assertNothingDue("t");

        ns.ack(first.get(0));
        assertThat(pullAll("t")).extracting(Delivery::id).containsExactly(a2);
        ns.ack(first.get(2));
        ns.ack(first.get(1));
        assertThat(pullAll("t")).extracting(Delivery::id).containsExactly(none2, b2);
    }

    @Test
    public void heldBackSubscriberClaimsAtOnceWhenACompletionInItsProcessFreesRoom() throws Exception {
        // sweeps an hour apart: only the completion can wake the subscriber in time
        recreateQueue(options().sweepInterval(Duration.ofHours(1)));
        ns.flowControl().setLimits("t", TopicLimits.none().withMaxRunning(1));
        CountDownLatch release = new CountDownLatch(1);
        Set<Integer> started = ConcurrentHashMap.newKeySet();
        AtomicInteger running = new AtomicInteger();
        AtomicInteger maxRunning = new AtomicInteger();
        try (Subscription ignored = ns.subscribe(Subscriber.on("t").concurrency(4).handle(Map.class, (body, ctx) -> {
            maxRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
            try {
                int n = ((Number) body.get("n")).intValue();
                started.add(n);
                if (n == 0) {
                    assertThat(release.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
                }
            } finally {
                running.decrementAndGet();
            }
        }))) {
            for (int i = 0; i < 3; i++) {
                publish("t", "{\"n\":" + i + "}");
            }
            eventually().until(() -> started.contains(0));
            assertThat(started).containsExactly(0);
            release.countDown();
            eventually().until(() -> started.size() == 3);
        }
        assertThat(maxRunning.get()).isEqualTo(1);
    }

    @Test
    public void limitsAreNeverExceededByFourQueuesOverOneStore() throws Exception {
        requires(Capability.SHARED_STORE_ACROSS_INSTANCES);
        int limit = 5;
        ns.flowControl().setLimits("t", TopicLimits.none().withMaxRunning(limit));
        publishMany("t", RACE_MESSAGES, null);
        Race race = new Race(m -> "");
        race.run(limit, Integer.MAX_VALUE);
    }

    @Test
    public void partitionLimitsAreNeverExceededByFourQueuesOverOneStore() throws Exception {
        requires(Capability.SHARED_STORE_ACROSS_INSTANCES);
        int perPartition = 2;
        ns.flowControl().setLimits("t", TopicLimits.none()
                .partitionedBy(TopicLimits.Partition.header("customer")).withMaxRunningPerPartition(perPartition));
        publishMany("t", RACE_MESSAGES, i -> "c" + (i % 8));
        Race race = new Race(m -> m.get("customer"));
        race.run(Integer.MAX_VALUE, perPartition);
    }

    /**
     * Four queues over the store (this test's and three more) subscribe to topic t with 8 handlers each; every handler
     * counts, at its start and end, the messages running in the topic and in its partition, from the handlers' side.
     */
    private final class Race {
        private final java.util.function.Function<Map<String, String>, String> partitionOf;
        private final AtomicInteger running = new AtomicInteger();
        private final AtomicInteger maxRunning = new AtomicInteger();
        private final Map<String, AtomicInteger> runningByPartition = new ConcurrentHashMap<>();
        private final AtomicInteger maxByPartition = new AtomicInteger();
        private final Set<MessageId> handled = ConcurrentHashMap.newKeySet();
        private final AtomicInteger handledTimes = new AtomicInteger();

        Race(java.util.function.Function<Map<String, String>, String> partitionOf) {
            this.partitionOf = partitionOf;
        }

        void run(int limit, int perPartition) throws Exception {
            List<Queue> others = new ArrayList<>();
            List<Subscription> subscriptions = new ArrayList<>();
            try {
                List<Namespace> stacks = new ArrayList<>();
                stacks.add(ns);
                for (int i = 0; i < 3; i++) {
                    Queue other = queueFactory().createSharing(queue, clock, options());
                    others.add(other);
                    stacks.add(other.namespace(NAMESPACE));
                }
                for (Namespace stack : stacks) {
                    subscriptions.add(stack.subscribe(Subscriber.on("t").concurrency(8).lease(Duration.ofMinutes(10))
                            .handle(Map.class, (body, ctx) -> handle(ctx.messageId(), ctx.headers()))));
                }
                Awaitility().until(() -> handledTimes.get() >= RACE_MESSAGES);
            } finally {
                subscriptions.forEach(Subscription::close);
                others.forEach(Queue::close);
            }
            assertThat(handled).hasSize(RACE_MESSAGES);
            assertThat(handledTimes.get()).isEqualTo(RACE_MESSAGES);
            if (limit != Integer.MAX_VALUE) {
                assertThat(maxRunning.get()).as("most running at once").isLessThanOrEqualTo(limit).isGreaterThan(1);
            }
            if (perPartition != Integer.MAX_VALUE) {
                assertThat(maxByPartition.get()).as("most running at once in a partition")
                        .isLessThanOrEqualTo(perPartition).isGreaterThan(0);
                assertThat(maxRunning.get()).as("partitions ran side by side").isGreaterThan(perPartition);
            }
        }

        private org.awaitility.core.ConditionFactory Awaitility() {
            return org.awaitility.Awaitility.await().atMost(RACE_WAIT).pollInterval(Duration.ofMillis(50));
        }

        private void handle(MessageId id, Map<String, String> headers) {
            AtomicInteger inPartition = runningByPartition.computeIfAbsent(partitionOf.apply(headers),
                    p -> new AtomicInteger());
            maxRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
            maxByPartition.accumulateAndGet(inPartition.incrementAndGet(), Math::max);
            try {
                // a moment of work, so that handlers overlap
                long until = System.nanoTime() + 20_000;
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                handled.add(id);
                handledTimes.incrementAndGet();
            } finally {
                inPartition.decrementAndGet();
                running.decrementAndGet();
            }
        }
    }

    // ------------------------------------------------------------------ rate

    @Test
    public void rateStaysWithinItsBucketOverSixtySimulatedSeconds() {
        int perSecond = 10;
        ns.flowControl().setLimits("t", TopicLimits.none().withRate(perSecond, Duration.ofSeconds(1)));
        publishMany("t", 1000, null);
        Duration step = Duration.ofMillis(100);
        List<Integer> startsPerStep = new ArrayList<>();
        for (int i = 0; i <= 600; i++) {
            startsPerStep.add(pullAll("t").size());
            if (i < 600) {
                advance(step);
            }
        }
        int total = startsPerStep.stream().mapToInt(Integer::intValue).sum();
        // a full bucket at first (a burst of 10), then one start per tenth of a second
        assertThat(startsPerStep.get(0)).isEqualTo(perSecond);
        assertThat(total).isEqualTo(perSecond + 600);
        // over any second, at most a bucket plus a second's refill
        for (int i = 0; i + 10 < startsPerStep.size(); i++) {
            int window = startsPerStep.subList(i, i + 11).stream().mapToInt(Integer::intValue).sum();
            assertThat(window).as("starts from step %d to %d", i, i + 10).isLessThanOrEqualTo(2 * perSecond);
        }
    }

    @Test
    public void rateCountsRetriesAsStarts() {
        ns.flowControl().setLimits("t", TopicLimits.none().withRate(1, Duration.ofMinutes(10)));
        MessageId id = publish("t", "{}");
        Delivery first = pullOne("t");
        assertThat(ns.nack(first, "boom", Duration.ZERO)).isEqualTo(Outcome.RETRY_SCHEDULED);
        assertNothingDue("t");
        advance(Duration.ofMinutes(10));
        Delivery again = pullOne("t");
        assertThat(again.id()).isEqualTo(id);
        assertThat(again.attempt()).isEqualTo(2);
    }

    @Test
    public void ratePerPartitionRationsEachPartition() {
        ns.flowControl().setLimits("t", TopicLimits.none()
                .partitionedBy(TopicLimits.Partition.header("customer")).withRatePerPartition(2, Duration.ofSeconds(1)));
        publishMany("t", 10, i -> i % 2 == 0 ? "a" : "b");
        List<Delivery> first = pullAll("t");
        assertThat(first).hasSize(4);
        assertThat(first.stream().filter(d -> "a".equals(d.headers().get("customer"))).count()).isEqualTo(2);
        assertNothingDue("t");
        advance(Duration.ofMillis(500));
        List<Delivery> second = pullAll("t");
        assertThat(second).hasSize(2);
        assertThat(second.stream().filter(d -> "a".equals(d.headers().get("customer"))).count()).isEqualTo(1);
        advance(Duration.ofSeconds(10));
        assertThat(pullAll("t")).hasSize(4);
    }

    @Test
    public void rateLimitedSubscriberStartsWhenItsNextTokenIsDue() {
        ns.flowControl().setLimits("t", TopicLimits.none().withRate(1, Duration.ofSeconds(1)));
        Set<MessageId> started = ConcurrentHashMap.newKeySet();
        Consumer<MessageId> record = started::add;
        try (Subscription ignored = ns.subscribe(Subscriber.on("t").concurrency(4)
                .handle(Map.class, (body, ctx) -> record.accept(ctx.messageId())))) {
            for (int i = 0; i < 3; i++) {
                publish("t", "{\"n\":" + i + "}");
            }
            eventually().until(() -> started.size() == 1);
            advance(Duration.ofMillis(999));
            assertThat(started).hasSize(1);
            advance(Duration.ofMillis(1));
            eventually().until(() -> started.size() == 2);
            advance(Duration.ofSeconds(1));
            eventually().until(() -> started.size() == 3);
        }
    }

    @Test
    public void clearingARateLetsClaimsGoAtOnce() {
        ns.flowControl().setLimits("t", TopicLimits.none().withRate(1, Duration.ofHours(1)));
        publishMany("t", 5, null);
        assertThat(pullAll("t")).hasSize(1);
        assertNothingDue("t");
        ns.flowControl().clearLimits("t");
        assertThat(pullAll("t")).hasSize(4);
        Optional<TopicLimits> none = ns.flowControl().limits("t");
        assertThat(none).isEmpty();
    }
}
