package dev.queue.domain.engine;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HandlerPoolTest {

    private final AtomicInteger threadsMade = new AtomicInteger();
    private final ThreadFactory factory = r -> {
        Thread t = new Thread(r, "pool-test-" + threadsMade.incrementAndGet());
        t.setDaemon(true);
        return t;
    };
    private HandlerPool pool;

    @AfterEach
    void stop() {
        if (pool != null) {
            pool.shutdownNow();
        }
    }

    @RepeatedTest(20)
    void runsEveryTaskOnceFromManySubmitters() throws Exception {
        pool = new HandlerPool(8, factory);
        int perSubmitter = 20_000;
        int submitters = 4;
        AtomicInteger[] runs = new AtomicInteger[perSubmitter * submitters];
        for (int i = 0; i < runs.length; i++) {
            runs[i] = new AtomicInteger();
        }
        CountDownLatch done = new CountDownLatch(runs.length);
        Thread[] threads = new Thread[submitters];
        for (int s = 0; s < submitters; s++) {
            int base = s * perSubmitter;
            threads[s] = new Thread(() -> {
                for (int i = 0; i < perSubmitter; i++) {
                    int index = base + i;
                    pool.execute(() -> {
                        runs[index].incrementAndGet();
                        done.countDown();
                    });
                }
            });
            threads[s].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        assertThat(done.await(30, TimeUnit.SECONDS)).as("every task ran; %d left", done.getCount()).isTrue();
        for (AtomicInteger run : runs) {
            assertThat(run.get()).isEqualTo(1);
        }
        assertThat(threadsMade.get()).isLessThanOrEqualTo(8);
    }

    @Test
    void blockingTasksSpreadOverAllThreadsUpToTheMaximum() throws Exception {
        int max = 16;
        pool = new HandlerPool(max, factory);
        CountDownLatch allStarted = new CountDownLatch(max);
        CountDownLatch release = new CountDownLatch(1);
        Set<String> threadNames = ConcurrentHashMap.newKeySet();
        for (int i = 0; i < max; i++) {
            pool.execute(() -> {
                threadNames.add(Thread.currentThread().getName());
                allStarted.countDown();
                await(release);
            });
        }
        assertThat(allStarted.await(10, TimeUnit.SECONDS)).as("all %d blocking tasks run at once", max).isTrue();
        assertThat(threadNames).hasSize(max);
        // Beyond the maximum a task waits for a free thread rather than starting another.
        CountDownLatch extra = new CountDownLatch(1);
        pool.execute(extra::countDown);
        assertThat(extra.getCount()).isEqualTo(1);
        release.countDown();
        assertThat(extra.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(threadsMade.get()).isEqualTo(max);
    }

    @Test
    void aFailingTaskDoesNotEndItsThread() throws Exception {
        AtomicInteger reported = new AtomicInteger();
        HandlerPool quiet = new HandlerPool(1, r -> {
            Thread t = factory.newThread(r);
            t.setUncaughtExceptionHandler((thread, e) -> reported.incrementAndGet());
            return t;
        });
        try {
            quiet.execute(() -> {
                throw new IllegalStateException("handler bug");
            });
            CountDownLatch after = new CountDownLatch(1);
            quiet.execute(after::countDown);
            assertThat(after.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(reported.get()).isEqualTo(1);
            assertThat(threadsMade.get()).isEqualTo(1);
        } finally {
            quiet.shutdownNow();
        }
    }

    @Test
    void shutdownRunsQueuedTasksThenTerminatesAndRejectsNewOnes() throws Exception {
        pool = new HandlerPool(2, factory);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger ran = new AtomicInteger();
        for (int i = 0; i < 10; i++) {
            pool.execute(() -> {
                await(release);
                ran.incrementAndGet();
            });
        }
        pool.shutdown();
        assertThat(pool.isShutdown()).isTrue();
        assertThatThrownBy(() -> pool.execute(() -> { })).isInstanceOf(RejectedExecutionException.class);
        assertThat(pool.awaitTermination(50, TimeUnit.MILLISECONDS)).isFalse();
        release.countDown();
        assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        assertThat(pool.isTerminated()).isTrue();
        assertThat(ran.get()).isEqualTo(10);
    }

    @Test
    void shutdownNowInterruptsRunningHandlersAndReturnsTheUnstarted() throws Exception {
        pool = new HandlerPool(1, factory);
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch interrupted = new CountDownLatch(1);
        pool.execute(() -> {
            started.countDown();
            try {
                new CountDownLatch(1).await();
            } catch (InterruptedException e) {
                interrupted.countDown();
            }
        });
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        Runnable never = () -> { };
        pool.execute(never);
        List<Runnable> unstarted = pool.shutdownNow();
        assertThat(unstarted).containsExactly(never);
        assertThat(interrupted.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void anInterruptOfOneHandlerDoesNotReachTheNext() throws Exception {
        pool = new HandlerPool(1, factory);
        pool.execute(() -> Thread.currentThread().interrupt());
        CountDownLatch checked = new CountDownLatch(1);
        AtomicInteger sawInterrupt = new AtomicInteger(-1);
        pool.execute(() -> {
            sawInterrupt.set(Thread.currentThread().isInterrupted() ? 1 : 0);
            checked.countDown();
        });
        assertThat(checked.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(sawInterrupt.get()).isZero();
    }

    @Test
    void rejectsANonPositiveSize() {
        assertThatThrownBy(() -> new HandlerPool(0, factory)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("0");
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
