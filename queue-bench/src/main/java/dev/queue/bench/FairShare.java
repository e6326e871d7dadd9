package dev.queue.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.Namespace;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import dev.queue.postgres.PostgresQueue;
import dev.queue.postgres.PostgresQueueConfig;
import org.HdrHistogram.Histogram;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Fair share between namespaces: one process subscribes the same topic in a namespace holding a large backlog and
 * in a quiet one; while the busy namespace's backlog drains at full speed, bursts of messages are published to the
 * quiet one, and the time from each one's publish to its handler's start is recorded. Prints progress to stderr
 * and one JSON object on its own line.
 */
@Command(name = "queue-bench-fair-share", mixinStandardHelpOptions = true,
        description = "Measures how soon a quiet namespace's messages start while another namespace drains a large backlog.")
public final class FairShare implements Callable<Integer> {

    private static final String SCHEMA = "queue_bench_fair";
    private static final String TOPIC = "work";

    @Option(names = "--database-url", description = "JDBC URL with credentials; default: an embedded PostgreSQL")
    private String databaseUrl;

    @Option(names = "--backlog", description = "pending messages of the busy namespace, published before the subscribers start", defaultValue = "1000000")
    private int backlog;

    @Option(names = "--burst", description = "messages published to the quiet namespace in each burst", defaultValue = "100")
    private int burst;

    @Option(names = "--bursts", description = "bursts, one every --burst-gap-ms while the backlog drains", defaultValue = "5")
    private int bursts;

    @Option(names = "--burst-gap-ms", description = "pause between bursts", defaultValue = "2000")
    private int burstGapMs;

    @Option(names = "--concurrency", description = "handler slots of each subscription", defaultValue = "100")
    private int concurrency;

    @Option(names = "--pool", description = "connections of the process's pool", defaultValue = "8")
    private int pool;

    private final AtomicLong busyHandled = new AtomicLong();
    private final Map<MessageId, Long> quietPublishedAt = new ConcurrentHashMap<>();
    private final Map<MessageId, Long> quietStartedAt = new ConcurrentHashMap<>();

    public static void main(String[] args) {
        System.exit(new CommandLine(new FairShare()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        if (backlog < 1 || burst < 1 || bursts < 1 || burstGapMs < 0) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--backlog, --burst and --bursts must be 1 or more and "
                    + "--burst-gap-ms 0 or more, got " + backlog + ", " + burst + ", " + bursts + " and " + burstGapMs);
        }
        try (BenchDatabase db = BenchDatabase.open(databaseUrl)) {
            String version = db.serverVersion();
            EndToEnd.log("PostgreSQL %s (%s)", version, db.embedded() ? "embedded" : "external");
            db.dropSchema(SCHEMA);
            HikariConfig hikari = new HikariConfig();
            hikari.setJdbcUrl(db.url());
            hikari.setMaximumPoolSize(pool);
            hikari.setMinimumIdle(pool);
            hikari.setPoolName("fair-share");
            try (HikariDataSource dataSource = new HikariDataSource(hikari);
                 PostgresQueue queue = PostgresQueue.create(dataSource, db.dataSource(), PostgresQueueConfig.defaults().schema(SCHEMA))) {
                Namespace busy = queue.namespace("busy");
                Namespace quiet = queue.namespace("quiet");
                fill(busy);
                long busyBefore;
                Histogram startDelay = new Histogram(3_600_000_000L, 3);
                List<Double> burstMaxMillis = new ArrayList<>();
                try (Subscription busySubscription = busy.subscribe(Subscriber.on(TOPIC).concurrency(concurrency).worker("busy")
                        .handleDelivery((delivery, ctx) -> busyHandled.incrementAndGet()));
                     Subscription quietSubscription = quiet.subscribe(Subscriber.on(TOPIC).concurrency(concurrency).worker("quiet")
                             .handleDelivery((delivery, ctx) -> quietStartedAt.putIfAbsent(delivery.id(), System.nanoTime())))) {
                    while (busyHandled.get() < Math.min(backlog / 10, 50_000)) {
                        Thread.sleep(50);
                    }
                    busyBefore = busyHandled.get();
                    long measureStart = System.nanoTime();
                    for (int b = 0; b < bursts; b++) {
                        List<MessageId> ids = publishBurst(quiet, b);
                        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                        while (!quietStartedAt.keySet().containsAll(ids) && System.nanoTime() < deadline) {
                            Thread.sleep(1);
                        }
                        long burstMax = 0;
                        for (MessageId id : ids) {
                            Long started = quietStartedAt.get(id);
                            long delay = started == null ? Duration.ofSeconds(60).toNanos() : started - quietPublishedAt.get(id);
                            startDelay.recordValue(Math.max(1, delay / 1_000));
                            burstMax = Math.max(burstMax, delay);
                        }
                        burstMaxMillis.add(burstMax / 1e6);
                        EndToEnd.log("burst %d: last of %d started %.1f ms after its publish; busy namespace handled %d so far",
                                b + 1, burst, burstMax / 1e6, busyHandled.get());
                        Thread.sleep(burstGapMs);
                    }
                    double seconds = (System.nanoTime() - measureStart) / 1e9;
                    double busyRate = (busyHandled.get() - busyBefore) / seconds;
                    long busyLeft = backlog - busyHandled.get();
                    StringBuilder maxes = new StringBuilder("[");
                    for (Double value : burstMaxMillis) {
                        maxes.append(maxes.length() > 1 ? "," : "").append(String.format(Locale.ROOT, "%.1f", value));
                    }
                    maxes.append(']');
                    System.out.println(String.format(Locale.ROOT,
                            "{\"backlog\":%d,\"burst\":%d,\"bursts\":%d,\"start_delay_p50_ms\":%.3f,\"start_delay_p99_ms\":%.3f,"
                                    + "\"start_delay_max_ms\":%.3f,\"burst_max_ms\":%s,\"busy_handled_per_s\":%.1f,\"busy_left\":%d,"
                                    + "\"concurrency\":%d,\"pool\":%d,\"postgres_version\":\"%s\"}",
                            backlog, burst, bursts, startDelay.getValueAtPercentile(50) / 1000.0,
                            startDelay.getValueAtPercentile(99) / 1000.0, startDelay.getMaxValue() / 1000.0, maxes, busyRate,
                            busyLeft, concurrency, pool, version.replace("\"", "")));
                    if (!busySubscription.isRunning() || !quietSubscription.isRunning()) {
                        throw new IllegalStateException("a subscription stopped during the run");
                    }
                }
            }
            return 0;
        }
    }

    /** Publishes one burst to the quiet namespace, one message per publish, recording each one's publish start. */
    private List<MessageId> publishBurst(Namespace quiet, int round) {
        List<MessageId> ids = new ArrayList<>();
        for (int i = 0; i < burst; i++) {
            long before = System.nanoTime();
            MessageId id = quiet.publish(Message.to(TOPIC).json("{\"burst\":" + round + ",\"n\":" + i + "}")).id();
            quietPublishedAt.put(id, before);
            ids.add(id);
        }
        return ids;
    }

    private void fill(Namespace busy) throws InterruptedException {
        EndToEnd.log("publishing a backlog of %d messages to the busy namespace", backlog);
        AtomicLong remaining = new AtomicLong(backlog);
        List<Thread> fillers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            Thread thread = new Thread(() -> {
                long left;
                while ((left = remaining.addAndGet(-1000)) > -1000) {
                    int size = (int) Math.min(1000, left + 1000);
                    List<Message> batch = new ArrayList<>(size);
                    for (int i = 0; i < size; i++) {
                        batch.add(Message.to(TOPIC).json("{\"n\":" + i + "}"));
                    }
                    busy.publishAll(batch);
                }
            }, "fair-share-fill-" + t);
            fillers.add(thread);
            thread.start();
        }
        for (Thread thread : fillers) {
            thread.join();
        }
    }
}
