package dev.queue.domain.engine;

import dev.queue.api.Delivery;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import dev.queue.domain.port.Clock;
import dev.queue.domain.port.LeaseRef;
import dev.queue.domain.port.WakeUps;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One subscription: its {@link Dispatcher} claims and hands messages to handler threads, a {@link HandlerRun} runs
 * each handler and settles its message, the {@link LeaseKeeper} keeps the leases of running handlers alive, and an
 * {@link AckBatcher} records acknowledgements in batches. This class starts them, runs due messages on the caller's
 * thread in manual dispatch, and stops them in order on close.
 */
final class SubscriberRuntime implements Subscription {

    private static final Logger log = LoggerFactory.getLogger(SubscriberRuntime.class);
    private static final AtomicInteger SEQUENCE = new AtomicInteger();

    /**
     * What a subscription needs of its queue besides its namespace.
     *
     * @param startMaintenance starts the queue's rescue of expired leases, which runs once anything subscribes
     * @param interceptors     null when none are registered
     */
    record Environment(WakeUps wakeUps, Clock clock, QueueOptions options, Subscriptions subscriptions, Tuning tuning,
                       Runnable startMaintenance, Interceptors interceptors) {
    }

    private final NamespaceService namespace;
    private final Environment environment;
    private final Subscriber<?> subscriber;
    private final String worker;
    private final List<String> topics;
    private final Duration lease;
    private final String label;
    private final Map<Long, HeldMessage> held = new ConcurrentHashMap<>();
    private final LeaseKeeper leases;
    private final AtomicBoolean closeStarted = new AtomicBoolean();
    private volatile boolean running;
    private volatile boolean closing;

    private volatile HandlerRun handlerRun;
    private volatile Dispatcher dispatcher;
    private ExecutorService handlers;
    private AckBatcher acks;
    private Thread dispatcherThread;
    private WakeUps.Registration wakeRegistration;
    private WakeUps.Registration cancelRegistration;
    private WakeUps.Registration promotionRegistration;
    private AutoCloseable clockRegistration;

    SubscriberRuntime(NamespaceService namespace, Environment environment, Subscriber<?> subscriber, String worker) {
        this.namespace = namespace;
        this.environment = environment;
        this.subscriber = subscriber;
        this.worker = worker;
        this.topics = List.copyOf(subscriber.topics());
        this.lease = subscriber.lease();
        this.label = "queue-" + namespace.name() + "-" + String.join("+", topics) + "-" + SEQUENCE.incrementAndGet();
        this.leases = new LeaseKeeper(namespace, held.values(), lease, environment.clock(), environment.options().sweepInterval());
    }

    void start() {
        running = true;
        environment.subscriptions().add(this);
        QueueOptions options = environment.options();
        if (environment.subscriptions().manualDispatch()) {
            handlerRun = new HandlerRun(namespace, subscriber, options, held, null, environment.clock(), environment.interceptors());
            return;
        }
        environment.startMaintenance().run();
        Tuning tuning = environment.tuning();
        handlers = new HandlerPool(subscriber.concurrency(), daemonThreads(label + "-handler"));
        acks = new AckBatcher(namespace.name(), namespace::ackLeases, tuning.ackBatch(), tuning.ackDelay(),
                tuning.maxUnrecordedAcks(), lease, this::afterAcksRecorded, label + "-acks");
        HandlerRun run = new HandlerRun(namespace, subscriber, options, held, acks, environment.clock(), environment.interceptors());
        handlerRun = run;
        Dispatcher loop = new Dispatcher(namespace, topics, worker, lease, subscriber.concurrency(), tuning, options.sweepInterval(),
                environment.clock(), held, leases, run, handlers, acks, label,
                topic -> environment.subscriptions().wake(namespace.name(), topic));
        dispatcher = loop;
        wakeRegistration = environment.wakeUps().listen(namespace.name(), topics, loop::wake);
        cancelRegistration = environment.wakeUps().listenForCancels(namespace.name(), this::cancelNoticed);
        promotionRegistration = environment.wakeUps().listenForPromotions(namespace.name(), topics, loop::promoted);
        clockRegistration = environment.clock().onAdvance(loop::wake);
        dispatcherThread = daemonThreads(label + "-dispatch").newThread(loop::run);
        dispatcherThread.start();
        log.debug("subscriber {} started: namespace {}, topics {}, concurrency {}, worker {}", label, namespace.name(), topics,
                subscriber.concurrency(), worker);
    }

    /** The batcher's flusher may report before the dispatcher exists: nothing waits for it then. */
    private void afterAcksRecorded() {
        Dispatcher loop = dispatcher;
        if (loop != null) {
            loop.afterAcksRecorded();
        }
    }

    /** Its dispatcher claims now, if it belongs to that namespace. */
    void wakeIfIn(String namespaceName) {
        Dispatcher loop = dispatcher;
        if (loop != null && namespace.name().equals(namespaceName)) {
            loop.wake();
        }
    }

    /** Its dispatcher claims now, if it claims from that topic of that namespace. */
    void wakeIfOn(String namespaceName, String topic) {
        Dispatcher loop = dispatcher;
        if (loop != null && namespace.name().equals(namespaceName) && topics.contains(topic)) {
            loop.wake();
        }
    }

    /**
     * A notice from the wake-up channel that a message may have been cancelled elsewhere: if this subscription runs
     * it, its lease is checked at once (off the listener's thread), and a lease found gone asks the handler to stop.
     */
    private void cancelNoticed(long id) {
        HeldMessage entry = held.get(id);
        if (entry == null || closing) {
            return;
        }
        java.util.concurrent.CompletableFuture.runAsync(() -> {
            try {
                leases.checkNow(entry);
            } catch (RuntimeException e) {
                // the next regular extension finds it instead
                log.debug("subscriber {}: checking the lease of message {} after a cancel notice failed: {}", label, id, e.toString());
            }
        });
    }

    /** Marks the message cancelled if this subscription holds it, so its handler's context says so. */
    void cancelledIfIn(String namespaceName, long id) {
        if (namespace.name().equals(namespaceName)) {
            HeldMessage entry = held.get(id);
            if (entry != null) {
                entry.cancelled = true;
            }
        }
    }

    /** Runs due messages on the calling thread until none is due; for manual dispatch. */
    int drainDue() {
        if (!running) {
            return 0;
        }
        int handled = 0;
        while (running) {
            List<Delivery> claimed = namespace.claim(topics, worker, Math.min(environment.tuning().maxClaim(), subscriber.concurrency()), lease);
            if (claimed.isEmpty()) {
                return handled;
            }
            for (Delivery delivery : claimed) {
                HeldMessage entry = new HeldMessage(delivery, false);
                held.put(entry.id(), entry);
                entry.start();
                handlerRun.run(entry);
                handled++;
            }
        }
        return handled;
    }

    @Override
    public void close() {
        close(subscriber.shutdownTimeout());
    }

    @Override
    public void close(Duration timeout) {
        if (!closeStarted.compareAndSet(false, true)) {
            return;
        }
        closing = true;
        if (dispatcher != null) {
            dispatcher.stop();
        }
        try {
            if (wakeRegistration != null) {
                wakeRegistration.close();
            }
            if (promotionRegistration != null) {
                promotionRegistration.close();
            }
            if (cancelRegistration != null) {
                cancelRegistration.close();
            }
            if (clockRegistration != null) {
                clockRegistration.close();
            }
        } catch (Exception e) {
            log.debug("subscriber {}: closing a registration failed: {}", label, e.toString());
        }
        if (dispatcherThread != null) {
            try {
                // A claim in progress normally ends within milliseconds; one stuck waiting for an unreachable
                // database is interrupted rather than holding the shutdown for the pool's connection timeout.
                dispatcherThread.join(2_000);
                if (dispatcherThread.isAlive()) {
                    dispatcherThread.interrupt();
                    dispatcherThread.join(TimeUnit.SECONDS.toMillis(5));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        releaseUnstarted();
        if (handlers != null) {
            handlers.shutdown();
            boolean finished = awaitHandlers(timeout);
            if (!finished) {
                log.warn("subscriber {} (namespace {}, topics {}): {} handlers still running after {}; interrupting them, their "
                        + "messages run again when their leases expire", label, namespace.name(), topics, inFlight(), timeout);
                handlers.shutdownNow();
            }
        }
        if (acks != null) {
            acks.close();
        }
        running = false;
        environment.subscriptions().remove(this);
    }

    /** Waits for handlers while keeping their leases alive. */
    private boolean awaitHandlers(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long step = Math.max(1, leases.interval().toMillis());
        try {
            while (true) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return handlers.isTerminated();
                }
                if (handlers.awaitTermination(Math.min(step, TimeUnit.NANOSECONDS.toMillis(left) + 1), TimeUnit.MILLISECONDS)) {
                    return true;
                }
                try {
                    leases.extendIfDue();
                } catch (RuntimeException e) {
                    log.debug("subscriber {}: lease extension during shutdown failed: {}", label, e.toString());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private void releaseUnstarted() {
        List<LeaseRef> toRelease = new ArrayList<>();
        Set<Long> ids = new HashSet<>();
        for (HeldMessage entry : held.values()) {
            if (entry.release()) {
                toRelease.add(NamespaceService.leaseOf(entry.delivery));
                ids.add(entry.id());
            }
        }
        if (toRelease.isEmpty()) {
            return;
        }
        try {
            Set<Long> released = namespace.releaseLeases(toRelease);
            log.info("subscriber {} (namespace {}, topics {}) gave back {} messages it never started", label, namespace.name(), topics,
                    released.size());
        } catch (RuntimeException e) {
            log.warn("subscriber {} (namespace {}): could not give back {} unstarted messages; they run again when their leases "
                    + "expire: {}", label, namespace.name(), toRelease.size(), e.toString());
        } finally {
            ids.forEach(held::remove);
        }
    }

    @Override
    public boolean isRunning() {
        Dispatcher loop = dispatcher;
        return running && !closing && (loop == null || !loop.stopped());
    }

    String namespaceName() {
        return namespace.name();
    }

    List<String> topics() {
        return topics;
    }

    String worker() {
        return worker;
    }

    int concurrency() {
        return subscriber.concurrency();
    }

    @Override
    public int inFlight() {
        HandlerRun run = handlerRun;
        return run == null ? 0 : run.inFlight();
    }

    private static ThreadFactory daemonThreads(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, prefix + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    @Override
    public String toString() {
        return label;
    }
}
