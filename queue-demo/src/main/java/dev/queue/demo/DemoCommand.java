package dev.queue.demo;

import dev.queue.api.Message;
import dev.queue.api.Namespace;
import dev.queue.api.NamespaceStats;
import dev.queue.api.Queue;
import dev.queue.api.QueueException;
import dev.queue.api.Subscription;
import dev.queue.api.TopicStats;
import dev.queue.postgres.PostgresQueueConfig;
import org.HdrHistogram.Histogram;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * The demo: publishes a mix of messages on three topics and lets two replicas, each a {@link Queue} with a
 * connection pool of its own, handle them until every message is completed or dead, printing progress once a
 * second and a summary at the end.
 *
 * <pre>
 * java -jar queue-demo/target/queue-demo.jar                      # embedded PostgreSQL, 20,000 messages
 * java -jar queue-demo/target/queue-demo.jar --messages 100000 --rate 5000
 * java -jar queue-demo/target/queue-demo.jar --database-url 'jdbc:postgresql://localhost/app?user=app&amp;password=secret'
 * </pre>
 *
 * Exit code 0 when completed + dead equals published on every topic; 1 when the duration limit passed first or a
 * message is missing; 2 for bad options; 130 when stopped with Ctrl-C.
 */
@Command(name = "queue-demo", mixinStandardHelpOptions = true, sortOptions = false, versionProvider = DemoCommand.Version.class,
        description = {
                "Publishes a realistic mix of messages (e-mails, invoices that sometimes fail, webhooks that always fail) "
                        + "and handles them with two subscriber replicas, until every message is completed or a dead letter.",
                "Without --database-url it starts an embedded PostgreSQL and stops it at the end.", ""},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
                "0:every published message was completed or dead-lettered",
                "1:the duration limit passed first, a message went missing, or the run failed",
                "2:invalid options",
                "130:stopped with Ctrl-C"})
public final class DemoCommand implements Callable<Integer> {

    private static final Logger LOG = LoggerFactory.getLogger(DemoCommand.class);

    static final int REPLICAS = 2;
    static final int BATCH_SIZE = 500;
    /** Connections of each replica's pool: three claim loops, three acknowledgement batchers, retries from handlers. */
    static final int REPLICA_POOL_SIZE = 16;
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
    private static final long PRINT_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** How long Ctrl-C waits for the run to close everything before it stops the embedded server itself. */
    private static final Duration SHUTDOWN_GRACE = Duration.ofSeconds(15);

    @Spec
    CommandSpec spec;

    @Option(names = "--database-url", paramLabel = "<jdbc-url>",
            description = {"PostgreSQL to run on, user and password inside, e.g.",
                    "jdbc:postgresql://localhost:5432/app?user=app&password=secret",
                    "Default: an embedded PostgreSQL started for the run."})
    String databaseUrl;

    @Option(names = "--messages", paramLabel = "<count>", defaultValue = "20000",
            description = "Messages to publish (default: ${DEFAULT-VALUE}).")
    int messages;

    @Option(names = "--rate", paramLabel = "<per-second>", defaultValue = "0",
            description = "Publish at most this many messages per second, in batches of " + BATCH_SIZE + "; "
                    + "0 publishes as fast as possible (default: ${DEFAULT-VALUE}).")
    int rate;

    @Option(names = "--duration-limit", paramLabel = "<duration>", defaultValue = "5m", converter = DurationConverter.class,
            description = "Give up (exit code 1) when not done after this long, e.g. 90s, 5m (default: ${DEFAULT-VALUE}).")
    Duration durationLimit;

    @Option(names = "--schema", paramLabel = "<name>", defaultValue = "queue_demo",
            description = "Schema of the queue's tables; dropped and recreated at start (default: ${DEFAULT-VALUE}).")
    String schema;

    @Option(names = "--quiet", description = "Print the summary only, no progress.")
    boolean quiet;

    private volatile Summary summary;

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The version in the jar's manifest. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String version = DemoCommand.class.getPackage().getImplementationVersion();
            return new String[] {"queue-demo " + (version != null ? version : "(development build)")};
        }
    }

    /** The command line of a fresh demo, for main and for tests. */
    static CommandLine commandLine() {
        return new CommandLine(new DemoCommand());
    }

    /** The summary of the last run; null before one finished. */
    Summary summary() {
        return summary;
    }

    @Override
    public Integer call() {
        validate();
        PrintWriter out = spec.commandLine().getOut();
        Resources resources = new Resources();
        AtomicBoolean stopRequested = new AtomicBoolean();
        CountDownLatch settled = new CountDownLatch(1);
        CountDownLatch finished = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            // Ctrl-C: wake the run and let it close subscriptions, queues and the server in that order; if that
            // hangs, stop at least the embedded server, so that no postgres process outlives the demo
            stopRequested.set(true);
            settled.countDown();
            try {
                if (!finished.await(SHUTDOWN_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                    resources.closeDatabase();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "queue-demo-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            return run(out, resources, stopRequested, settled);
        } catch (Exception e) {
            PrintWriter err = spec.commandLine().getErr();
            err.println("queue-demo failed: " + e);
            e.printStackTrace(err);
            err.flush();
            return 1;
        } finally {
            resources.closeAll();
            finished.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running already
            }
        }
    }

    private void validate() {
        if (messages < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--messages must be at least 1, got " + messages);
        }
        if (rate < 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--rate must be 0 (no limit) or more, got " + rate);
        }
        if (durationLimit.isNegative() || durationLimit.isZero()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--duration-limit must be positive, got " + durationLimit);
        }
        try {
            PostgresQueueConfig.defaults().schema(schema);
        } catch (QueueException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--schema: " + e.getMessage());
        }
        if (schema.equals("public")) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--schema public: the demo drops its schema at start; choose a schema of its own");
        }
    }

    private int run(PrintWriter out, Resources resources, AtomicBoolean stopRequested, CountDownLatch settled) throws Exception {
        Metrics metrics = new Metrics(Workload.TOPICS, REPLICAS);

        DemoDatabase database = resources.database(databaseUrl == null ? DemoDatabase.embedded() : DemoDatabase.external(databaseUrl));
        if (!quiet) {
            out.printf(Locale.ROOT, "queue demo: %,d messages on %d topics of namespace \"%s\"; %d replicas, each with its own "
                            + "pool and one subscription of %d handlers per topic%n", messages, Workload.TOPICS.size(),
                    Workload.NAMESPACE, REPLICAS, Workload.CONCURRENCY);
            out.printf(Locale.ROOT, "database: %s, schema %s (dropped and recreated)%n", database.description(), schema);
            for (String topic : Workload.TOPICS) {
                long share = Math.round(shareOf(topic) * 100);
                out.printf(Locale.ROOT, "  %-16s %3d%%  %s%n", topic, share, Workload.describe(topic));
            }
            out.flush();
        }
        database.dropSchema(schema);

        PostgresQueueConfig config = PostgresQueueConfig.defaults().schema(schema).queueOptions(Workload.queueOptions());
        // The publishing side, like an API server: a small pool, no subscriptions, so no LISTEN connection either.
        Queue producer = resources.add(database.connect(config.poolSize(2).listen(false)));
        Namespace publisher = producer.namespace(Workload.NAMESPACE);

        List<Subscription> subscriptions = new ArrayList<>();
        for (int replica = 1; replica <= REPLICAS; replica++) {
            Queue queue = resources.add(database.connect(config.poolSize(REPLICA_POOL_SIZE)));
            subscriptions.addAll(Workload.subscribe(queue.namespace(Workload.NAMESPACE), replica, metrics));
        }

        Progress progress = new Progress(out, publisher, metrics, settled);
        ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "queue-demo-progress");
            thread.setDaemon(true);
            return thread;
        });
        resources.add((AutoCloseable) ticker::shutdownNow);

        if (stopRequested.get()) {
            out.println("stopped (Ctrl-C) before publishing");
            out.flush();
            return 130;
        }
        long runStart = System.nanoTime();
        long deadline = runStart + durationLimit.toNanos();
        progress.start(runStart);
        ticker.scheduleAtFixedRate(progress::poll, POLL_NANOS, POLL_NANOS, TimeUnit.NANOSECONDS);

        boolean publishedAll = publish(publisher, metrics, deadline, stopRequested);
        long publishNanos = System.nanoTime() - runStart;
        progress.publishingDone(publishedAll);
        long left = deadline - System.nanoTime();
        boolean done = publishedAll && left > 0 && settled.await(left, TimeUnit.NANOSECONDS) && !stopRequested.get();
        long wallNanos = (done ? progress.settledAtNanos() : System.nanoTime()) - runStart;
        boolean interrupted = stopRequested.get();
        if (!done && !interrupted) {
            progress.markTimedOut();
        }

        ticker.shutdown(); // cancels the polling; one poll in progress may finish
        ticker.awaitTermination(5, TimeUnit.SECONDS);
        if (!quiet) {
            out.println(interrupted ? "stopping (Ctrl-C): closing subscriptions..." : "closing subscriptions...");
            out.flush();
        }
        for (Subscription subscription : subscriptions) {
            subscription.close(Duration.ofSeconds(5));
        }

        Summary result = summarize(publisher.stats(), metrics, Duration.ofNanos(wallNanos), Duration.ofNanos(publishNanos),
                !done && !interrupted, interrupted);
        summary = result;
        result.print(out);
        return result.exitCode();
    }

    /** Publishes in batches; false when stopped or out of time before every message was published. */
    private boolean publish(Namespace publisher, Metrics metrics, long deadline, AtomicBoolean stopRequested) {
        long nextBatchAt = System.nanoTime();
        for (long index = 0; index < messages; index += BATCH_SIZE) {
            if (stopRequested.get() || System.nanoTime() - deadline > 0) {
                return false;
            }
            int size = (int) Math.min(BATCH_SIZE, messages - index);
            long stamp = Metrics.nowMicros();
            List<Message> batch = new ArrayList<>(size);
            for (int i = 0; i < size; i++) {
                batch.add(Workload.message(index + i, stamp));
            }
            publisher.publishAll(batch);
            for (Message message : batch) {
                metrics.recordPublished(message.topic());
            }
            if (rate > 0) {
                nextBatchAt += size * 1_000_000_000L / rate;
                for (long wait = nextBatchAt - System.nanoTime(); wait > 0 && !stopRequested.get();
                     wait = nextBatchAt - System.nanoTime()) {
                    LockSupport.parkNanos(wait);
                }
            }
        }
        return true;
    }

    private Summary summarize(NamespaceStats stats, Metrics metrics, Duration wallTime, Duration publishTime, boolean timedOut,
                              boolean interrupted) {
        List<Summary.TopicRow> rows = new ArrayList<>();
        long[] sum = new long[7];
        for (String topic : Workload.TOPICS) {
            TopicStats t = stats.topic(topic);
            Summary.TopicRow row = new Summary.TopicRow(topic, metrics.published(topic), t.completed(), t.dead(), t.pending(),
                    t.running(), metrics.retries(topic), metrics.runs(topic));
            rows.add(row);
            long[] values = {row.published(), row.completed(), row.dead(), row.pending(), row.running(), row.retries(), row.runs()};
            for (int i = 0; i < sum.length; i++) {
                sum[i] += values[i];
            }
        }
        Summary.TopicRow total = new Summary.TopicRow("total", sum[0], sum[1], sum[2], sum[3], sum[4], sum[5], sum[6]);
        Histogram latency = metrics.totalLatency();
        Summary.Latency percentiles = new Summary.Latency(latency.getTotalCount(), latency.getValueAtPercentile(50),
                latency.getValueAtPercentile(90), latency.getValueAtPercentile(99), latency.getMaxValue());
        List<Long> replicaRuns = new ArrayList<>();
        for (int replica = 1; replica <= metrics.replicas(); replica++) {
            replicaRuns.add(metrics.replicaRuns(replica));
        }
        return new Summary(rows, total, wallTime, publishTime, percentiles, replicaRuns, timedOut, interrupted);
    }

    private static double shareOf(String topic) {
        int count = 0;
        for (int i = 0; i < 20; i++) {
            count += Workload.topicOf(i).equals(topic) ? 1 : 0;
        }
        return count / 20.0;
    }

    /** Polls the queue's counts every 200 ms: notices when all is settled, and prints a progress line every second. */
    private final class Progress {
        private final PrintWriter out;
        private final Namespace namespace;
        private final Metrics metrics;
        private final CountDownLatch settled;
        private volatile boolean publishingDone;
        private volatile long settledAtNanos;
        private long startNanos;
        private long nextPrintNanos;
        private long lastRuns;
        private long lastPrintNanos;

        Progress(PrintWriter out, Namespace namespace, Metrics metrics, CountDownLatch settled) {
            this.out = out;
            this.namespace = namespace;
            this.metrics = metrics;
            this.settled = settled;
        }

        void start(long nanos) {
            startNanos = nanos;
            lastPrintNanos = nanos;
            nextPrintNanos = nanos + PRINT_NANOS;
        }

        void publishingDone(boolean all) {
            publishingDone = all;
        }

        long settledAtNanos() {
            return settledAtNanos;
        }

        void markTimedOut() {
            if (!quiet) {
                out.printf(Locale.ROOT, "duration limit of %s reached before every message was settled%n", durationLimit);
                out.flush();
            }
        }

        void poll() {
            try {
                boolean allPublished = publishingDone; // read before the counts, so they include the last batch
                NamespaceStats stats = namespace.stats();
                long now = System.nanoTime();
                if (allPublished && stats.pending() == 0 && stats.running() == 0 && settled.getCount() > 0) {
                    settledAtNanos = now;
                    settled.countDown();
                }
                if (now - nextPrintNanos >= 0) {
                    print(stats, now);
                    nextPrintNanos += PRINT_NANOS;
                }
            } catch (RuntimeException e) {
                LOG.warn("could not read the queue's counts: {}", e.toString());
            }
        }

        private void print(NamespaceStats stats, long now) {
            Histogram interval = metrics.takeInterval();
            long runs = metrics.totalRuns();
            double perSecond = (runs - lastRuns) * 1e9 / Math.max(1, now - lastPrintNanos);
            lastRuns = runs;
            lastPrintNanos = now;
            if (quiet) {
                return;
            }
            String latency = interval.getTotalCount() == 0 ? "-"
                    : "p50 " + Summary.millis(interval.getValueAtPercentile(50)) + "  p99 "
                    + Summary.millis(interval.getValueAtPercentile(99));
            out.printf(Locale.ROOT, "%5.1fs  published %,6d  handled %,6d %,6.0f/s  completed %,6d  dead %,5d  retries %,5d"
                            + "  waiting %,6d  latency %s%n",
                    (now - startNanos) / 1e9, metrics.publishedTotal(), runs, perSecond, stats.completed(), stats.dead(),
                    metrics.totalRetries(), stats.pending() + stats.running(), latency);
            out.flush();
        }
    }

    /**
     * What the run opened, closed in reverse order exactly once: subscriptions' queues before the database. Closing
     * happens outside the lock, so the Ctrl-C hook can still stop the database while the run hangs in a close.
     */
    private static final class Resources {
        private final Deque<AutoCloseable> open = new ArrayDeque<>();
        private DemoDatabase database;

        synchronized <T extends AutoCloseable> T add(T resource) {
            open.push(resource);
            return resource;
        }

        synchronized DemoDatabase database(DemoDatabase value) {
            database = value;
            return add(value);
        }

        void closeAll() {
            while (true) {
                AutoCloseable resource;
                synchronized (this) {
                    if (open.isEmpty()) {
                        return;
                    }
                    resource = open.pop();
                }
                close(resource);
            }
        }

        /** The last resort: stops the database now, whatever still uses it. */
        void closeDatabase() {
            DemoDatabase toClose;
            synchronized (this) {
                toClose = open.remove(database) ? database : null;
            }
            if (toClose != null) {
                close(toClose);
            }
        }

        private static void close(AutoCloseable resource) {
            try {
                resource.close();
            } catch (Exception e) {
                LOG.warn("closing {} failed: {}", resource, e.toString());
            }
        }
    }
}
