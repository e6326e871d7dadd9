package dev.queue.domain.engine;

import dev.queue.api.InvalidInputException;
import dev.queue.domain.port.Clock;
import dev.queue.domain.rules.RetryPause;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;

/**
 * Runs one {@link MaintenanceService} on a thread of its own: a pass, then a pause, until stopped. The pause is the
 * service's interval (shortened to the next due time the pass reported), a short jittered one after a pass that
 * filled its batch, or, after a failure, one that grows with each failure in a row ({@link RetryPause}) with a
 * warning naming the service. {@link #wake()}, and with a clock each jump of a manual clock, ends a pause early.
 *
 * <p>{@link #start()} and {@link #stop()} may each be called any number of times, in any order: the first start
 * starts the thread, the first stop ends it for good (a start after it does nothing), the others do nothing.
 */
public final class MaintenanceRunner implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(MaintenanceRunner.class);

    /**
     * How a runner paces the passes of its service.
     *
     * @param batchPause        after a pass that filled its batch, the next starts within this (between half of it
     *                          and all of it, at random), so one service's backlog does not hold a connection back to back
     * @param firstFailurePause the pause after a failed pass, doubling with each failure in a row
     * @param maxFailurePause   the longest pause after failures
     */
    public record Config(Duration batchPause, Duration firstFailurePause, Duration maxFailurePause) {

        public static final Duration DEFAULT_BATCH_PAUSE = Duration.ofMillis(100);
        public static final Duration DEFAULT_FIRST_FAILURE_PAUSE = Duration.ofMillis(200);
        public static final Duration DEFAULT_MAX_FAILURE_PAUSE = Duration.ofSeconds(10);
        public static final Config DEFAULTS = new Config(DEFAULT_BATCH_PAUSE, DEFAULT_FIRST_FAILURE_PAUSE, DEFAULT_MAX_FAILURE_PAUSE);

        public Config {
            within("batchPause", batchPause, Duration.ZERO, Duration.ofMinutes(1), "0 to 1 min");
            within("firstFailurePause", firstFailurePause, Duration.ofMillis(1), Duration.ofHours(1), "1 ms to 1 h");
            within("maxFailurePause", maxFailurePause, firstFailurePause, Duration.ofHours(1),
                    "firstFailurePause (" + firstFailurePause + ") to 1 h");
        }
    }

    /** Waits out a pause; false when the thread was interrupted. Tests put their own in place of the real wait. */
    interface Sleeper {
        boolean sleep(Duration pause, WakeSignal signal);
    }

    private enum State { NEW, RUNNING, STOPPED }

    private final MaintenanceService<?> service;
    private final Config config;
    private final Clock clock;
    private final DoubleSupplier random;
    private final Sleeper sleeper;
    private final WakeSignal signal = new WakeSignal();
    private final Thread thread;
    private State state = State.NEW;
    private volatile boolean stopped;
    private AutoCloseable clockRegistration;

    /**
     * @param clock the queue's clock: a manual clock's jumps wake the runner, and it measures the time to a reported
     *              due time; null for a service that does not act on the queue's time
     */
    public MaintenanceRunner(MaintenanceService<?> service, Config config, Clock clock) {
        this(service, config, clock, () -> ThreadLocalRandom.current().nextDouble(), (pause, signal) -> signal.await(pause));
    }

    MaintenanceRunner(MaintenanceService<?> service, Config config, Clock clock, DoubleSupplier random, Sleeper sleeper) {
        this.service = Objects.requireNonNull(service, "service");
        this.config = Objects.requireNonNull(config, "config");
        this.clock = clock;
        this.random = random;
        this.sleeper = sleeper;
        this.thread = new Thread(this::run, "queue " + service.name());
        this.thread.setDaemon(true);
    }

    /** Starts the thread, unless it was started or stopped before. */
    public synchronized void start() {
        if (state != State.NEW) {
            return;
        }
        state = State.RUNNING;
        if (clock != null) {
            clockRegistration = clock.onAdvance(this::wake);
        }
        thread.start();
    }

    /** Ends the pause under way, so the next pass starts now. */
    public void wake() {
        signal.wake();
    }

    /** Whether the thread is running: started, not yet stopped (a pass under way finishes first). */
    public boolean isRunning() {
        return thread.isAlive();
    }

    /**
     * Stops the thread for good and waits for a pass under way to finish: a pass cut off would leave its connection
     * broken, and the pool would log that as a failure. A pass still running after 10 s is interrupted.
     */
    public synchronized void stop() {
        State was = state;
        state = State.STOPPED;
        stopped = true;
        if (was != State.RUNNING) {
            return;
        }
        wake();
        try {
            if (clockRegistration != null) {
                clockRegistration.close();
            }
        } catch (Exception e) {
            log.debug("{}: closing its clock registration failed: {}", service.name(), e.toString());
        }
        if (Thread.currentThread() == thread) {
            return;
        }
        try {
            thread.join(10_000);
            if (thread.isAlive()) {
                thread.interrupt();
                thread.join(5_000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        stop();
    }

    private void run() {
        int failures = 0;
        while (!stopped) {
            Duration pause;
            try {
                MaintenanceService.Report report = service.runOnce();
                if (failures > 0) {
                    log.info("{} ran again after {} failed passes", service.name(), failures);
                }
                failures = 0;
                pause = pauseAfter(report);
            } catch (RuntimeException e) {
                failures++;
                pause = RetryPause.after(failures, config.firstFailurePause(), config.maxFailurePause(), random);
                log.warn("{} failed ({} in a row); trying again in {} ms: {}", service.name(), failures, pause.toMillis(),
                        e.toString());
            } catch (Error e) {
                log.error("{} stopped by an error", service.name(), e);
                throw e;
            }
            if (!stopped && !sleeper.sleep(pause, signal)) {
                stopped = true;
            }
        }
    }

    private Duration pauseAfter(MaintenanceService.Report report) {
        if (report.batchFull()) {
            return RetryPause.after(1, config.batchPause(), config.batchPause(), random);
        }
        Duration pause = service.interval();
        if (report.nextDueAt().isPresent()) {
            Instant now = clock != null ? clock.now() : Instant.now();
            Duration untilDue = Duration.between(now, report.nextDueAt().get());
            if (untilDue.compareTo(pause) < 0) {
                pause = untilDue.isNegative() ? Duration.ZERO : untilDue;
            }
        }
        return pause;
    }

    /** Fails with {@link InvalidInputException} naming the property unless {@code value} lies in [min, max]. */
    static Duration within(String property, Duration value, Duration min, Duration max, String expectation) {
        if (value == null || value.compareTo(min) < 0 || value.compareTo(max) > 0) {
            throw new InvalidInputException(property, value, expectation);
        }
        return value;
    }
}
