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
import org.junit.jupiter.api.Tag;
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
                TopicLimits.none().partitionedBy(customer).withRatePerPartition(1, Duration.ofMillis(0)),
                TopicLimits.none().withMaxRunning(2).partitionedBy(TopicLimits.Partition.orderingKey()),
                TopicLimits.none().partitionedBy(new TopicLimits.Partition(TopicLimits.Partition.Kind.ORDERING_KEY, "k"))
                        .withMaxRunningPerPartition(1),
                TopicLimits.none().partitionedBy(new TopicLimits.Partition(TopicLimits.Partition.Kind.HEADER, null))
                        .withMaxRunningPerPartition(1),
                TopicLimits.none().partitionedBy(new TopicLimits.Partition(null, "customer"))
                        .withMaxRunningPerPartition(1));
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
    @Tag("slow") // a race of four queues over thousands of messages
    public void limitsAreNeverExceededByFourQueuesOverOneStore() throws Exception {
        requires(Capability.SHARED_STORE_ACROSS_INSTANCES);
        int limit = 5;
        ns.flowControl().setLimits("t", TopicLimits.none().withMaxRunning(limit));
        publishMany("t", RACE_MESSAGES, null);
        Race race = new Race(RACE_MESSAGES, d -> "");
        race.run(limit, Integer.MAX_VALUE);
    }

    @Test
    @Tag("slow") // a race of four queues over thousands of messages
    public void partitionLimitsAreNeverExceededByFourQueuesOverOneStore() throws Exception {
        requires(Capability.SHARED_STORE_ACROSS_INSTANCES);
        int perPartition = 2;
        ns.flowControl().setLimits("t", TopicLimits.none()
                .partitionedBy(TopicLimits.Partition.header("customer")).withMaxRunningPerPartition(perPartition));
        publishMany("t", RACE_MESSAGES, i -> "c" + (i % 8));
        Race race = new Race(RACE_MESSAGES, d -> d.headers().get("customer"));
        race.run(Integer.MAX_VALUE, perPartition);
    }

    @Test
    public void rateIsNeverExceededByFourQueuesOverOneStore() {
        requires(Capability.SHARED_STORE_ACROSS_INSTANCES);
        int burst = 40;
        int perSecond = 10;
        ns.flowControl().setLimits("t", TopicLimits.none().withRate(burst, Duration.ofSeconds(burst / perSecond)));
        int messages = 200;
        publishMany("t", messages, null);
        Set<MessageId> started = ConcurrentHashMap.newKeySet();
        AtomicInteger starts = new AtomicInteger();
        List<Queue> others = new ArrayList<>();
        List<Subscription> subscriptions = new ArrayList<>();
        try {
            List<Namespace> stacks = new ArrayList<>(List.of(ns));
            for (int i = 0; i < 3; i++) {
                Queue other = queueFactory().createSharing(queue, clock, options());
                others.add(other);
                stacks.add(other.namespace(NAMESPACE));
            }
            for (Namespace stack : stacks) {
                subscriptions.add(stack.subscribe(Subscriber.on("t").concurrency(8).handle(Map.class, (body, ctx) -> {
                    started.add(ctx.messageId());
                    starts.incrementAndGet();
                })));
            }
            // the clock stands still between steps: the full bucket, then a second's refill per step, and not one
            // start more, whichever of the four claims first
            eventually().until(() -> starts.get() >= burst);
            for (int second = 1; burst + perSecond * (second - 1) < messages; second++) {
                assertThat(starts.get()).as("starts before second %d (%d messages)", second, started.size())
                        .isEqualTo(burst + perSecond * (second - 1));
                advance(Duration.ofSeconds(1));
                int expected = burst + perSecond * second;
                eventually().until(() -> starts.get() >= expected);
            }
        } finally {
            subscriptions.forEach(Subscription::close);
            others.forEach(Queue::close);
        }
        assertThat(starts.get()).isEqualTo(messages);
        assertThat(started).hasSize(messages);
    }

    /**
     * Four queues over the store (this test's and three more) subscribe to topic t with 8 handlers each; every handler
     * counts, at its start and end, the messages running in the topic and in its partition, from the handlers' side.
     */
    private final class Race {
        private final int messages;
        private final long workNanos;
        private final java.util.function.Function<Delivery, String> partitionOf;
        private final AtomicInteger running = new AtomicInteger();
        private final AtomicInteger maxRunning = new AtomicInteger();
        private final Map<String, AtomicInteger> runningByPartition = new ConcurrentHashMap<>();
        private final AtomicInteger maxByPartition = new AtomicInteger();
        private final Set<MessageId> handled = ConcurrentHashMap.newKeySet();
        private final AtomicInteger handledTimes = new AtomicInteger();

        Race(int messages, java.util.function.Function<Delivery, String> partitionOf) {
            this(messages, Duration.ofNanos(200_000), partitionOf);
        }

        /** With {@code work} spent in each handler, so that handlers overlap. */
        Race(int messages, Duration work, java.util.function.Function<Delivery, String> partitionOf) {
            this.messages = messages;
            this.workNanos = work.toNanos();
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
                            .handle(Map.class, (body, ctx) -> handle(ctx.delivery()))));
                }
                Awaitility().until(() -> handledTimes.get() >= messages);
            } finally {
                subscriptions.forEach(Subscription::close);
                others.forEach(Queue::close);
            }
            assertThat(handled).hasSize(messages);
            assertThat(handledTimes.get()).isEqualTo(messages);
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

        private void handle(Delivery delivery) {
            MessageId id = delivery.id();
            AtomicInteger inPartition = runningByPartition.computeIfAbsent(partitionOf.apply(delivery),
                    p -> new AtomicInteger());
            maxRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
            maxByPartition.accumulateAndGet(inPartition.incrementAndGet(), Math::max);
            try {
                // a moment of work, so that handlers overlap
                long until = System.nanoTime() + workNanos;
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

    // ------------------------------------------------------------------ partitioned by the ordering key

    private MessageId keyed(String topic, String key, int n) {
        Message message = Message.to(topic).json("{\"n\":" + n + "}");
        return publish(key == null ? message : message.orderingKey(key));
    }

    @Test
    public void orderingKeyPartitionIsSetReadBackAndReplaced() {
        requires(Capability.ORDERING_KEYS);
        FlowControl flow = ns.flowControl();
        TopicLimits byKey = TopicLimits.none().partitionedBy(TopicLimits.Partition.orderingKey())
                .withMaxRunningPerPartition(2).withRatePerPartition(10, Duration.ofSeconds(1));
        assertThat(TopicLimits.Partition.orderingKey()).isEqualTo(TopicLimits.Partition.orderingKey())
                .hasSameHashCodeAs(TopicLimits.Partition.orderingKey())
                .isNotEqualTo(TopicLimits.Partition.header("ordering_key"));
        assertThat(TopicLimits.Partition.orderingKey().name()).isNull();
        assertThat(byKey.toString()).contains("partition=ordering_key,").doesNotContain("null");
        assertThat(TopicLimits.none().partitionedBy(TopicLimits.Partition.header("customer"))
                .withMaxRunningPerPartition(2).toString()).contains("partition=header:customer");

        assertThat(flow.setLimits("t", byKey)).isTrue();
        assertThat(flow.setLimits("t", byKey)).isFalse();
        assertThat(flow.limits("t")).contains(byKey);
        assertThat(flow.limits("t").orElseThrow().partition()).contains(TopicLimits.Partition.orderingKey());

        // the same limits by a header are other limits, and back again
        TopicLimits byHeader = TopicLimits.none().partitionedBy(TopicLimits.Partition.header("customer"))
                .withMaxRunningPerPartition(2).withRatePerPartition(10, Duration.ofSeconds(1));
        assertThat(byHeader).isNotEqualTo(byKey);
        assertThat(flow.setLimits("t", byHeader)).isTrue();
        assertThat(flow.limits("t")).contains(byHeader);
        assertThat(flow.setLimits("t", byKey)).isTrue();
        assertThat(flow.allLimits()).isEqualTo(Map.of("t", byKey));
    }

    @Test
    public void perKeyRunningLimitBoundsTheMessagesWithoutAKeyTogether() {
        requires(Capability.ORDERING_KEYS);
        ns.flowControl().setLimits("t", TopicLimits.none()
                .partitionedBy(TopicLimits.Partition.orderingKey()).withMaxRunningPerPartition(2));
        MessageId a1 = keyed("t", "a", 1);
        MessageId a2 = keyed("t", "a", 2);
        MessageId b1 = keyed("t", "b", 3);
        MessageId none1 = keyed("t", null, 4);
        MessageId none2 = keyed("t", null, 5);
        MessageId none3 = keyed("t", null, 6);

        // a key runs one at a time anyway; the messages without a key are one partition of at most two
        List<Delivery> first = pullAll("t");
        assertThat(first).extracting(Delivery::id).containsExactly(a1, b1, none1, none2);
        assertNothingDue("t");

        ns.ack(first.get(2));
        assertThat(pullAll("t")).extracting(Delivery::id).containsExactly(none3);
        ns.ack(first.get(0));
        assertThat(pullAll("t")).extracting(Delivery::id).containsExactly(a2);
    }

    @Test
    public void perKeyLimitsCountTheMessagesRunningWhenSet() {
        requires(Capability.ORDERING_KEYS);
        keyed("t", null, 0);
        keyed("t", "a", 1);
        keyed("t", null, 2);
        keyed("t", null, 3);
        List<Delivery> running = ns.pull(pull("t").limit(3));
        assertThat(running).hasSize(3);

        // two of the running ones have no key: their partition is full once the limits are set
        ns.flowControl().setLimits("t", TopicLimits.none()
                .partitionedBy(TopicLimits.Partition.orderingKey()).withMaxRunningPerPartition(2));
        assertNothingDue("t");
        ns.ack(running.stream().filter(d -> d.orderingKey().isEmpty()).findFirst().orElseThrow());
        assertThat(pullAll("t")).hasSize(1);
        assertNothingDue("t");
    }

    @Test
    public void ratePerOrderingKeyRationsEachKeyOverTenSimulatedSeconds() {
        requires(Capability.ORDERING_KEYS);
        int perSecond = 2;
        int keys = 5;
        int perKey = 30;
        ns.flowControl().setLimits("t", TopicLimits.none()
                .partitionedBy(TopicLimits.Partition.orderingKey()).withRatePerPartition(perSecond, Duration.ofSeconds(1)));
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < perKey; i++) {
            for (int k = 0; k < keys; k++) {
                batch.add(Message.to("t").orderingKey("customer-" + k).json("{\"i\":" + i + "}"));
            }
            batch.add(Message.to("t").json("{\"i\":" + i + "}"));
        }
        ns.publishAll(batch);

        // every tenth of a second, start and acknowledge whatever may start (an acknowledgement lets the key's next
        // message go on), counting the starts of each partition per step, in order
        Map<String, List<Integer>> startsPerStep = new ConcurrentHashMap<>();
        Map<String, List<Integer>> orderSeen = new ConcurrentHashMap<>();
        for (int step = 0; step <= 100; step++) {
            Map<String, Integer> starts = new java.util.HashMap<>();
            List<Delivery> pulled;
            while (!(pulled = pullAll("t")).isEmpty()) {
                for (Delivery delivery : pulled) {
                    String partition = delivery.orderingKey().orElse("");
                    starts.merge(partition, 1, Integer::sum);
                    orderSeen.computeIfAbsent(partition, p -> new ArrayList<>())
                            .add(((Number) delivery.payload(Map.class).get("i")).intValue());
                    assertThat(ns.ack(delivery)).isEqualTo(Outcome.ACKED);
                }
            }
            for (String partition : orderSeen.keySet()) {
                startsPerStep.computeIfAbsent(partition, p -> new ArrayList<>()).add(starts.getOrDefault(partition, 0));
            }
            if (step < 100) {
                advance(Duration.ofMillis(100));
            }
        }

        assertThat(startsPerStep).hasSize(keys + 1).containsKey("");
        for (Map.Entry<String, List<Integer>> partition : startsPerStep.entrySet()) {
            List<Integer> steps = partition.getValue();
            // a full bucket at first (a burst of two), then one start per half second: over ten seconds, 2 + 20
            assertThat(steps.get(0)).as("burst of %s", partition.getKey()).isEqualTo(perSecond);
            assertThat(steps.stream().mapToInt(Integer::intValue).sum()).as("starts of %s", partition.getKey())
                    .isEqualTo(perSecond + 10 * perSecond);
            for (int i = 0; i + 10 < steps.size(); i++) {
                int window = steps.subList(i, i + 11).stream().mapToInt(Integer::intValue).sum();
                assertThat(window).as("starts of %s from step %d to %d", partition.getKey(), i, i + 10)
                        .isLessThanOrEqualTo(2 * perSecond);
            }
        }
        // each key still in its order
        for (int k = 0; k < keys; k++) {
            List<Integer> seen = orderSeen.get("customer-" + k);
            assertThat(seen).as("customer-%d", k).isSorted().doesNotHaveDuplicates();
        }
    }

    @Test
    @Tag("slow") // a race of four queues over thousands of messages
    public void perKeyRunningLimitIsNeverExceededByFourQueuesOverOneStore() throws Exception {
        requires(Capability.SHARED_STORE_ACROSS_INSTANCES);
        requires(Capability.ORDERING_KEYS);
        int messages = RACE_MESSAGES / 10;
        int perPartition = 2;
        ns.flowControl().setLimits("t", TopicLimits.none()
                .partitionedBy(TopicLimits.Partition.orderingKey()).withMaxRunningPerPartition(perPartition));
        // half without a key (one partition), half over 200 keys
        for (int start = 0; start < messages; start += 1000) {
            List<Message> batch = new ArrayList<>();
            for (int i = start; i < Math.min(messages, start + 1000); i++) {
                Message message = Message.to("t").json("{\"i\":" + i + "}");
                batch.add(i % 2 == 0 ? message : message.orderingKey("k" + (i / 2 % 200)));
            }
            ns.publishAll(batch);
        }
        // most partitions are keys, which run one message at a time: longer handlers, so that partitions overlap
        Race race = new Race(messages, Duration.ofMillis(1), d -> d.orderingKey().orElse(""));
        race.run(Integer.MAX_VALUE, perPartition);
    }
}
