package dev.queue.postgres;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * Vacuums the hot table when dead row versions pile up faster than autovacuum visits it. Every claim walks the
 * claim index from its front, where the entries of just-claimed rows lie; until vacuum removes them, each claim
 * steps over them again, and a busy queue makes tens of thousands a minute while autovacuum wakes once a minute
 * (autovacuum_naptime). A replica checks the statistics every interval and vacuums past a threshold, unless a
 * vacuum is already at work on the table: one replica's vacuum serves all.
 *
 * <p>A transaction that stays open holds the vacuum horizon: no row version deleted after it began can be removed,
 * so the count stays above the threshold and each vacuum scans the table for nothing. When a vacuum removed
 * almost nothing, this one says once which session holds the horizon and backs off: it vacuums again as soon as
 * the horizon moves, and otherwise only after a pause that doubles up to {@link #MAX_BACKOFF}.
 */
final class HotTableVacuum implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(HotTableVacuum.class);

    /** The first pause after a vacuum that removed almost nothing, while the horizon stays where it was. */
    static final Duration FIRST_BACKOFF = Duration.ofSeconds(30);
    static final Duration MAX_BACKOFF = Duration.ofMinutes(5);

    private final Sessions sessions;
    private final long threshold;
    private final String schema;
    private final LongSupplier nanoTime;
    private final ScheduledExecutorService timer;
    private final AtomicInteger vacuums = new AtomicInteger();

    /** Set while vacuum is backing off because the horizon is held; touched only by the thread running {@link #runOnce}. */
    private Pinned pinned;

    HotTableVacuum(Sessions sessions, Duration interval, long threshold, String schema) {
        this(sessions, interval, threshold, schema, System::nanoTime);
    }

    HotTableVacuum(Sessions sessions, Duration interval, long threshold, String schema, LongSupplier nanoTime) {
        this.sessions = sessions;
        this.threshold = threshold;
        this.schema = schema;
        this.nanoTime = nanoTime;
        this.timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "queue-vacuum-" + schema);
            thread.setDaemon(true);
            return thread;
        });
        long millis = interval.toMillis();
        timer.scheduleWithFixedDelay(this::runOnce, millis, millis, TimeUnit.MILLISECONDS);
    }

    /** How many vacuums this one has run. */
    int vacuumsRun() {
        return vacuums.get();
    }

    /** Vacuums if the dead row versions passed the threshold and a vacuum can remove them; returns whether it did. */
    synchronized boolean runOnce() {
        try {
            long dead = deadTuples();
            if (dead < threshold) {
                if (pinned != null) {
                    log.info("schema {}: the hot table's dead row versions were removed; its vacuum is back to its usual cadence", schema);
                    pinned = null;
                }
                return false;
            }
            Horizon horizon = null;
            if (pinned != null) {
                horizon = horizon();
                boolean moved = !(horizon == null ? "" : horizon.xid()).equals(pinned.horizon.xid());
                if (!moved && nanoTime.getAsLong() - pinned.retryAt < 0) {
                    return false;
                }
            }
            if (Boolean.TRUE.equals(sessions.autoCommit("vacuum in progress", s -> s.selectOne("queue.vacuumInProgress")))) {
                log.debug("schema {}: hot table vacuum left to the one in progress ({} dead row versions)", schema, dead);
                return false;
            }
            long start = System.nanoTime();
            sessions.autoCommit("vacuum", s -> s.update("queue.vacuumMessages"));
            vacuums.incrementAndGet();
            long left = deadTuples();
            log.debug("schema {}: vacuumed the hot table ({} dead row versions, {} left) in {} ms", schema, dead, left,
                    (System.nanoTime() - start) / 1_000_000);
            Horizon holder = removedAlmostNothing(dead, left) ? horizon() : null;
            if (holder != null && holder.heldSince(System.nanoTime() - start)) {
                backOff(holder, left);
            } else if (pinned != null) {
                log.info("schema {}: the vacuum horizon moved and vacuum removed {} dead row versions of the hot table; "
                        + "its vacuum is back to its usual cadence", schema, dead - left);
                pinned = null;
            }
            return true;
        } catch (RuntimeException e) {
            log.debug("schema {}: hot table vacuum skipped: {}", schema, e.toString());
            return false;
        }
    }

    /**
     * Less than a tenth removed and still past the threshold. On a busy table that alone proves nothing: rows die
     * while the vacuum runs, and those it cannot remove either; so the queue backs off only when the horizon's
     * holder was there before this vacuum began. (On PostgreSQL 14 and older the statistics lag a
     * vacuum by up to half a second: a vacuum that did remove rows may look like this, and the next round, finding
     * the horizon moved, vacuums again.)
     */
    private boolean removedAlmostNothing(long before, long after) {
        return after >= threshold && before - after < before / 10;
    }

    private void backOff(Horizon horizon, long left) {
        long now = nanoTime.getAsLong();
        if (pinned == null) {
            pinned = new Pinned(horizon, FIRST_BACKOFF, now + FIRST_BACKOFF.toNanos());
            log.warn("schema {}: vacuum of the hot table removed almost nothing ({} dead row versions left): {} holds the "
                    + "vacuum horizon. Claims slow down while it does; vacuuming again when it moves, or in {} s",
                    schema, left, horizon.describe(), FIRST_BACKOFF.toSeconds());
            return;
        }
        Duration backoff = pinned.backoff.multipliedBy(2);
        if (backoff.compareTo(MAX_BACKOFF) > 0) {
            backoff = MAX_BACKOFF;
        }
        if (!horizon.holder().equals(pinned.horizon.holder())) {
            log.warn("schema {}: vacuum of the hot table still removes almost nothing ({} dead row versions left): now {} "
                    + "holds the vacuum horizon", schema, left, horizon.describe());
        }
        pinned = new Pinned(horizon, backoff, now + backoff.toNanos());
    }

    private long deadTuples() {
        Long dead = sessions.autoCommit("dead tuple count", s -> s.selectOne("queue.deadTuples"));
        return dead == null ? 0 : dead;
    }

    private Horizon horizon() {
        Map<String, Object> row = sessions.autoCommit("vacuum horizon", s -> s.selectOne("queue.vacuumHorizon"));
        return row == null ? null : Horizon.of(row);
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

    private record Pinned(Horizon horizon, Duration backoff, long retryAt) {
    }

    /** The oldest transaction id or snapshot vacuum must respect, and who holds it. */
    record Horizon(String xid, String holder, String details, Long openMillis) {

        /**
         * Whether its transaction has been open at least this long. A prepared transaction, a replication slot or a
         * standby's feedback has no start time: those hold the horizon for as long as they exist.
         */
        boolean heldSince(long nanosAgo) {
            return openMillis == null || openMillis * 1_000_000L >= nanosAgo;
        }

        static Horizon of(Map<String, Object> row) {
            String holder = String.valueOf(row.get("holder"));
            Object pid = row.get("pid");
            if (pid != null) {
                holder = holder + " pid " + pid;
            }
            StringBuilder details = new StringBuilder(" (");
            appendIfPresent(details, "application ", row.get("application_name"));
            appendIfPresent(details, "state ", row.get("state"));
            appendIfPresent(details, "transaction open for ", row.get("open_seconds") == null ? null : row.get("open_seconds") + " s");
            appendIfPresent(details, "since ", row.get("xact_start"));
            appendIfPresent(details, "last query started at ", row.get("query_start"));
            appendIfPresent(details, "", row.get("xid_age") == null ? null : row.get("xid_age") + " transactions ago");
            details.append(')');
            Object openMillis = row.get("open_millis");
            return new Horizon(Objects.toString(row.get("horizon"), ""), holder, details.toString(),
                    openMillis == null ? null : ((Number) openMillis).longValue());
        }

        private static void appendIfPresent(StringBuilder details, String label, Object value) {
            if (value == null || value.toString().isEmpty()) {
                return;
            }
            if (details.length() > 2) {
                details.append(", ");
            }
            details.append(label).append(value);
        }

        String describe() {
            return holder + details;
        }
    }
}
