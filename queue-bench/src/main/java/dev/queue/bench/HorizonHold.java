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
 * table's dead row versions when the hold ends.
 */
final class HorizonHold implements AutoCloseable {

    private final BenchDatabase db;
    private final String schema;
    private final int atSecond;
    private final int forSeconds;
    private final Phase before = new Phase();
    private final Phase during = new Phase();
    private final Phase after = new Phase();
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
        Phase phase = second <= atSecond ? before : second <= atSecond + forSeconds ? during : after;
        phase.add(handledInSecond, latencies);
        if (second == atSecond) {
            begin();
        } else if (second == atSecond + forSeconds) {
            deadTuplesAtRelease = db.deadTuples(schema);
            release();
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

    /** The hold's part of the JSON line. */
    String json() {
        return String.format(Locale.ROOT, "{\"at_s\":%d,\"for_s\":%d,\"before_per_s\":%.1f,\"during_per_s\":%.1f,"
                        + "\"after_per_s\":%.1f,\"during_ratio\":%.3f,\"before_p99_ms\":%.3f,\"during_p99_ms\":%.3f,"
                        + "\"after_p99_ms\":%.3f,\"before_worst_second_p99_ms\":%.3f,\"during_worst_second_p99_ms\":%.3f,"
                        + "\"after_worst_second_p99_ms\":%.3f,\"dead_tuples_at_release\":%d}",
                atSecond, forSeconds, before.perSecond(), during.perSecond(), after.perSecond(),
                before.perSecond() > 0 ? during.perSecond() / before.perSecond() : 0, before.p99Millis(), during.p99Millis(),
                after.p99Millis(), before.worstSecondP99Millis, during.worstSecondP99Millis, after.worstSecondP99Millis,
                deadTuplesAtRelease);
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

        void add(long handledInSecond, Histogram secondLatencies) {
            handled += handledInSecond;
            seconds++;
            latencies.add(secondLatencies);
            worstSecondP99Millis = Math.max(worstSecondP99Millis, secondLatencies.getValueAtPercentile(99) / 1000.0);
        }

        double perSecond() {
            return seconds == 0 ? 0 : (double) handled / seconds;
        }

        double p99Millis() {
            return latencies.getTotalCount() == 0 ? 0 : latencies.getValueAtPercentile(99) / 1000.0;
        }
    }
}
