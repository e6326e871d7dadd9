package dev.queue.testkit.contract;

import dev.queue.api.Delivery;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.Outcome;
import dev.queue.api.PublishResult;
import dev.queue.api.Pull;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** Many threads at once: no message held twice, none lost, exactly one winner per lease. */
public abstract class ConcurrencyContract extends ContractSupport {

    private static final Duration DEADLINE = Duration.ofSeconds(60);

    private List<MessageId> publishMany(String topic, int count) {
        List<MessageId> ids = new ArrayList<>(count);
        for (int start = 0; start < count; start += 1000) {
            List<Message> batch = new ArrayList<>();
            for (int i = start; i < Math.min(count, start + 1000); i++) {
                batch.add(Message.to(topic).json("{\"i\":" + i + "}"));
            }
            for (PublishResult result : ns.publishAll(batch)) {
                ids.add(result.id());
            }
        }
        return ids;
    }

    private <T> List<T> runAll(int threads, Callable<T> task) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<T>> futures = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                futures.add(pool.submit(() -> {
                    assertThat(go.await(10, TimeUnit.SECONDS)).isTrue();
                    return task.call();
                }));
            }
            go.countDown();
            List<T> results = new ArrayList<>();
            for (Future<T> future : futures) {
                results.add(future.get(DEADLINE.toSeconds(), TimeUnit.SECONDS));
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    public void eightWorkersPullAndAckTenThousandMessagesWithoutDoubleHoldingOrLoss() throws Exception {
        int total = 10_000;
        List<MessageId> published = publishMany("t", total);
        assertThat(published).hasSize(total).doesNotHaveDuplicates();

        Set<MessageId> held = ConcurrentHashMap.newKeySet();
        Map<MessageId, AtomicInteger> acked = new ConcurrentHashMap<>();
        Queue<String> violations = new ConcurrentLinkedQueue<>();
        AtomicInteger ackedCount = new AtomicInteger();
        AtomicInteger workerNo = new AtomicInteger();
        long deadline = System.nanoTime() + DEADLINE.toNanos();

        runAll(8, () -> {
            String worker = "worker-" + workerNo.incrementAndGet();
            Pull pull = Pull.from("t").worker(worker).limit(10).visibility(Duration.ofMinutes(10));
            while (ackedCount.get() < total && System.nanoTime() < deadline && violations.isEmpty()) {
                List<Delivery> batch = ns.pull(pull);
                if (batch.isEmpty()) {
                    Thread.onSpinWait();
                    continue;
                }
                for (Delivery delivery : batch) {
                    if (!held.add(delivery.id())) {
                        violations.add(delivery.id() + " pulled by " + worker + " while held by another worker");
                    }
                }
                for (Delivery delivery : batch) {
                    held.remove(delivery.id());
                    Outcome outcome = ns.ack(delivery);
                    if (outcome != Outcome.ACKED) {
                        violations.add(delivery.id() + " ack by " + worker + " was " + outcome);
                    }
                    acked.computeIfAbsent(delivery.id(), k -> new AtomicInteger()).incrementAndGet();
                    ackedCount.incrementAndGet();
                }
            }
            return null;
        });

        assertThat(violations).isEmpty();
        assertThat(acked.keySet()).containsExactlyInAnyOrderElementsOf(published);
        assertThat(acked.values()).allSatisfy(count -> assertThat(count).hasValue(1));
        assertThat(ns.stats().pending()).isZero();
        assertThat(ns.stats().running()).isZero();
        assertCompleted(ns.stats(), total);
    }

    @Test
    public void concurrentPullersNeverReceiveTheSameMessage() throws Exception {
        List<MessageId> published = publishMany("t", 500);

        List<List<MessageId>> perThread = runAll(8, () -> {
            List<MessageId> mine = new ArrayList<>();
            List<Delivery> batch;
            while (!(batch = ns.pull(pull("t").limit(7))).isEmpty()) {
                batch.forEach(d -> mine.add(d.id()));
            }
            return mine;
        });

        List<MessageId> all = new ArrayList<>();
        perThread.forEach(all::addAll);
        assertThat(all).doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(published);
        assertThat(ns.stats().running()).isEqualTo(500);
    }

    @Test
    public void racingAckAndFailOnOneDeliveryHaveExactlyOneWinner() throws Exception {
        int rounds = 200;
        publishMany("t", rounds);
        List<Delivery> deliveries = ns.pull(pull("t").limit(rounds));
        assertThat(deliveries).hasSize(rounds);

        for (Delivery delivery : deliveries) {
            AtomicInteger turn = new AtomicInteger();
            List<Outcome> outcomes = runAll(2, () -> turn.getAndIncrement() == 0
                    ? ns.ack(delivery)
                    : ns.fail(delivery, "raced"));

            assertThat(outcomes).filteredOn(o -> o != Outcome.LEASE_LOST).as("winners for %s", delivery.id()).hasSize(1);
            Outcome winner = outcomes.stream().filter(o -> o != Outcome.LEASE_LOST).findFirst().orElseThrow();
            if (winner == Outcome.ACKED) {
                assertGone(delivery.id());
            } else {
                assertThat(winner).isEqualTo(Outcome.DEAD_LETTERED);
                assertThat(ns.deadLetters().get(delivery.id())).isPresent();
            }
        }
        assertThat(ns.stats().running()).isZero();
    }

    @Test
    public void concurrentPublishersGetDistinctIds() throws Exception {
        List<List<MessageId>> perThread = runAll(8, () -> {
            List<MessageId> mine = new ArrayList<>();
            for (int i = 0; i < 250; i++) {
                mine.add(ns.publish(Message.to("t")).id());
            }
            return mine;
        });

        List<MessageId> all = new ArrayList<>();
        perThread.forEach(all::addAll);
        assertThat(all).hasSize(2000).doesNotHaveDuplicates();
        assertThat(ns.stats().pending()).isEqualTo(2000);
    }
}
