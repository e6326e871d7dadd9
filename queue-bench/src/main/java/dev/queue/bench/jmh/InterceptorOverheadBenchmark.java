package dev.queue.bench.jmh;

import dev.queue.api.Delivery;
import dev.queue.api.ManualClock;
import dev.queue.api.Message;
import dev.queue.api.Namespace;
import dev.queue.api.Pull;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.api.observation.QueueInterceptor;
import dev.queue.inmemory.InMemoryQueue;
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

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What the observation point costs: the publish and handler paths with no interceptor (the queue then only checks
 * for null) and with one that does nothing (the price of the calls and their event objects). On the in-memory
 * adapter, where nothing hides the CPU cost; subscribers are dispatched by hand, so a handler runs on the benchmark
 * thread. Run: {@code java -cp queue-bench/target/queue-bench.jar org.openjdk.jmh.Main InterceptorOverheadBenchmark}.
 * publishMany, pullAndAck and handle move 100 messages per operation.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 3)
@Measurement(iterations = 3, time = 5)
@Fork(1)
public class InterceptorOverheadBenchmark {

    /** A registered interceptor that overrides nothing: every default does nothing and returns null. */
    private static final QueueInterceptor NO_OP = new QueueInterceptor() {
    };

    @Param({"none", "noop"})
    public String interceptor;

    private InMemoryQueue queue;
    private Namespace ns;
    private final Message one = Message.to("bench").json("{\"order\":1,\"amount\":4200}");
    private final List<Message> hundred = new ArrayList<>();
    private final List<Message> hundredHandled = new ArrayList<>();

    @Setup(Level.Trial)
    public void messages() {
        for (int i = 0; i < 100; i++) {
            hundred.add(Message.to("bench").json("{\"order\":" + i + ",\"amount\":4200}"));
            hundredHandled.add(Message.to("handled").json("{\"order\":" + i + ",\"amount\":4200}"));
        }
    }

    /** Each iteration starts from an empty queue, so publish-only benchmarks do not measure a growing backlog. */
    @Setup(Level.Iteration)
    public void freshQueue() {
        QueueOptions options = QueueOptions.defaults().scheduleTickInterval(Duration.ZERO);
        if (interceptor.equals("noop")) {
            options = options.interceptor(NO_OP);
        }
        queue = InMemoryQueue.withClock(ManualClock.startingNow(), options);
        ns = queue.namespace("jmh");
        ns.subscribe(Subscriber.on("handled").concurrency(100).handleDelivery((delivery, context) -> { }));
    }

    @TearDown(Level.Iteration)
    public void closeQueue() {
        queue.close();
    }

    @Benchmark
    public Object publishOne() {
        Object result = ns.publish(one);
        queue.clearPublished();
        return result;
    }

    @Benchmark
    public Object publishMany() {
        Object result = ns.publishAll(hundred);
        queue.clearPublished();
        return result;
    }

    /** Claims and acknowledges by hand: interceptors hear of the publish only (pulls are not handler runs). */
    @Benchmark
    public Object pullAndAck() {
        ns.publishAll(hundred);
        queue.clearPublished();
        List<Delivery> got = ns.pull(Pull.from("bench").worker("jmh").limit(100));
        return ns.ackAll(got);
    }

    /** Publishes 100 to a subscribed topic and runs their handlers: claim, handle and complete, observed or not. */
    @Benchmark
    public int handle() {
        ns.publishAll(hundredHandled);
        queue.clearPublished();
        return queue.runDue();
    }
}
