package dev.queue.domain.engine;

import dev.queue.api.Delivery;
import dev.queue.api.MessageId;
import dev.queue.api.StoreUnavailableException;
import dev.queue.domain.port.AckCommand;
import dev.queue.domain.port.LeaseRef;
import dev.queue.domain.port.MessageStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import static dev.queue.domain.port.CommandTime.storeClock;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The acknowledgement batcher against a store whose completion is scripted per call: what it does when calls
 * fail, when they block, and when it is closed while they fail. The PostgreSQL adapter's
 * {@code SlowAcknowledgementTest} shows the same behaviour against a real server.
 */
class AckBatcherTest {

    private static final Duration PROMPTLY = Duration.ofSeconds(10);

    /** Every completion call, as the ids it named. */
    private final List<Set<Long>> calls = new java.util.concurrent.CopyOnWriteArrayList<>();
    private volatile Function<AckCommand, Set<Long>> completion = command -> ids(command);
    private final AtomicInteger afterFlushRuns = new AtomicInteger();
    private AckBatcher batcher;

    @AfterEach
    void closeBatcher() {
        if (batcher != null) {
            completion = AckBatcherTest::ids;
            batcher.close();
        }
    }

    @Test
    void aFailedCallIsRetriedUntilItSucceeds() {
        AtomicInteger failuresLeft = new AtomicInteger(2);
        completion = command -> {
            if (failuresLeft.getAndDecrement() > 0) {
                throw new StoreUnavailableException("complete", new IllegalStateException("connection cut"));
            }
            return ids(command);
        };
        batcher = batcher(1_000, Duration.ofMinutes(1));

        batcher.submit(delivery(1), false, null);
        batcher.submit(delivery(2), false, null);
        batcher.submit(delivery(3), false, null);

        await().atMost(PROMPTLY).until(() -> batcher.unrecorded() == 0);
        assertThat(calls).hasSizeGreaterThanOrEqualTo(3);
        assertThat(calls.get(calls.size() - 1)).containsExactlyInAnyOrder(1L, 2L, 3L);
        Set<Long> everyId = new HashSet<>();
        calls.forEach(everyId::addAll);
        assertThat(everyId).containsExactlyInAnyOrder(1L, 2L, 3L);
        assertThat(afterFlushRuns.get()).isPositive();
    }

    @Test
    void acknowledgementsAreGivenUpOnceTheyHaveWaitedLongerThanTheRetryWindow() {
        completion = AckBatcherTest::databaseDown;
        batcher = batcher(1_000, Duration.ofMillis(200));

        batcher.submit(delivery(7), false, null);
        batcher.submit(delivery(8), false, null);

        // Given up, not stuck: the count drops and a paused subscriber is told.
        await().atMost(PROMPTLY).until(() -> batcher.unrecorded() == 0);
        assertThat(calls).hasSizeGreaterThanOrEqualTo(2);
        assertThat(afterFlushRuns.get()).isPositive();
    }

    @Test
    void saysItIsBehindWhileTheBoundWaitsUnrecordedAndNotOnceTheyAreRecorded() throws Exception {
        CountDownLatch databaseSlow = new CountDownLatch(1);
        completion = command -> {
            try {
                assertThat(databaseSlow.await(30, TimeUnit.SECONDS)).isTrue();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return ids(command);
        };
        batcher = batcher(3, Duration.ofMinutes(1));

        batcher.submit(delivery(1), false, null);
        batcher.submit(delivery(2), false, null);
        assertThat(batcher.behind()).isFalse();
        batcher.submit(delivery(3), false, null);
        assertThat(batcher.behind()).isTrue();

        databaseSlow.countDown();
        await().atMost(PROMPTLY).until(() -> !batcher.behind() && batcher.unrecorded() == 0);
        assertThat(afterFlushRuns.get()).isPositive();
    }

    @Test
    void closingTriesAFailingCallOnceInsteadOfRetryingForALease() {
        completion = AckBatcherTest::databaseDown;
        batcher = batcher(1_000, Duration.ofHours(1));
        batcher.submit(delivery(1), false, null);
        await().atMost(PROMPTLY).until(() -> !calls.isEmpty());

        AckBatcher closing = batcher;
        batcher = null;
        closing.close();

        // close() returned: the flusher gave the acknowledgement up instead of retrying it for an hour.
        assertThat(closing.unrecorded()).isZero();
    }

    @Test
    void anAcknowledgementOthersWaitForGoesWithoutTheDelayTakingTheWaitingAlong() {
        batcher = batcher(1_000, Duration.ofMinutes(1), Duration.ofHours(1));

        batcher.submit(delivery(1), false, null);
        batcher.submit(delivery(2), false, null, true);

        await().atMost(PROMPTLY).until(() -> batcher.unrecorded() == 0);
        assertThat(calls).containsExactly(Set.of(1L, 2L));

        // And again for the next: the flag is set per batch.
        batcher.submit(delivery(3), false, null);
        batcher.submit(delivery(4), false, null, true);
        await().atMost(PROMPTLY).until(() -> batcher.unrecorded() == 0);
        assertThat(calls).containsExactly(Set.of(1L, 2L), Set.of(3L, 4L));
    }

    private AckBatcher batcher(int maxUnrecorded, Duration retryFor) {
        return batcher(maxUnrecorded, retryFor, Duration.ofMillis(5));
    }

    private AckBatcher batcher(int maxUnrecorded, Duration retryFor, Duration maxDelay) {
        MessageStore store = store();
        return new AckBatcher("acks", leases -> store.messageAckIfLeased(new AckCommand("acks", leases, storeClock())), 500,
                maxDelay, maxUnrecorded, retryFor, afterFlushRuns::incrementAndGet, "ack-batcher-test");
    }

    /** A store that only completes, as {@link #completion} says, and records every call. */
    private MessageStore store() {
        return (MessageStore) Proxy.newProxyInstance(MessageStore.class.getClassLoader(), new Class<?>[]{MessageStore.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("messageAckIfLeased")) {
                        AckCommand command = (AckCommand) args[0];
                        calls.add(ids(command));
                        return completion.apply(command);
                    }
                    if (method.getDeclaringClass() == Object.class) {
                        return method.getName().equals("toString") ? "scripted store" : method.invoke(this, args);
                    }
                    throw new UnsupportedOperationException(method.getName() + " is not part of this test");
                });
    }

    @SuppressWarnings("unchecked")
    private static <T> T unused(Class<T> type) {
        return (T) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[]{type}, (proxy, method, args) -> {
            if (method.getDeclaringClass() == Object.class) {
                return method.getName().equals("toString") ? "unused " + type.getSimpleName() : null;
            }
            throw new UnsupportedOperationException(type.getSimpleName() + "." + method.getName() + " is not part of this test");
        });
    }

    private static Set<Long> databaseDown(AckCommand command) {
        throw new StoreUnavailableException("complete", new IllegalStateException("database down"));
    }

    private static Set<Long> ids(AckCommand command) {
        Set<Long> ids = ConcurrentHashMap.newKeySet();
        for (LeaseRef lease : command.leases()) {
            ids.add(lease.id());
        }
        return ids;
    }

    private static Delivery delivery(long id) {
        Instant now = Instant.now();
        return new Delivery(MessageId.of(id), "acks", "t", "{}", Map.of(), 0, 1, 5, 1000 + id, "worker", now.plusSeconds(30), now,
                null);
    }
}
