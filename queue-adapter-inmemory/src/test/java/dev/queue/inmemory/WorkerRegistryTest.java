package dev.queue.inmemory;

import dev.queue.api.ManualClock;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import dev.queue.domain.port.WorkerBeat;
import dev.queue.domain.time.ManualTime;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The in-memory queue registers itself as a live worker while it subscribes, and removes itself when closed. */
class WorkerRegistryTest {

    @Test
    void aSubscribingQueueHeartbeatsItsTopicsConcurrencyAndInFlightAndClosingRemovesIt() throws Exception {
        ManualClock clock = ManualClock.startingNow();
        CountDownLatch release = new CountDownLatch(1);
        InMemoryQueue queue = InMemoryQueue.threaded(clock, QueueOptions.defaults());
        try {
            assertThat(queue.workers().workers()).isEmpty();
            Subscription subscription = queue.namespace("acme").subscribe(Subscriber.on("email", "sms").concurrency(3).worker("mailer-1")
                    .handleDelivery((delivery, ctx) -> release.await(10, TimeUnit.SECONDS)));
            queue.namespace("acme").publish("email", "{}");

            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                List<InMemoryWorkerRegistry.Entry> workers = queue.workers().workers();
                assertThat(workers).hasSize(1);
                assertThat(workers.get(0).alive()).isTrue();
                WorkerBeat beat = workers.get(0).beat();
                assertThat(beat.pid()).isEqualTo(ProcessHandle.current().pid());
                assertThat(beat.subscriptions()).singleElement().satisfies(s -> {
                    assertThat(s.namespace()).isEqualTo("acme");
                    assertThat(s.topics()).containsExactly("email", "sms");
                    assertThat(s.worker()).isEqualTo("mailer-1");
                    assertThat(s.concurrency()).isEqualTo(3);
                });
            });
            assertThat(subscription.isRunning()).isTrue();
        } finally {
            release.countDown();
            queue.close();
        }
        assertThat(queue.workers().workers()).isEmpty();
    }

    @Test
    void aProcessWhoseBeatsStopIsGoneAfterThreeIntervalsAndRemovedAfterTheBound() {
        ManualClock clock = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
        InMemoryWorkerRegistry registry = new InMemoryWorkerRegistry(new ManualTime(clock));
        registry.heartbeat(beat("crashed"));

        clock.advance(Duration.ofSeconds(15));
        assertThat(registry.workers()).singleElement().satisfies(e -> assertThat(e.alive()).isTrue());
        clock.advance(Duration.ofMillis(1));
        assertThat(registry.workers()).singleElement().satisfies(e -> assertThat(e.alive()).isFalse());

        clock.advance(InMemoryWorkerRegistry.REMOVE_AFTER.minusMillis(1));
        registry.heartbeat(beat("other"));
        assertThat(registry.workers()).extracting(e -> e.beat().processId()).containsExactly("other", "crashed");
        clock.advance(Duration.ofMillis(1));
        registry.heartbeat(beat("other"));
        assertThat(registry.workers()).extracting(e -> e.beat().processId()).containsExactly("other");
    }

    private static WorkerBeat beat(String id) {
        return new WorkerBeat(id, "host", 1, Instant.EPOCH, null, Duration.ofSeconds(5),
                List.of(new WorkerBeat.SubscriptionBeat("acme", List.of("email"), id, 1, 0)));
    }
}
