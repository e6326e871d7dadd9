package dev.queue.bench;

import org.HdrHistogram.Histogram;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;

/**
 * A transaction that pins the vacuum horizon for part of a run, as a forgotten {@code BEGIN} in psql or a long report
 * does: it takes a transaction id and holds it, so no row version deleted after it started can be removed. Splits the
 * measured seconds into before, during and after the hold and keeps throughput, latency and the worst second's p99
 * for each (the worst second before the hold shows how far the host alone moves a single second), and the hot
 * table's dead row versions when the hold ends. The seconds after the release are also split into the first
 * {@value #RECOVERY_SECONDS} and the rest, since the target is full speed again within about that long.
 */
final class HorizonHold implements AutoCloseable {

    /**
     * The seconds after the release given to recover, reported apart from the rest of the after phase (the JSON's
     * {@code after_first_10s_*} names carry the figure).
     */
    static final int RECOVERY_SECONDS = 10;

    private final BenchDatabase db;
    private final String schema;
    private final int atSecond;
    private final int forSeconds;
    private final Phase before = new Phase();
    private final Phase during = new Phase();
    private final Phase after = new Phase();
    private final Phase afterRecovery = new Phase();
    private final Phase afterRest = new Phase();
    private long deadTuplesAtRelease = -1;
    private Connection holder;
    private long holderPid;

    /** Starts the hold after {@code atSecond} measured seconds and releases it {@code forSeconds} later. */
    HorizonHold(BenchDatabase db, String schema, int atSecond, int forSeconds) {
        if (atSecond < 1 || forSeconds < 1) {
            throw new IllegalArgumentException("--hold-horizon-at and --hold-horizon-for must be 1 or more, got "
                    + atSecond + " and " + forSeconds);
        }
        this.db = db;
        this.schema = schema;
        this.atSecond = atSecond;
        this.forSeconds = forSeconds;
    }

    /** Called once the measured second {@code second} (from 1) is over, with what it handled and its latencies. */
    void secondDone(int second, long handledInSecond, Histogram latencies) throws SQLException {
        count(second, handledInSecond, latencies);
        if (second == atSecond) {
            begin();
        } else if (second == atSecond + forSeconds) {
            deadTuplesAtRelease = db.deadTuples(schema);
            release();
        }
    }

    /** Adds the second to its phase, without opening or ending the hold. */
    void count(int second, long handledInSecond, Histogram latencies) {
        int releasedAt = atSecond + forSeconds;
        Phase phase = second <= atSecond ? before : second <= releasedAt ? during : after;
        phase.add(handledInSecond, latencies);
        if (phase == after) {
            (second <= releasedAt + RECOVERY_SECONDS ? afterRecovery : afterRest).add(handledInSecond, latencies);
        }
    }

    private void begin() throws SQLException {
        holder = db.connect();
        holder.setAutoCommit(false);
        try (Statement statement = holder.createStatement();
             ResultSet rs = statement.executeQuery("SELECT txid_current(), pg_backend_pid()")) {
            rs.next();
            holderPid = rs.getLong(2);
        }
        EndToEnd.log("holding the vacuum horizon for %d s (backend %d)", forSeconds, holderPid);
    }

    private void release() throws SQLException {
        if (holder != null) {
            holder.commit();
            holder.close();
            holder = null;
            EndToEnd.log("released the vacuum horizon; dead row versions in the hot table: %d", deadTuplesAtRelease);
        }
    }

    /**
     * The hold's part of the JSON line. The after phase also gets its slowest second (the fewest handled, with that
     * second's p99 and how many seconds after the release it ended) and, as {@code after_first_10s_*} and
     * {@code after_rest_*}, its first {@value #RECOVERY_SECONDS} seconds apart from the rest; the ratios are to before.
     */
    String json() {
        return String.format(Locale.ROOT, "{\"at_s\":%d,\"for_s\":%d,\"before_per_s\":%.1f,\"during_per_s\":%.1f,"
                        + "\"after_per_s\":%.1f,\"during_ratio\":%.3f,\"before_p99_ms\":%.3f,\"during_p99_ms\":%.3f,"
                        + "\"after_p99_ms\":%.3f,\"before_worst_second_p99_ms\":%.3f,\"during_worst_second_p99_ms\":%.3f,"
                        + "\"after_worst_second_p99_ms\":%.3f,\"dead_tuples_at_release\":%d,"
                        + "\"after_s\":%d,\"after_ratio\":%.3f,\"after_slowest_second_per_s\":%.1f,"
                        + "\"after_slowest_second_p99_ms\":%.3f,\"after_slowest_second_at_s\":%d,"
                        + "\"after_first_10s_per_s\":%.1f,\"after_first_10s_ratio\":%.3f,\"after_first_10s_p99_ms\":%.3f,"
                        + "\"after_first_10s_worst_second_p99_ms\":%.3f,\"after_first_10s_slowest_second_per_s\":%.1f,"
                        + "\"after_rest_per_s\":%s,\"after_rest_ratio\":%s,\"after_rest_p99_ms\":%s,"
                        + "\"after_rest_worst_second_p99_ms\":%s,\"after_rest_slowest_second_per_s\":%s}",
                atSecond, forSeconds, before.perSecond(), during.perSecond(), after.perSecond(),
                ratioToBefore(during), before.p99Millis(), during.p99Millis(),
                after.p99Millis(), before.worstSecondP99Millis, during.worstSecondP99Millis, after.worstSecondP99Millis,
                deadTuplesAtRelease,
                after.seconds, ratioToBefore(after), after.slowestSecondHandled(), after.slowestSecondP99Millis,
                after.slowestSecondIndex,
                afterRecovery.perSecond(), ratioToBefore(afterRecovery), afterRecovery.p99Millis(),
                afterRecovery.worstSecondP99Millis, afterRecovery.slowestSecondHandled(),
                orNull(afterRest, "%.1f", afterRest.perSecond()), orNull(afterRest, "%.3f", ratioToBefore(afterRest)),
                orNull(afterRest, "%.3f", afterRest.p99Millis()), orNull(afterRest, "%.3f", afterRest.worstSecondP99Millis),
                orNull(afterRest, "%.1f", afterRest.slowestSecondHandled()));
    }

    /** The figure, or null when the phase had no seconds: a run that ends within the recovery has no rest, not a rest at 0/s. */
    private static String orNull(Phase phase, String format, double value) {
        return phase.seconds == 0 ? "null" : String.format(Locale.ROOT, format, value);
    }

    /** How the after phase went, for the run's log. */
    String afterSummary() {
        String rest = afterRest.seconds == 0 ? "none"
                : String.format(Locale.ROOT, "%.0f/s (%.2f)", afterRest.perSecond(), ratioToBefore(afterRest));
        return String.format(Locale.ROOT, "after the release: %.0f/s (%.2f of before); first %d s %.0f/s (%.2f), the rest %s; "
                        + "slowest second %.0f/s, %d s after the release, p99 %.1f ms",
                after.perSecond(), ratioToBefore(after), RECOVERY_SECONDS, afterRecovery.perSecond(), ratioToBefore(afterRecovery),
                rest, after.slowestSecondHandled(), after.slowestSecondIndex, after.slowestSecondP99Millis);
    }

    private double ratioToBefore(Phase phase) {
        return before.perSecond() > 0 ? phase.perSecond() / before.perSecond() : 0;
    }

    @Override
    public void close() throws SQLException {
        if (holder != null) {
            holder.rollback();
            holder.close();
            holder = null;
        }
    }

    private static final class Phase {
        private final Histogram latencies = new Histogram(3);
        private long handled;
        private int seconds;
        private double worstSecondP99Millis;
        /** The second that handled the fewest (the first of equals), counted from 1 within the phase; 0: none yet. */
        private int slowestSecondIndex;
        private long slowestSecondHandled;
        private double slowestSecondP99Millis;

        void add(long handledInSecond, Histogram secondLatencies) {
            handled += handledInSecond;
            seconds++;
            latencies.add(secondLatencies);
            double p99Millis = secondLatencies.getValueAtPercentile(99) / 1000.0;
            worstSecondP99Millis = Math.max(worstSecondP99Millis, p99Millis);
            if (slowestSecondIndex == 0 || handledInSecond < slowestSecondHandled) {
                slowestSecondIndex = seconds;
                slowestSecondHandled = handledInSecond;
                slowestSecondP99Millis = p99Millis;
            }
        }

        double slowestSecondHandled() {
            return slowestSecondHandled;
        }

        double perSecond() {
            return seconds == 0 ? 0 : (double) handled / seconds;
        }

        double p99Millis() {
            return latencies.getTotalCount() == 0 ? 0 : latencies.getValueAtPercentile(99) / 1000.0;
        }
    }
}
