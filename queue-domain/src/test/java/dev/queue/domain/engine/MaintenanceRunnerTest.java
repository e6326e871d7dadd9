package dev.queue.domain.engine;

import dev.queue.api.InvalidInputException;
import dev.queue.api.StoreUnavailableException;
import dev.queue.domain.rules.RetryPause;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The one loop every maintenance service runs in: its pauses, wake-ups, back-off after failures, and a start and
 * stop that may come twice and in any order. Pauses go through an injected sleeper that records them; only the
 * service's interval (an hour here) is really waited for, so no test sleeps.
 */
class MaintenanceRunnerTest {

    private static final Duration INTERVAL = Duration.ofHours(1);
    private static final MaintenanceRunner.Config CONFIG =
            new MaintenanceRunner.Config(Duration.ofMillis(100), Duration.ofMillis(200), Duration.ofSeconds(10));
    private static final double DRAW = 0.5;

    private final List<Duration> pauses = new CopyOnWriteArrayList<>();
    private MaintenanceRunner runner;

    @AfterEach
    void stopRunner() {
        if (runner != null) {
            runner.stop();
        }
    }

    /** Records each pause; returns at once from all but the interval, which it waits out (or until woken). */
    private boolean sleep(Duration pause, WakeSignal signal) {
        pauses.add(pause);
        return signal.await(pause.equals(INTERVAL) ? pause : Duration.ZERO);
    }

    private MaintenanceRunner runner(ScriptedService service) {
        runner = new MaintenanceRunner(service, CONFIG, null, () -> DRAW, this::sleep);
        return runner;
    }

    @Test
    void passesOncePerIntervalAndAWakeStartsTheNextPassAtOnce() {
        ScriptedService service = new ScriptedService();
        runner(service).start();

        await().until(() -> service.passes.get() == 1);
        assertThat(runner.isRunning()).isTrue();
        runner.wake();

        await().until(() -> pauses.size() == 2);
        assertThat(service.passes.get()).isEqualTo(2);
        assertThat(pauses).containsExactly(INTERVAL, INTERVAL);
    }

    @Test
    void passesAgainAfterAShortJitteredPauseWhileBatchesComeBackFull() {
        ScriptedService service = new ScriptedService();
        service.fullBatches.set(2);
        runner(service).start();

        await().until(() -> service.passes.get() == 3);
        Duration batchPause = RetryPause.after(1, CONFIG.batchPause(), CONFIG.batchPause(), () -> DRAW);
        assertThat(batchPause).isEqualTo(Duration.ofMillis(75));
        await().until(() -> pauses.size() == 3);
        assertThat(pauses).containsExactly(batchPause, batchPause, INTERVAL);
    }

    @Test
    void aFailingPassBacksOffWithGrowingPausesAndTheServiceRecovers() {
        ScriptedService service = new ScriptedService();
        service.failures.set(3);
        runner(service).start();

        await().until(() -> service.passes.get() == 4);
        await().until(() -> pauses.size() == 4);
        assertThat(pauses).as("pauses after the 1st, 2nd and 3rd failure in a row, then the interval")
                .containsExactly(Duration.ofMillis(150), Duration.ofMillis(300), Duration.ofMillis(600), INTERVAL);

        service.failures.set(1);
        runner.wake();
        await().until(() -> pauses.size() == 6);
        assertThat(pauses.subList(4, 6)).as("a failure after a success starts the back-off over")
                .containsExactly(Duration.ofMillis(150), INTERVAL);
    }

    @Test
    void startTwiceRunsOneThreadAndStopTwiceEndsIt() {
        ScriptedService service = new ScriptedService();
        runner(service);
        runner.start();
        runner.start();
        await().until(() -> service.passes.get() == 1);
        runner.wake();
        await().until(() -> service.passes.get() == 2);

        runner.stop();
        runner.stop();

        assertThat(runner.isRunning()).isFalse();
        assertThat(service.threads).as("every pass on the runner's one thread").hasSize(1);
        assertThat(service.mostAtOnce.get()).isEqualTo(1);
    }

    @Test
    void stopBeforeStartMeansItNeverRuns() {
        ScriptedService service = new ScriptedService();
        runner(service);

        runner.stop();
        runner.start();

        assertThat(runner.isRunning()).isFalse();
        assertThat(service.passes.get()).isZero();
    }

    @Test
    void configRefusesAMaximumBelowTheFirstFailurePauseNamingBoth() {
        assertThatThrownBy(() -> new MaintenanceRunner.Config(Duration.ofMillis(100), Duration.ofSeconds(5), Duration.ofSeconds(1)))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("maxFailurePause")
                .hasMessageContaining("PT1S")
                .hasMessageContaining("PT5S");
    }

    /** A service whose passes fail, fill their batch or do nothing, as a test sets them up. */
    private static final class ScriptedService implements MaintenanceService<ScriptedService.Pass> {

        record Pass(boolean batchFull) implements MaintenanceService.Report {
        }

        final AtomicInteger passes = new AtomicInteger();
        final AtomicInteger failures = new AtomicInteger();
        final AtomicInteger fullBatches = new AtomicInteger();
        final Set<String> threads = ConcurrentHashMap.newKeySet();
        final AtomicInteger running = new AtomicInteger();
        final AtomicInteger mostAtOnce = new AtomicInteger();

        @Override
        public String name() {
            return "scripted service";
        }

        @Override
        public Duration interval() {
            return INTERVAL;
        }

        @Override
        public Pass runOnce() {
            mostAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max);
            threads.add(Thread.currentThread().getName());
            try {
                passes.incrementAndGet();
                if (failures.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                    throw new StoreUnavailableException("scripted pass", new IllegalStateException("connection refused"));
                }
                return new Pass(fullBatches.getAndUpdate(n -> Math.max(0, n - 1)) > 0);
            } finally {
                running.decrementAndGet();
            }
        }
    }
}
