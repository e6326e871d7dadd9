package dev.queue.postgres;

import dev.queue.api.InvalidInputException;
import dev.queue.domain.engine.MaintenanceService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Vacuums the hot table when dead row versions pile up faster than autovacuum visits it. Every claim walks the
 * claim index from its front, where the entries of just-claimed rows lie; until vacuum removes them, each claim
 * steps over them again, and a busy queue makes tens of thousands a minute while autovacuum wakes once a minute
 * (autovacuum_naptime). A replica checks the statistics every interval and vacuums past a threshold, unless a
 * vacuum is already at work on the table: one replica's vacuum serves all.
 *
 * <p>A transaction that stays open holds the vacuum horizon: no row version deleted after it began can be removed,
 * so the count stays above the threshold and each vacuum scans the table for nothing. When a vacuum removed
 * almost nothing, this one says once which session holds the horizon and vacuums again only once the horizon
 * moves. A vacuum while the same transaction holds it could remove only what transactions older than the holder
 * deleted, and would scan a table and indexes that grow all the while, on every replica in turn; autovacuum, which
 * runs on its own schedule, takes care of those few.
 *
 * <p>A {@link dev.queue.domain.engine.MaintenanceRunner} runs it every interval; a failed check or vacuum is
 * retried by the runner after a growing pause, with a warning.
 */
final class HotTableVacuum implements MaintenanceService<HotTableVacuum.Pass> {

    private static final Logger log = LoggerFactory.getLogger(HotTableVacuum.class);

    /**
     * A holder open for less is taken for traffic, not a pin. Under load the statistics can make a vacuum look as
     * if it removed almost nothing (deletes counted before it ran reach them only after), and the oldest of the
     * queue's own transactions, open for a fraction of a second, then holds the horizon; the next vacuum removes
     * what it kept.
     */
    static final long SHORTEST_PIN_NANOS = Duration.ofSeconds(2).toNanos();

    /**
     * @param interval  how often it checks the dead row versions; zero: never (autovacuum alone)
     * @param threshold dead row versions past which it vacuums
     */
    record Config(Duration interval, long threshold) {

        static final long DEFAULT_THRESHOLD = 20_000;

        Config {
            if (interval == null || interval.isNegative() || interval.compareTo(Duration.ofHours(1)) > 0) {
                throw new InvalidInputException("vacuumInterval", interval, "0 (off) to 1 h");
            }
            if (threshold < 1) {
                throw new InvalidInputException("vacuum threshold", threshold, "at least 1 dead row version");
            }
        }

        /** Every {@code interval}, with the default threshold. */
        static Config every(Duration interval) {
            return new Config(interval, DEFAULT_THRESHOLD);
        }

        boolean off() {
            return interval.isZero();
        }
    }

    /**
     * What a pass did: the dead row versions it found, those left after it (as many, when it did not vacuum), and
     * whether it vacuumed.
     */
    record Pass(long deadRowVersions, long left, boolean vacuumed) implements MaintenanceService.Report {

        static Pass skipped(long dead) {
            return new Pass(dead, dead, false);
        }

        /** One vacuum does the whole table: never a batch to continue. */
        @Override
        public boolean batchFull() {
            return false;
        }
    }

    private final Sessions sessions;
    /** Runs the VACUUM itself: a login that owns the table (or has MAINTAIN on it), where the checks need none. */
    private final Sessions vacuumSessions;
    private final Config config;
    private final String schema;
    private final AtomicInteger vacuums = new AtomicInteger();

    /**
     * Who held the horizon when a vacuum last removed almost nothing; set while vacuum waits for it to move. Touched
     * only by the thread running {@link #runOnce}.
     */
    private Horizon pinned;

    HotTableVacuum(Sessions sessions, Config config, String schema) {
        this(sessions, sessions, config, schema);
    }

    /** Checks through {@code sessions}, vacuums through {@code vacuumSessions} (an owner's, say). */
    HotTableVacuum(Sessions sessions, Sessions vacuumSessions, Config config, String schema) {
        this.sessions = sessions;
        this.vacuumSessions = vacuumSessions;
        this.config = config;
        this.schema = schema;
    }

    @Override
    public String name() {
        return "hot table vacuum of schema " + schema;
    }

    @Override
    public Duration interval() {
        return config.interval();
    }

    /** How many vacuums this one has run. */
    int vacuumsRun() {
        return vacuums.get();
    }

    /** Vacuums if the dead row versions passed the threshold and a vacuum can remove them. */
    @Override
    public synchronized Pass runOnce() {
        long dead = deadTuples();
        if (dead < config.threshold()) {
            if (pinned != null) {
                log.info("schema {}: the hot table's dead row versions were removed; its vacuum is back to its usual cadence", schema);
                pinned = null;
            }
            return Pass.skipped(dead);
        }
        if (pinned != null) {
            Horizon horizon = horizon();
            if (horizon != null && horizon.xid().equals(pinned.xid())) {
                return Pass.skipped(dead);
            }
        }
        if (Boolean.TRUE.equals(sessions.autoCommit("vacuum in progress", MaintenanceMapper.class, MaintenanceMapper::vacuumInProgress))) {
            log.debug("schema {}: hot table vacuum left to the one in progress ({} dead row versions)", schema, dead);
            return Pass.skipped(dead);
        }
        long start = System.nanoTime();
        vacuumSessions.autoCommit("vacuum", MaintenanceMapper.class, m -> {
            m.vacuumMessages();
            return null;
        });
        vacuums.incrementAndGet();
        long left = deadTuples();
        log.debug("schema {}: vacuumed the hot table ({} dead row versions, {} left) in {} ms", schema, dead, left,
                (System.nanoTime() - start) / 1_000_000);
        Horizon holder = removedAlmostNothing(dead, left) ? horizon() : null;
        if (holder != null && holder.heldSince(Math.max(System.nanoTime() - start, SHORTEST_PIN_NANOS))) {
            waitForHorizon(holder, left);
        } else if (pinned != null) {
            log.info("schema {}: the vacuum horizon moved and vacuum removed {} dead row versions of the hot table; "
                    + "its vacuum is back to its usual cadence", schema, dead - left);
            pinned = null;
        }
        return new Pass(dead, left, true);
    }

    /**
     * Less than a tenth removed and still past the threshold. On a busy table that alone proves nothing: rows die
     * while the vacuum runs, and those it cannot remove either; so the queue waits for the horizon only when its
     * holder was there before this vacuum began, and for at least {@link #SHORTEST_PIN_NANOS}.
     */
    private boolean removedAlmostNothing(long before, long after) {
        return after >= config.threshold() && before - after < before / 10;
    }

    private void waitForHorizon(Horizon horizon, long left) {
        if (pinned == null) {
            log.warn("schema {}: vacuum of the hot table removed almost nothing ({} dead row versions left): {} holds the "
                    + "vacuum horizon. Claims slow down while it does; vacuuming again when it moves", schema, left,
                    horizon.describe());
        } else if (!horizon.holder().equals(pinned.holder())) {
            log.warn("schema {}: vacuum of the hot table still removes almost nothing ({} dead row versions left): now {} "
                    + "holds the vacuum horizon", schema, left, horizon.describe());
        }
        pinned = horizon;
    }

    private long deadTuples() {
        Long dead = sessions.autoCommit("dead tuple count", MaintenanceMapper.class, MaintenanceMapper::deadTuples);
        return dead == null ? 0 : dead;
    }

    private Horizon horizon() {
        MaintenanceMapper.HorizonRow row = sessions.autoCommit("vacuum horizon", MaintenanceMapper.class,
                MaintenanceMapper::vacuumHorizon);
        return row == null ? null : Horizon.of(row);
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

        static Horizon of(MaintenanceMapper.HorizonRow row) {
            String holder = String.valueOf(row.holder());
            if (row.pid() != null) {
                holder = holder + " pid " + row.pid();
            }
            StringBuilder details = new StringBuilder(" (");
            appendIfPresent(details, "application ", row.applicationName());
            appendIfPresent(details, "state ", row.state());
            appendIfPresent(details, "transaction open for ", row.openSeconds() == null ? null : row.openSeconds() + " s");
            appendIfPresent(details, "since ", row.xactStart());
            appendIfPresent(details, "last query started at ", row.queryStart());
            appendIfPresent(details, "", row.xidAge() == null ? null : row.xidAge() + " transactions ago");
            details.append(')');
            return new Horizon(Objects.toString(row.horizon(), ""), holder, details.toString(), row.openMillis());
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
