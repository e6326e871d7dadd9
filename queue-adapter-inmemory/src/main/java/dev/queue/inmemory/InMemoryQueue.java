package dev.queue.inmemory;

import dev.queue.api.InvalidInputException;
import dev.queue.api.ManualClock;
import dev.queue.api.Namespace;
import dev.queue.api.Queue;
import dev.queue.api.QueueOptions;
import dev.queue.api.UnsupportedCapabilityException;
import dev.queue.codec.jackson.JacksonPayloadCodec;
import dev.queue.domain.engine.QueueEngine;
import dev.queue.domain.port.Clock;
import dev.queue.domain.time.ManualTime;
import dev.queue.domain.time.SystemClock;

import java.util.List;

/**
 * A queue in the memory of one process, with the same semantics as the PostgreSQL one: for unit tests of the
 * code that publishes and handles messages, and for running an application without a database. Nothing survives
 * the process.
 *
 * <pre>{@code
 * ManualClock clock = ManualClock.startingNow();
 * InMemoryQueue queue = InMemoryQueue.withClock(clock);
 * queue.defaultNamespace().subscribe(Subscriber.on("order.paid").handle(OrderPaid.class, (order, ctx) -> billing.charge(order)));
 * queue.defaultNamespace().publish("order.paid", new OrderPaid(42));
 * queue.runDue();                         // runs the handler on this thread
 * clock.advance(Duration.ofMinutes(1));   // a retry becomes due
 * queue.runDue();
 * }</pre>
 *
 * Thread-safe. Close it to stop its subscriptions. Its configuration is the {@link QueueOptions} (and the clock) it
 * is made with, validated once by the factory method: a bad option fails there with {@link InvalidInputException}
 * naming it and the value received.
 */
public final class InMemoryQueue implements Queue {

    private final QueueEngine engine;
    private final InMemoryMessageStore store;
    private final ManualClock manualClock;
    private final InMemoryWorkerRegistry workers;

    private final InMemoryScheduleStore schedules;

    private InMemoryQueue(Clock clock, ManualClock manualClock, QueueOptions options, boolean manualDispatch) {
        this(clock, manualClock, options, manualDispatch, null);
    }

    private InMemoryQueue(Clock clock, ManualClock manualClock, QueueOptions options, boolean manualDispatch,
                          InMemoryQueue sharing) {
        InvalidInputException.requireNonNull(options, "options", "QueueOptions, for example QueueOptions.defaults()");
        InMemoryWakeUps wakeUps = sharing == null ? new InMemoryWakeUps() : sharing.store.wakeUps();
        this.store = sharing == null ? new InMemoryMessageStore(clock, wakeUps) : sharing.store;
        this.schedules = sharing == null ? new InMemoryScheduleStore(store) : sharing.schedules;
        this.manualClock = manualClock;
        this.workers = sharing == null ? new InMemoryWorkerRegistry(clock) : sharing.workers;
        this.engine = QueueEngine.builder()
                .store(store)
                .scheduleStore(schedules)
                .wakeUps(wakeUps)
                .clock(clock)
                .options(options)
                .defaultCodec(new JacksonPayloadCodec())
                .manualDispatch(manualDispatch)
                .workerRegistry(workers)
                .build();
    }

    /** On the machine's clock, default options; subscribers run on their own threads. */
    public static InMemoryQueue create() {
        return create(QueueOptions.defaults());
    }

    /** On the machine's clock; subscribers run on their own threads. */
    public static InMemoryQueue create(QueueOptions options) {
        return new InMemoryQueue(SystemClock.authoritative(), null, options, false);
    }

    /**
     * On a manual clock, default options, dispatched by hand: subscriptions start no threads, and
     * {@link #runDue()} runs their handlers on the calling thread.
     */
    public static InMemoryQueue withClock(ManualClock clock) {
        return withClock(clock, QueueOptions.defaults());
    }

    /** On a manual clock, dispatched by hand with {@link #runDue()}. */
    public static InMemoryQueue withClock(ManualClock clock, QueueOptions options) {
        InvalidInputException.requireNonNull(clock, "clock", "a ManualClock, for example ManualClock.startingNow()");
        return new InMemoryQueue(new ManualTime(clock), clock, options, true);
    }

    /** On a manual clock, with subscribers on their own threads (as the contract tests run adapters). */
    public static InMemoryQueue threaded(ManualClock clock, QueueOptions options) {
        InvalidInputException.requireNonNull(clock, "clock", "a ManualClock, for example ManualClock.startingNow()");
        return new InMemoryQueue(new ManualTime(clock), clock, options, false);
    }

    /**
     * Another queue over {@code first}'s store, as another replica of the fleet would be: its own subscriptions and
     * engine, the same messages, schedules and wake-ups. On a manual clock, with subscribers on their own threads.
     */
    public static InMemoryQueue threadedSharing(InMemoryQueue first, ManualClock clock, QueueOptions options) {
        InvalidInputException.requireNonNull(first, "first", "the queue whose store to share");
        InvalidInputException.requireNonNull(clock, "clock", "a ManualClock, for example ManualClock.startingNow()");
        return new InMemoryQueue(new ManualTime(clock), clock, options, false, first);
    }

    @Override
    public Namespace namespace(String name) {
        return engine.namespace(name);
    }

    @Override
    public QueueOptions options() {
        return engine.options();
    }

    /**
     * Runs, on this thread, the handlers of every subscription for the messages due now, until nothing subscribed
     * is due; returns how many messages were handled. Only for queues made by {@link #withClock(ManualClock)}.
     *
     * @throws UnsupportedCapabilityException when subscribers run on their own threads
     */
    public int runDue() {
        return engine.runDue();
    }

    /** The messages stored by publishes to a namespace, in publishing order (duplicates are not stored). */
    public List<PublishedMessage> published(String namespace) {
        return store.published(InvalidInputException.requireNonNull(namespace, "namespace", "a namespace name"));
    }

    /** The messages stored by publishes to one topic of a namespace, in publishing order. */
    public List<PublishedMessage> published(String namespace, String topic) {
        InvalidInputException.requireNonNull(namespace, "namespace", "a namespace name");
        InvalidInputException.requireNonNull(topic, "topic", "a topic name");
        return store.published(namespace, topic);
    }

    /** Forgets what {@link #published(String)} reports; stored messages are not touched. */
    public void clearPublished() {
        store.clearPublished();
    }

    /**
     * The manual clock the queue was made with.
     *
     * @throws UnsupportedCapabilityException when the queue runs on the machine's clock
     */
    public ManualClock clock() {
        if (manualClock == null) {
            throw new UnsupportedCapabilityException("clock()", "it runs on the machine's clock; make it with InMemoryQueue.withClock(...) "
                    + "or threaded(...) to control time");
        }
        return manualClock;
    }

    /** The store underneath, for tests that need to look below the API. */
    public InMemoryMessageStore store() {
        return store;
    }

    /** The live workers: this queue while it runs subscriptions on its own threads (not in manual dispatch). */
    public InMemoryWorkerRegistry workers() {
        return workers;
    }

    public boolean isClosed() {
        return engine.isClosed();
    }

    @Override
    public void close() {
        engine.close();
    }

    @Override
    public String toString() {
        return "InMemoryQueue{clock=" + (manualClock != null ? "manual " + manualClock.now() : "system") + ", options="
                + engine.options() + '}';
    }
}
