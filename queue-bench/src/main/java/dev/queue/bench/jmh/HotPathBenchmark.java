package dev.queue.bench.jmh;

import dev.queue.api.Delivery;
import dev.queue.api.Message;
import dev.queue.api.Namespace;
import dev.queue.api.Pull;
import dev.queue.api.Queue;
import dev.queue.api.QueueOptions;
import dev.queue.inmemory.InMemoryQueue;
import dev.queue.postgres.PostgresQueue;
import dev.queue.postgres.PostgresQueueConfig;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The hot paths, one operation per invocation, against the in-memory adapter and PostgreSQL (embedded, durable
 * commits). Run: {@code java -cp queue-bench/target/queue-bench.jar org.openjdk.jmh.Main HotPathBenchmark}.
 * Throughput is operations per second; publishMany and claimAndComplete move 100 messages per operation.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 3)
@Measurement(iterations = 3, time = 5)
@Fork(1)
public class HotPathBenchmark {

    @Param({"inmemory", "postgres"})
    public String adapter;

    private EmbeddedPostgres postgres;
    private Queue queue;
    private Namespace ns;
    private final Message one = Message.to("bench").json("{\"order\":1,\"amount\":4200}");
    private final List<Message> hundred = new ArrayList<>();

    @Setup(Level.Trial)
    public void start() throws Exception {
        for (int i = 0; i < 100; i++) {
            hundred.add(Message.to("bench").json("{\"order\":" + i + ",\"amount\":4200}"));
        }
        QueueOptions options = QueueOptions.defaults().scheduleTickInterval(java.time.Duration.ZERO);
        if (adapter.equals("postgres")) {
            postgres = EmbeddedPostgres.builder().setServerConfig("synchronous_commit", "on").start();
            queue = PostgresQueue.create(postgres.getPostgresDatabase(), PostgresQueueConfig.defaults().schema("queue_jmh")
                    .queueOptions(options));
        } else {
            queue = InMemoryQueue.create(options);
        }
        ns = queue.namespace("jmh");
    }

    /** Each iteration starts from an empty queue, so publish-only benchmarks do not measure a growing backlog. */
    @Setup(Level.Iteration)
    public void empty() throws Exception {
        if (postgres != null) {
            try (java.sql.Connection c = postgres.getPostgresDatabase().getConnection();
                 java.sql.Statement s = c.createStatement()) {
                s.execute("TRUNCATE queue_jmh.messages");
            }
        } else {
            queue.close();
            queue = InMemoryQueue.create(QueueOptions.defaults().scheduleTickInterval(java.time.Duration.ZERO));
            ns = queue.namespace("jmh");
        }
    }

    @TearDown(Level.Trial)
    public void stop() throws Exception {
        queue.close();
        if (postgres != null) {
            postgres.close();
        }
    }

    @Benchmark
    public Object publishOne() {
        return ns.publish(one);
    }

    @Benchmark
    public Object publishMany() {
        return ns.publishAll(hundred);
    }

    /** Publishes 100 (not part of the claim path, but keeps the queue supplied), claims them and acknowledges them. */
    @Benchmark
    public Object claimAndComplete() {
        ns.publishAll(hundred);
        List<Delivery> got = ns.pull(Pull.from("bench").worker("jmh").limit(100));
        return ns.ackAll(got);
    }
}
