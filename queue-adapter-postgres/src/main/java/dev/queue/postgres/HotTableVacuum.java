package dev.queue.postgres;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Vacuums the hot table when dead row versions pile up faster than autovacuum visits it. Every claim walks the
 * claim index from its front, where the entries of just-claimed rows lie; until vacuum removes them, each claim
 * steps over them again, and a busy queue makes tens of thousands a minute while autovacuum wakes once a minute
 * (autovacuum_naptime). A replica checks the statistics every interval and vacuums past a threshold, unless a
 * vacuum is already at work on the table: one replica's vacuum serves all.
 */
final class HotTableVacuum implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(HotTableVacuum.class);

    private final Sessions sessions;
    private final long threshold;
    private final ScheduledExecutorService timer;

    HotTableVacuum(Sessions sessions, Duration interval, long threshold, String schema) {
        this.sessions = sessions;
        this.threshold = threshold;
        this.timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "queue-vacuum-" + schema);
            thread.setDaemon(true);
            return thread;
        });
        long millis = interval.toMillis();
        timer.scheduleWithFixedDelay(this::runOnce, millis, millis, TimeUnit.MILLISECONDS);
    }

    /** Vacuums if the dead row versions passed the threshold; returns whether it did. */
    boolean runOnce() {
        try {
            Long dead = sessions.autoCommit("dead tuple count", s -> s.selectOne("queue.deadTuples"));
            if (dead == null || dead < threshold) {
                return false;
            }
            if (Boolean.TRUE.equals(sessions.autoCommit("vacuum in progress", s -> s.selectOne("queue.vacuumInProgress")))) {
                log.debug("hot table vacuum left to the one in progress ({} dead row versions)", dead);
                return false;
            }
            long start = System.nanoTime();
            sessions.autoCommit("vacuum", s -> s.update("queue.vacuumMessages"));
            log.debug("vacuumed the hot table ({} dead row versions) in {} ms", dead, (System.nanoTime() - start) / 1_000_000);
            return true;
        } catch (RuntimeException e) {
            log.debug("hot table vacuum skipped: {}", e.toString());
            return false;
        }
    }

    /**
     * Lets a vacuum in progress finish (it takes well under a second) before the pool closes under it: cut off,
     * its connection would break and the pool would log it as a failure.
     */
    @Override
    public void close() {
        timer.shutdown();
        try {
            if (!timer.awaitTermination(5, TimeUnit.SECONDS)) {
                timer.shutdownNow();
            }
        } catch (InterruptedException e) {
            timer.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
