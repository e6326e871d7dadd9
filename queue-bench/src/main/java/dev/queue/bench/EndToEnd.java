package dev.queue.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.queue.api.Delivery;
import dev.queue.api.Message;
import dev.queue.api.Namespace;
import dev.queue.api.PublishResult;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import dev.queue.api.TopicLimits;
import dev.queue.postgres.PostgresQueue;
import dev.queue.postgres.PostgresQueueConfig;
import org.HdrHistogram.Histogram;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The end-to-end runner: producers publish while subscribers with no-op handlers consume, for a duration;
 * before that, the raw SQL ceiling of the same lifecycle is measured on the same server. Prints progress to
 * stderr and, last, one JSON object on its own line.
 */
@Command(name = "queue-bench", mixinStandardHelpOptions = true,
        description = "Measures end-to-end throughput and publish-to-handler latency of the PostgreSQL queue against the raw SQL ceiling.")
public final class EndToEnd implements Callable<Integer> {

    private static final String SCHEMA = "queue_bench";
    private static final String NAMESPACE = "bench";
    private static final String TOPIC = "bench";

    @Option(names = "--database-url", description = "JDBC URL with credentials; default: an embedded PostgreSQL")
    String databaseUrl;

    @Option(names = "--mode", description = "bulk (batches per transaction) or single (one message per transaction)", defaultValue = "bulk")
    String mode;

    @Option(names = "--duration", description = "measured seconds", defaultValue = "60")
    int durationSeconds;

    @Option(names = "--warmup", description = "least seconds before measuring; the warm-up then goes on until the JIT compilers "
            + "have compiled for less than 1%% of a core over 10 s (see --warmup-max)", defaultValue = "30")
    int warmupSeconds;

    @Option(names = "--warmup-max", description = "most seconds of warm-up while the JIT compilers are still busy; on two cores "
            + "they take about 100 s, and a minute measured before they are done reports them more than the queue. "
            + "Equal to --warmup for a fixed warm-up", defaultValue = "180")
    int warmupMaxSeconds;

    @Option(names = "--rate", description = "offered messages per second in total; 0 = as fast as possible", defaultValue = "0")
    int rate;

    @Option(names = "--backlog", description = "pending messages published before the run", defaultValue = "0")
    int backlog;

    @Option(names = "--ordering-keys", description = "publish every message (the backlog's too) with the ordering key "
            + "k<i %% N>, i counting the messages published (0: no keys); the handlers count overlaps and out-of-order "
            + "starts within a key (key_overlaps, key_out_of_order)", defaultValue = "0")
    int orderingKeys;

    @Option(names = "--producers", description = "publishing threads (default: 4 in bulk mode, 16 in single mode)")
    Integer producers;

    @Option(names = "--batch", description = "messages per publish in bulk mode", defaultValue = "100")
    int batch;

    @Option(names = "--max-backlog", description = "producers pause while this many published messages wait unhandled "
            + "(0: never), so the sustained end-to-end rate is measured rather than how fast a backlog grows", defaultValue = "20000")
    long maxBacklog;

    @Option(names = "--vacuum-interval", description = "seconds between the queue's own hot-table vacuum checks; 0: autovacuum only",
            defaultValue = "2")
    int vacuumIntervalSeconds;

    @Option(names = "--notify-window-ms", description = "publisher-side wake-up window in ms; 0: notify on every publish",
            defaultValue = "2")
    int notifyWindowMs;

    @Option(names = "--mark-poll-ms", description = "where LISTEN delivers nothing (a --database-url through a transaction "
            + "pooler), how often subscribers read the wake marks, in ms; 0: off (the full poll only)", defaultValue = "20")
    int markPollMs;

    @Option(names = "--replicas", description = "subscriber stacks, each with its own pool", defaultValue = "2")
    int replicas;

    @Option(names = "--concurrency", description = "handler slots per replica", defaultValue = "100")
    int concurrency;

    @Option(names = "--pool", description = "connections per replica", defaultValue = "4")
    int pool;

    @Option(names = "--ceiling-seconds", description = "seconds to measure the raw SQL ceiling; 0 skips it", defaultValue = "15")
    int ceilingSeconds;

    @Option(names = "--ceiling-only", description = "measure the raw SQL ceiling alone, minute by minute, and skip the queue: with a long "
            + "--ceiling-seconds it shows how steadily the server and the host run the same work without the queue")
    boolean ceilingOnly;

    @Option(names = "--statements", description = "print the statements that took the most server time (pg_stat_statements)")
    boolean statements;

    @Option(names = "--durable-acks", description = "claims and acknowledgements wait for their commit to be flushed, in the queue "
            + "(PostgresQueueConfig.durableAcknowledgements) and in the ceiling alike; by default neither waits")
    boolean durableAcks;

    @Option(names = "--hold-horizon-at", description = "seconds into the measured window at which a transaction of the bench's "
            + "own starts pinning the vacuum horizon (with --hold-horizon-for); the JSON line then reports throughput and p99 "
            + "before, during and after the hold, and the dead row versions when it ends")
    Integer holdHorizonAt;

    @Option(names = "--hold-horizon-for", description = "seconds the horizon stays pinned (with --hold-horizon-at)")
    Integer holdHorizonFor;

    @Option(names = "--concurrency-limit", description = "set a fleet-wide limit of this many running messages on the bench's "
            + "topic before the run (FlowControl.setLimits, docs/flow-control.md), to compare with a run without; the JSON line "
            + "says whether the most handlers seen running at once (peak_running) stayed within it")
    Integer concurrencyLimit;

    @Option(names = "--rate-limit", description = "set a fleet-wide rate limit of this many starts per second on the bench's "
            + "topic before the run (a token bucket of a second's starts), to compare with a run without")
    Integer rateLimit;

    @Option(names = "--handler-ms", description = "each handler waits this many milliseconds before it returns, as one waiting "
            + "on a remote call does; 0: no-op handlers", defaultValue = "0")
    int handlerMillis;

    @Option(names = "--as-app-role", description = "run the queue as the application role, with row-level security in force: "
            + "after migrating as the server's user, CALL setup_roles() and log the pools (and the LISTEN connections) in as "
            + "a role of their own that is a member of " + SCHEMA + "_app; migrations, queue policies and the VACUUM stay "
            + "with the server's user (PostgresQueue's admin DataSource). The raw SQL ceiling runs as the server's user")
    boolean asAppRole;

    @Option(names = "--timeseries", description = "write per-second throughput, latency and the CPU share stolen by the host to this CSV file")
    Path timeseries;

    private final AtomicLong handled = new AtomicLong();
    /** Handler runs of a message that ran before (attempt above 1): the handlers never fail, so each is a repeat. */
    private final AtomicLong repeated = new AtomicLong();
    private final AtomicLong published = new AtomicLong();
    /** Counts the messages given an ordering key, so keys go round k0..k(N-1) across producers. */
    private final AtomicLong keyed = new AtomicLong();
    private final LatencyBook latency = new LatencyBook();
    /** Set once the options are known, before the first handler runs. */
    private HandlerWatch watch;
    private volatile boolean producing = true;

    public static void main(String[] args) {
        System.exit(new CommandLine(new EndToEnd()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        boolean bulk = switch (mode) {
            case "bulk" -> true;
            case "single" -> false;
            default -> throw new CommandLine.ParameterException(new CommandLine(this), "--mode must be bulk or single, got: " + mode);
        };
        if (warmupSeconds < 0 || warmupMaxSeconds < warmupSeconds) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--warmup must be 0 or more and --warmup-max at least "
                    + "--warmup, got --warmup " + warmupSeconds + " and --warmup-max " + warmupMaxSeconds);
        }
        if ((holdHorizonAt == null) != (holdHorizonFor == null) || (holdHorizonAt != null
                && (holdHorizonAt < 1 || holdHorizonFor < 1 || holdHorizonAt + holdHorizonFor >= durationSeconds))) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--hold-horizon-at and --hold-horizon-for go together, "
                    + "each 1 or more, ending before the measured --duration, got " + holdHorizonAt + " and " + holdHorizonFor
                    + " with --duration " + durationSeconds);
        }
        if (orderingKeys < 0) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--ordering-keys must be 0 (none) or more, got "
                    + orderingKeys);
        }
        int producerThreads = producers != null ? producers : (bulk ? 4 : 16);
        watch = new HandlerWatch(orderingKeys);
        try (BenchDatabase db = BenchDatabase.open(databaseUrl)) {
            String version = db.serverVersion();
            log("PostgreSQL %s (%s), synchronous_commit=%s", version, db.embedded() ? "embedded" : "external", db.setting("synchronous_commit"));
            double ceiling = 0;
            double ceilingSteal = -1;
            settle(db);
            if (ceilingOnly && ceilingSeconds <= 0) {
                throw new CommandLine.ParameterException(new CommandLine(this), "--ceiling-only needs --ceiling-seconds above 0, got: " + ceilingSeconds);
            }
            if (ceilingSeconds > 0) {
                log("measuring the raw SQL ceiling for %d s (%d producer and %d consumer connections)", ceilingSeconds, producerThreads,
                        replicas * pool);
                HostCpu.Sample ceilingStart = HostCpu.sample();
                Ceiling raw = new Ceiling(db, producerThreads, replicas * pool, bulk, batch, maxBacklog, durableAcks);
                List<Double> minuteProbe = new ArrayList<>();
                try (SpeedProbe probe = new SpeedProbe(5_000)) {
                    ceiling = raw.measure(ceilingSeconds);
                    long from = probe.sinceStart(raw.measureStartNanos());
                    for (int minute = 1; minute <= raw.minuteMeans().size(); minute++) {
                        minuteProbe.add(probe.medianMillis(from + (minute - 1) * 60_000_000_000L, from + minute * 60_000_000_000L));
                    }
                }
                HostCpu.Sample ceilingEnd = HostCpu.sample();
                ceilingSteal = ceilingStart == null || ceilingEnd == null ? -1 : ceilingEnd.stealPercentSince(ceilingStart);
                log("ceiling: %.0f messages/s (CPU stolen by the host: %.1f%%)", ceiling, ceilingSteal);
                if (ceilingOnly) {
                    System.out.println(String.format(Locale.ROOT,
                            "{\"mode\":\"%s\",\"ceiling_only\":true,\"max_backlog\":%d,\"duration_s\":%d,\"ceiling_per_s\":%.1f,"
                                    + "\"ceiling_minutes_per_s\":%s,\"ceiling_minutes_steal_pct\":%s,\"ceiling_minutes_probe_ms\":%s,"
                                    + "\"ceiling_steal_pct\":%.1f,\"producers\":%d,\"consumers\":%d,\"durable_acks\":%b,\"postgres_version\":\"%s\"}",
                            mode, maxBacklog, ceilingSeconds, ceiling, jsonArray(raw.minuteMeans()), jsonArray(raw.minuteSteal()),
                            jsonArray(minuteProbe), ceilingSteal, producerThreads, replicas * pool, durableAcks, version.replace("\"", "")));
                    return 0;
                }
            }
            db.dropSchema(SCHEMA);
            if (ceilingSeconds > 0) {
                settle(db);
            }
            if (statements) {
                db.resetStatements();
            }
            Result result = runQueue(db, bulk, producerThreads);
            if (statements) {
                log("top statements by server time:%n%s", db.topStatements(12));
            }
            long deadTuples = db.deadTuples(SCHEMA);
            Histogram total = latency.total();
            double ratio = ceiling > 0 ? result.throughput / ceiling : 0;
            String peakWithinLimit = concurrencyLimit == null ? "null" : Boolean.toString(watch.peakRunning() <= concurrencyLimit);
            log("handlers: at most %d running at once in the fleet%s", watch.peakRunning(), concurrencyLimit == null ? ""
                    : String.format(Locale.ROOT, ", limit %d: %s", concurrencyLimit,
                    watch.peakRunning() <= concurrencyLimit ? "within it" : "EXCEEDED"));
            if (orderingKeys > 0) {
                log("ordering keys (%d): %d overlaps, %d out of order, at most %d of a key running at once", orderingKeys,
                        watch.keyOverlaps(), watch.keyOutOfOrder(), watch.peakRunningOfAKey());
            }
            String json = String.format(Locale.ROOT,
                    "{\"mode\":\"%s\",\"max_backlog\":%d,\"duration_s\":%d,\"messages\":%d,\"published\":%d,\"throughput_per_s\":%.1f,\"ceiling_per_s\":%.1f,"
                            + "\"ratio\":%.3f,\"latency_p50_ms\":%.3f,\"latency_p90_ms\":%.3f,\"latency_p99_ms\":%.3f,\"latency_max_ms\":%.3f,"
                            + "\"offered_rate_per_s\":%d,\"backlog\":%d,\"producers\":%d,\"replicas\":%d,\"concurrency\":%d,"
                            + "\"first_minute_per_s\":%.1f,\"last_minute_per_s\":%.1f,\"minutes_per_s\":%s,\"steal_pct\":%.1f,"
                            + "\"minutes_steal_pct\":%s,\"minutes_probe_ms\":%s,\"ceiling_steal_pct\":%.1f,\"dead_tuples\":%d,"
                            + "\"repeated_runs\":%d,\"durable_acks\":%b,\"warmup_s\":%.1f,\"minutes_jit_ms\":%s,\"hold\":%s,"
                            + "\"as_app_role\":%b,\"concurrency_limit\":%s,\"rate_limit_per_s\":%s,\"ordering_keys\":%d,\"handler_ms\":%d,"
                            + "\"peak_running\":%d,\"peak_within_limit\":%s,\"key_overlaps\":%s,\"key_out_of_order\":%s,"
                            + "\"key_peak_running\":%s,\"postgres_version\":\"%s\"}",
                    mode, maxBacklog, durationSeconds, result.handled, result.published, result.throughput, ceiling, ratio,
                    total.getValueAtPercentile(50) / 1000.0, total.getValueAtPercentile(90) / 1000.0,
                    total.getValueAtPercentile(99) / 1000.0, total.getMaxValue() / 1000.0, rate, backlog, producerThreads, replicas,
                    concurrency, result.firstMinute, result.lastMinute, jsonArray(result.minuteMeans), result.steal,
                    jsonArray(result.minuteSteal), jsonArray(result.minuteProbe), ceilingSteal, deadTuples, repeated.get(),
                    durableAcks, result.warmupSeconds, jsonArray(result.minuteJitMillis), result.holdJson, asAppRole,
                    concurrencyLimit == null ? "null" : concurrencyLimit.toString(),
                    rateLimit == null ? "null" : rateLimit.toString(), orderingKeys, handlerMillis, watch.peakRunning(), peakWithinLimit,
                    orderingKeys == 0 ? "null" : Long.toString(watch.keyOverlaps()),
                    orderingKeys == 0 ? "null" : Long.toString(watch.keyOutOfOrder()),
                    orderingKeys == 0 ? "null" : Integer.toString(watch.peakRunningOfAKey()), version.replace("\"", ""));
            System.out.println(json);
            return 0;
        }
    }

    /**
     * steal: the percentage of CPU time the host took during the measured period, -1 where it cannot be read;
     * minuteMeans, minuteSteal and minuteProbe: handled per second, steal, and the median CPU milliseconds of the
     * {@link SpeedProbe} in each whole minute measured.
     */
    private record Result(long handled, long published, double throughput, double firstMinute, double lastMinute,
                          List<Double> minuteMeans, double steal, List<Double> minuteSteal, List<Double> minuteProbe,
                          double warmupSeconds, List<Double> minuteJitMillis, String holdJson) {
    }

    private static String jsonArray(List<Double> values) {
        StringBuilder s = new StringBuilder("[");
        for (Double value : values) {
            s.append(s.length() > 1 ? "," : "").append(String.format(Locale.ROOT, "%.1f", value));
        }
        return s.append(']').toString();
    }

    /** The login of the queue's pools with --as-app-role, null without. */
    private BenchDatabase.Login appLogin;

    private HikariDataSource pool(BenchDatabase db, int size, String name) {
        HikariConfig config = new HikariConfig();
        if (appLogin != null) {
            config.setJdbcUrl(appLogin.url());
            config.setUsername(appLogin.user());
            config.setPassword(appLogin.password());
        } else {
            config.setJdbcUrl(db.url());
        }
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(size);
        config.setPoolName(name);
        return new HikariDataSource(config);
    }

    /** A queue on the pool; with --as-app-role its LISTEN connection logs in as the app login too. */
    private PostgresQueue queue(BenchDatabase db, HikariDataSource pool, PostgresQueueConfig config) {
        if (appLogin == null) {
            return PostgresQueue.create(pool, db.dataSource(), config);
        }
        try (java.sql.Connection c = pool.getConnection(); java.sql.Statement st = c.createStatement();
             java.sql.ResultSet rs = st.executeQuery("SELECT session_user::text")) {
            rs.next();
            if (!appLogin.user().equals(rs.getString(1))) {
                throw new IllegalStateException("--as-app-role: the pool logged in as " + rs.getString(1) + ", not " + appLogin.user());
            }
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException("--as-app-role: cannot log in as " + appLogin.user(), e);
        }
        return PostgresQueue.create(pool, appLogin.dataSource(), db.dataSource(), config);
    }

    private Result runQueue(BenchDatabase db, boolean bulk, int producerThreads) throws Exception {
        QueueOptions options = QueueOptions.defaults().defaultMaxAttempts(3);
        PostgresQueueConfig config = PostgresQueueConfig.defaults().schema(SCHEMA).queueOptions(options)
                .vacuumInterval(Duration.ofSeconds(vacuumIntervalSeconds)).notifyWindow(Duration.ofMillis(notifyWindowMs))
                .markPollInterval(Duration.ofMillis(markPollMs)).durableAcknowledgements(durableAcks);
        List<AutoCloseable> resources = new ArrayList<>();
        if (asAppRole) {
            // the schema's owner migrates and sets up the roles; the queue's pools log in as a member of the app role
            PostgresQueue.create(db.dataSource(), PostgresQueueConfig.defaults().schema(SCHEMA).listen(false)
                    .vacuumInterval(Duration.ZERO)).close();
            appLogin = db.appLogin(SCHEMA);
            log("as role %s (a member of %s_app): the engine's gates and row-level security in force", appLogin.user(), SCHEMA);
        }
        try {
            HikariDataSource producerPool = pool(db, producerThreads, "bench-producers");
            resources.add(producerPool);
            PostgresQueue producerQueue = queue(db, producerPool, config);
            resources.add(0, producerQueue);
            Namespace producerNs = producerQueue.namespace(NAMESPACE);
            applyLimits(producerNs);
            if (backlog > 0) {
                fillBacklog(producerNs);
                settle(db);
            }
            List<Subscription> subscriptions = new ArrayList<>();
            for (int r = 0; r < replicas; r++) {
                HikariDataSource replicaPool = pool(db, pool, "bench-replica-" + r);
                resources.add(replicaPool);
                PostgresQueue replica = queue(db, replicaPool, config);
                resources.add(0, replica);
                subscriptions.add(replica.namespace(NAMESPACE).subscribe(Subscriber.on(TOPIC).concurrency(concurrency)
                        .worker("bench-" + r).handleDelivery((delivery, ctx) -> onHandle(delivery))));
            }
            List<Thread> producerList = new ArrayList<>();
            long paceOrigin = System.nanoTime();
            for (int p = 0; p < producerThreads; p++) {
                int index = p;
                Thread t = new Thread(() -> produce(producerNs, bulk, producerThreads, index, paceOrigin), "bench-producer-" + p);
                t.setDaemon(true);
                producerList.add(t);
                t.start();
            }
            // Started with the warm-up, so that its own loop is compiled before the first measured minute: probes
            // taken while it still ran interpreted made the first minute's machine look slower than it was.
            SpeedProbe probe = new SpeedProbe(5_000);
            resources.add(0, probe);
            JitWatch jit = new JitWatch();
            double warmedUp = warmUp(jit);
            long jitLastMinute = jit.compileMillis();
            List<Double> minuteJit = new ArrayList<>();
            latency.reset();
            HorizonHold hold = holdHorizonAt == null ? null : new HorizonHold(db, SCHEMA, holdHorizonAt, holdHorizonFor);
            if (hold != null) {
                resources.add(0, hold);
            }
            long startHandled = handled.get();
            long startPublished = published.get();
            long start = System.nanoTime();
            List<Double> perSecond = new ArrayList<>();
            List<Double> minuteMeans = new ArrayList<>();
            List<Double> minuteSteal = new ArrayList<>();
            List<Double> minuteProbe = new ArrayList<>();
            long probeStart = probe.elapsedNanos();
            HostCpu.Sample cpuAtStart = HostCpu.sample();
            HostCpu.Sample cpuLastSecond = cpuAtStart;
            HostCpu.Sample cpuLastMinute = cpuAtStart;
            try (PrintWriter csv = timeseries == null ? null : new PrintWriter(Files.newBufferedWriter(timeseries))) {
                if (csv != null) {
                    csv.println("second,handled_per_s,published_per_s,p50_ms,p99_ms,steal_pct");
                }
                long last = startHandled;
                long lastPublished = startPublished;
                for (int second = 1; second <= durationSeconds; second++) {
                    long target = start + second * 1_000_000_000L;
                    while (System.nanoTime() < target) {
                        LockSupport.parkNanos(Math.max(1, Math.min(target - System.nanoTime(), 50_000_000L)));
                    }
                    long now = handled.get();
                    long nowPublished = published.get();
                    Histogram h = latency.takeInterval();
                    HostCpu.Sample cpu = HostCpu.sample();
                    double steal = cpu == null || cpuLastSecond == null ? -1 : cpu.stealPercentSince(cpuLastSecond);
                    cpuLastSecond = cpu;
                    perSecond.add((double) (now - last));
                    if (hold != null) {
                        hold.secondDone(second, now - last, h);
                    }
                    if (second % 60 == 0) {
                        minuteMeans.add(perSecond.subList(second - 60, second).stream().mapToDouble(Double::doubleValue).average().orElse(0));
                        minuteSteal.add(cpu == null || cpuLastMinute == null ? -1 : cpu.stealPercentSince(cpuLastMinute));
                        minuteProbe.add(probe.medianMillis(probeStart + (second - 60) * 1_000_000_000L, probeStart + second * 1_000_000_000L));
                        long jitNow = jit.compileMillis();
                        minuteJit.add(jitNow < 0 ? -1.0 : jitNow - jitLastMinute);
                        jitLastMinute = jitNow;
                        cpuLastMinute = cpu;
                    }
                    String line = String.format(Locale.ROOT, "%d,%d,%d,%.3f,%.3f,%.1f", second, now - last, nowPublished - lastPublished,
                            h.getValueAtPercentile(50) / 1000.0, h.getValueAtPercentile(99) / 1000.0, steal);
                    if (csv != null) {
                        csv.println(line);
                    }
                    if (second % 5 == 0 || second == durationSeconds) {
                        log("t=%3ds handled/s=%d published/s=%d p50=%.2fms p99=%.2fms steal=%.1f%%", second, now - last,
                                nowPublished - lastPublished, h.getValueAtPercentile(50) / 1000.0, h.getValueAtPercentile(99) / 1000.0, steal);
                    }
                    last = now;
                    lastPublished = nowPublished;
                }
            }
            double elapsed = (System.nanoTime() - start) / 1e9;
            HostCpu.Sample cpuAtEnd = HostCpu.sample();
            double steal = cpuAtStart == null || cpuAtEnd == null ? -1 : cpuAtEnd.stealPercentSince(cpuAtStart);
            long measuredHandled = handled.get() - startHandled;
            long measuredPublished = published.get() - startPublished;
            latency.takeInterval();
            latency.stop();
            producing = false;
            for (Thread t : producerList) {
                t.join(10_000);
            }
            for (Subscription s : subscriptions) {
                s.close(Duration.ofSeconds(10));
            }
            int window = Math.min(60, perSecond.size());
            double first = perSecond.subList(0, window).stream().mapToDouble(Double::doubleValue).average().orElse(0);
            double lastMinute = perSecond.subList(perSecond.size() - window, perSecond.size()).stream().mapToDouble(Double::doubleValue)
                    .average().orElse(0);
            probe.close();
            if (hold != null) {
                log("%s", hold.afterSummary());
            }
            return new Result(measuredHandled, measuredPublished, measuredHandled / elapsed, first, lastMinute, minuteMeans, steal,
                    minuteSteal, minuteProbe, warmedUp, minuteJit, hold == null ? "null" : hold.json());
        } finally {
            for (AutoCloseable resource : resources) {
                try {
                    resource.close();
                } catch (Exception e) {
                    log("closing %s failed: %s", resource, e);
                }
            }
        }
    }

    private void onHandle(Delivery delivery) {
        // Unkeyed runs skip the key's Optional and its parsing: the no-op path pays two atomics for the peak.
        int key = orderingKeys == 0 ? HandlerWatch.NO_KEY : watch.keyNumber(delivery.orderingKey().orElse(null));
        watch.started(delivery.id().value(), key);
        try {
            handled.incrementAndGet();
            if (delivery.attempt() > 1) {
                repeated.incrementAndGet();
            }
            if (!delivery.headers().containsKey("backlog")) {
                latency.started(delivery.id().value());
            }
            if (handlerMillis > 0) {
                try {
                    Thread.sleep(handlerMillis);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        } finally {
            watch.finished(key);
        }
    }

    /** The limits of --concurrency-limit and --rate-limit on the topic, or none (a run before may have left some). */
    private void applyLimits(Namespace ns) {
        TopicLimits limits = TopicLimits.none();
        if (concurrencyLimit != null) {
            limits = limits.withMaxRunning(concurrencyLimit);
        }
        if (rateLimit != null) {
            limits = limits.withRate(rateLimit, Duration.ofSeconds(1));
        }
        if (limits.isNone()) {
            ns.flowControl().clearLimits(TOPIC);
        } else {
            ns.flowControl().setLimits(TOPIC, limits);
            log("limits on topic %s: %s", TOPIC, limits);
        }
    }

    /** The messages with the next ordering keys (--ordering-keys), or as they are without. */
    private List<Message> withKeys(List<Message> messages) {
        if (orderingKeys == 0) {
            return messages;
        }
        long first = keyed.getAndAdd(messages.size());
        List<Message> keyedMessages = new ArrayList<>(messages.size());
        for (int i = 0; i < messages.size(); i++) {
            keyedMessages.add(messages.get(i).orderingKey("k" + ((first + i) % orderingKeys)));
        }
        return keyedMessages;
    }

    private void fillBacklog(Namespace ns) throws InterruptedException {
        log("publishing a backlog of %d messages", backlog);
        int threads = 4;
        List<Thread> fillers = new ArrayList<>();
        AtomicLong remaining = new AtomicLong(backlog);
        for (int t = 0; t < threads; t++) {
            Thread thread = new Thread(() -> {
                List<Message> batchOf = new ArrayList<>();
                for (int i = 0; i < 1000; i++) {
                    batchOf.add(Message.to(TOPIC).json("{\"n\":" + i + "}").header("backlog", "1"));
                }
                long left;
                while ((left = remaining.addAndGet(-1000)) > -1000) {
                    int n = (int) Math.min(1000, left + 1000);
                    ns.publishAll(withKeys(batchOf.subList(0, n)));
                }
            });
            fillers.add(thread);
            thread.start();
        }
        for (Thread t : fillers) {
            t.join();
        }
        // Counted as published, so the producers' bound below holds the queue near backlog + max-backlog pending
        // while the subscribers work through it, as in a run without a backlog, rather than letting the producers
        // run unchecked until a second backlog has piled up.
        published.addAndGet(backlog);
        log("backlog of %d pending", ns.stats().pending());
    }

    /**
     * One producer. With {@code --rate} each of the n producers publishes once per interval, its schedule shifted
     * by index/n of an interval from a common origin, so together they offer evenly spaced publishes: with
     * aligned schedules all n would publish at the same instant, a burst of n every interval instead of the
     * fixed load asked for.
     */
    private void produce(Namespace ns, boolean bulk, int producerThreads, int index, long paceOrigin) {
        int perCall = bulk ? batch : 1;
        long intervalNanos = rate > 0 ? (long) (1e9 * perCall * producerThreads / rate) : 0;
        long next = paceOrigin + intervalNanos * index / producerThreads;
        List<Message> messages = new ArrayList<>(perCall);
        for (int i = 0; i < perCall; i++) {
            messages.add(Message.to(TOPIC).json("{\"order\":" + i + ",\"amount\":4200}"));
        }
        while (producing) {
            messages = withKeys(messages);
            while (maxBacklog > 0 && rate == 0 && published.get() - handled.get() >= maxBacklog + backlog && producing) {
                LockSupport.parkNanos(200_000L);
            }
            if (intervalNanos > 0) {
                next += intervalNanos;
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                }
            }
            try {
                if (bulk) {
                    List<PublishResult> results = ns.publishAll(messages);
                    for (PublishResult r : results) {
                        latency.committed(r.id().value());
                    }
                    published.addAndGet(results.size());
                } else {
                    PublishResult r = ns.publish(messages.get(0));
                    latency.committed(r.id().value());
                    published.incrementAndGet();
                }
            } catch (RuntimeException e) {
                if (producing) {
                    log("publish failed: %s", e);
                }
            }
        }
    }

    /** The ceiling and the queue each start right after a checkpoint, neither inheriting the other's. */
    private static void settle(BenchDatabase db) {
        if (!db.checkpoint()) {
            log("CHECKPOINT refused (needs superuser or pg_checkpoint): phases may inherit each other's checkpoints");
        }
    }

    /**
     * At least --warmup seconds, then on until the JIT compilers have gone quiet ({@link JitWatch}), at most
     * --warmup-max seconds in all; returns the seconds it took.
     */
    private double warmUp(JitWatch jit) {
        long start = System.nanoTime();
        waitSeconds(warmupSeconds, "warm-up");
        if (!jit.available() || warmupMaxSeconds <= warmupSeconds) {
            return (System.nanoTime() - start) / 1e9;
        }
        long end = start + warmupMaxSeconds * 1_000_000_000L;
        // one sample a second; the window compares the newest with the one ten seconds older
        ArrayDeque<long[]> samples = new ArrayDeque<>();
        samples.add(new long[] {System.nanoTime(), jit.compileMillis()});
        while (System.nanoTime() < end) {
            LockSupport.parkNanos(1_000_000_000L);
            long[] now = {System.nanoTime(), jit.compileMillis()};
            samples.add(now);
            while (now[0] - samples.peekFirst()[0] > JitWatch.WINDOW_MILLIS * 1_000_000L) {
                samples.removeFirst();
            }
            long[] oldest = samples.peekFirst();
            long windowMillis = (now[0] - oldest[0]) / 1_000_000L;
            if (windowMillis >= JitWatch.WINDOW_MILLIS - 1_000 && JitWatch.settled(now[1] - oldest[1], windowMillis)) {
                double took = (now[0] - start) / 1e9;
                log("warm-up over after %.0f s: the JIT compilers compiled for %d ms in the last %d s", took, now[1] - oldest[1],
                        windowMillis / 1000);
                return took;
            }
        }
        double took = (System.nanoTime() - start) / 1e9;
        log("warm-up cut at --warmup-max %d s with the JIT compilers still busy", warmupMaxSeconds);
        return took;
    }

    private void waitSeconds(int seconds, String what) {
        if (seconds <= 0) {
            return;
        }
        log("%s for %d s", what, seconds);
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        while (System.nanoTime() < end) {
            LockSupport.parkNanos(50_000_000L);
        }
    }

    static void log(String format, Object... args) {
        System.err.println(String.format(Locale.ROOT, format, args));
    }
}
