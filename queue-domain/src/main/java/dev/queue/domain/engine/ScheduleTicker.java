package dev.queue.domain.engine;

import dev.queue.domain.port.Clock;
import dev.queue.domain.port.FiredMessage;
import dev.queue.domain.port.ScheduleQuery;
import dev.queue.domain.rules.RetryPause;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Fires due schedules of every namespace by itself, so applications need no external cron: every tick
 * interval, and early for the next due schedule, a clock jump or a schedule change. Any number of replicas may
 * run one; the store's row locks make each due time fire once.
 */
final class ScheduleTicker {

    private static final Logger log = LoggerFactory.getLogger(ScheduleTicker.class);

    private final ScheduleFiring firing;
    private final Clock clock;
    private final Duration interval;
    private final WakeSignal signal = new WakeSignal();
    private volatile boolean stopped;
    private final Thread thread;
    private AutoCloseable clockRegistration;

    ScheduleTicker(ScheduleFiring firing, Clock clock, Duration interval) {
        this.firing = firing;
        this.clock = clock;
        this.interval = interval;
        this.thread = new Thread(this::run, "queue-schedule-ticker");
        this.thread.setDaemon(true);
    }

    void start() {
        clockRegistration = clock.onAdvance(this::wake);
        thread.start();
    }

    private void run() {
        int failures = 0;
        while (!stopped) {
            Duration wait = interval;
            try {
                for (FiredMessage m : firing.fireDue(null)) {
                    log.debug("schedule {} (namespace {}) fired for {} as message {}; next run {}", m.name(), m.namespace(), m.dueAt(),
                            m.messageId(), m.nextRunAt());
                }
                failures = 0;
                Optional<Instant> next = firing.store().scheduleNextRunAt(ScheduleQuery.allNamespaces());
                if (next.isPresent()) {
                    Duration untilDue = Duration.between(clock.now(), next.get());
                    if (untilDue.compareTo(wait) < 0) {
                        wait = untilDue.isNegative() ? Duration.ZERO : untilDue;
                    }
                }
            } catch (RuntimeException e) {
                failures++;
                wait = RetryPause.after(failures, Duration.ofMillis(200), Duration.ofSeconds(10),
                        ThreadLocalRandom.current()::nextDouble);
                log.warn("schedule ticker could not fire due schedules; retrying in {} ms: {}", wait.toMillis(), e.toString());
            }
            await(wait);
        }
    }

    void wake() {
        signal.wake();
    }

    private void await(Duration wait) {
        if (!signal.await(wait)) {
            stopped = true;
        }
    }

    void stop() {
        stopped = true;
        wake();
        try {
            if (clockRegistration != null) {
                clockRegistration.close();
            }
            thread.join(10_000);
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
