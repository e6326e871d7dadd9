package dev.queue.demo;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * The outcome of one demo run, as printed at its end. Counts of completed, dead, pending and running messages
 * are the queue's own ({@code Namespace.stats()}); published, handler runs and retries are counted by the demo.
 *
 * @param topics       one row per topic, in the order of {@link Workload#TOPICS}
 * @param total        the sum of the topic rows
 * @param wallTime     from the first publish until every message was completed or dead (or the run stopped)
 * @param publishTime  from the first publish until the last batch was stored
 * @param latency      publish to handler start of first attempts, in microseconds
 * @param replicaRuns  handler runs per replica, replica 1 first
 * @param timedOut     the duration limit passed before every message was settled
 * @param interrupted  the run was stopped (Ctrl-C) before every message was settled
 */
record Summary(List<TopicRow> topics, TopicRow total, Duration wallTime, Duration publishTime, Latency latency, List<Long> replicaRuns,
               boolean timedOut, boolean interrupted) {

    /** One topic: published (by the demo), completed and dead (by the queue), retries and runs (by the handlers). */
    record TopicRow(String topic, long published, long completed, long dead, long pending, long running, long retries,
                    long runs) {

        long settled() {
            return completed + dead;
        }

        /** Every published message is completed or dead: none is missing, none still waiting. */
        boolean balanced() {
            return completed + dead == published && pending == 0 && running == 0;
        }
    }

    /** Percentiles in microseconds; {@code count} first attempts were measured. */
    record Latency(long count, long p50, long p90, long p99, long max) {
    }

    Summary {
        topics = List.copyOf(topics);
        replicaRuns = List.copyOf(replicaRuns);
    }

    /** Completed plus dead equals published, on every topic and in total, and nothing is left waiting. */
    boolean balanced() {
        return total.balanced() && topics.stream().allMatch(TopicRow::balanced);
    }

    /** 0: every message accounted for; 130: stopped by Ctrl-C; 1: timed out or a message is missing. */
    int exitCode() {
        if (interrupted) {
            return 130;
        }
        return !timedOut && balanced() ? 0 : 1;
    }

    /** Messages settled (completed or dead) per second of wall time. */
    double settledPerSecond() {
        return perSecond(total.settled());
    }

    /** Handler runs (first attempts and retries) per second of wall time. */
    double runsPerSecond() {
        return perSecond(total.runs());
    }

    private double perSecond(long count) {
        long nanos = wallTime.toNanos();
        return nanos == 0 ? 0 : count * 1e9 / nanos;
    }

    void print(PrintWriter out) {
        String rowFormat = "  %-17s %10s %10s %9s %8s %9s%n";
        out.println();
        out.println("Summary");
        out.printf(Locale.ROOT, rowFormat, "topic", "published", "completed", "dead", "retries", "waiting");
        for (TopicRow row : topics) {
            printRow(out, rowFormat, row);
        }
        printRow(out, rowFormat, total);
        out.println();
        out.printf(Locale.ROOT, "  %-17s %s%n", "check", check());
        out.printf(Locale.ROOT, "  %-17s %.2f s (first publish %s)%n", "wall time", wallTime.toNanos() / 1e9,
                timedOut || interrupted ? "until the run stopped" : "to last message completed or dead");
        out.printf(Locale.ROOT, "  %-17s %,.0f messages/s settled, %,.0f handler runs/s%n", "throughput",
                settledPerSecond(), runsPerSecond());
        out.printf(Locale.ROOT, "  %-17s %,d messages in %.2f s (%,.0f/s, batches of %d)%n", "publishing", total.published(),
                publishTime.toNanos() / 1e9, publishTime.isZero() ? 0 : total.published() * 1e9 / publishTime.toNanos(),
                DemoCommand.BATCH_SIZE);
        if (latency.count() > 0) {
            out.printf(Locale.ROOT, "  %-17s p50 %s   p90 %s   p99 %s   max %s%n", "latency",
                    millis(latency.p50()), millis(latency.p90()), millis(latency.p99()), millis(latency.max()));
            out.printf(Locale.ROOT, "  %-17s (publish to handler start of %,d first attempts, time queued behind earlier%n",
                    "", latency.count());
            out.printf(Locale.ROOT, "  %-17s messages included; retries wait for their backoff and are not counted)%n", "");
        }
        StringBuilder replicas = new StringBuilder();
        for (int i = 0; i < replicaRuns.size(); i++) {
            replicas.append(i == 0 ? "" : ", ").append(String.format(Locale.ROOT, "replica-%d %,d", i + 1, replicaRuns.get(i)));
        }
        out.printf(Locale.ROOT, "  %-17s %s handler runs%n", "replicas", replicas);
        out.printf(Locale.ROOT, "  %-17s %s%n", "result", result());
        out.flush();
    }

    private String check() {
        String equation = String.format(Locale.ROOT, "completed + dead = %,d + %,d = %,d, published %,d",
                total.completed(), total.dead(), total.settled(), total.published());
        if (balanced()) {
            return equation + ": OK";
        }
        long waiting = total.pending() + total.running();
        long missing = total.published() - total.settled() - waiting;
        return equation + String.format(Locale.ROOT, ": MISMATCH (%,d still waiting, %,d unaccounted for)", waiting, missing);
    }

    private String result() {
        if (interrupted) {
            return "STOPPED before every message was settled (exit code 130)";
        }
        if (timedOut) {
            return "TIMED OUT: the duration limit passed before every message was settled (exit code 1)";
        }
        return balanced() ? "OK: every published message was completed or dead-lettered (exit code 0)"
                : "FAILED: messages are missing (exit code 1)";
    }

    private static void printRow(PrintWriter out, String format, TopicRow row) {
        out.printf(Locale.ROOT, format, row.topic(), count(row.published()), count(row.completed()), count(row.dead()),
                count(row.retries()), count(row.pending() + row.running()));
    }

    private static String count(long value) {
        return String.format(Locale.ROOT, "%,d", value);
    }

    static String millis(long micros) {
        return String.format(Locale.ROOT, micros < 10_000 ? "%.2f ms" : "%.0f ms", micros / 1000.0);
    }
}
