package dev.queue.domain.engine;

import dev.queue.api.Delivery;
import dev.queue.domain.port.CompleteCommand;
import dev.queue.domain.port.LeaseRef;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Collects the acknowledgements of many handlers and completes them in one store call, when {@code maxBatch}
 * are waiting or {@code maxDelay} after the first arrived, whichever is first, at most {@code maxBatch} a call.
 * One statement for hundreds of messages is what lets completion keep up with claiming. The cost, accepted and
 * documented: a handler that succeeded just before the process died may run again, because its acknowledgement
 * was still waiting here. That is within the at-least-once promise.
 *
 * <p>It also counts the acknowledgements not yet recorded (waiting, or in the statement being written) and says
 * when they reach {@code maxUnrecorded}: the subscriber stops claiming until they drop below it. Without that, a
 * database slower to record than the handlers are to finish lets the waiting grow until acknowledgements outlive
 * their leases and the messages run a second time elsewhere.
 */
final class AckBatcher {

    private static final Logger log = LoggerFactory.getLogger(AckBatcher.class);

    private final String namespace;
    private final QueueEngine engine;
    private final int maxBatch;
    private final Duration maxDelay;
    private final int maxUnrecorded;
    private final Runnable afterFlush;
    /** Submitted and not yet through a store call; read without the lock by the subscriber's dispatcher. */
    private final AtomicInteger unrecorded = new AtomicInteger();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private List<Pending> waiting = new ArrayList<>();
    private long firstArrivedNanos;
    private boolean closed;
    private final Thread flusher;

    /** An acknowledgement and what to say if its lease turns out lost. */
    record Pending(Delivery delivery, boolean completedInCallerTransaction) {
    }

    /**
     * @param maxUnrecorded how many acknowledgements may wait unrecorded before {@link #behind()} says so
     * @param afterFlush    run on the flusher thread after every store call, so a paused subscriber can look again
     */
    AckBatcher(String namespace, QueueEngine engine, int maxBatch, Duration maxDelay, int maxUnrecorded, Runnable afterFlush,
               String threadName) {
        this.namespace = namespace;
        this.engine = engine;
        this.maxBatch = maxBatch;
        this.maxDelay = maxDelay;
        this.maxUnrecorded = maxUnrecorded;
        this.afterFlush = afterFlush;
        this.flusher = new Thread(this::run, threadName);
        this.flusher.setDaemon(true);
        this.flusher.start();
    }

    void submit(Delivery delivery, boolean completedInCallerTransaction) {
        lock.lock();
        try {
            if (closed) {
                flushNow(List.of(new Pending(delivery, completedInCallerTransaction)));
                return;
            }
            if (waiting.isEmpty()) {
                firstArrivedNanos = System.nanoTime();
            }
            unrecorded.incrementAndGet();
            waiting.add(new Pending(delivery, completedInCallerTransaction));
            if (waiting.size() == 1 || waiting.size() >= maxBatch) {
                changed.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    private void run() {
        while (true) {
            List<Pending> batch;
            lock.lock();
            try {
                while (!closed && (waiting.isEmpty() || (waiting.size() < maxBatch && !overdue()))) {
                    long waitNanos = waiting.isEmpty() ? Long.MAX_VALUE
                            : maxDelay.toNanos() - (System.nanoTime() - firstArrivedNanos);
                    changed.awaitNanos(Math.max(1, Math.min(waitNanos, 1_000_000_000L)));
                }
                if (closed && waiting.isEmpty()) {
                    return;
                }
                // At most maxBatch per statement: one that fell behind (a slow database) catches up in statements
                // of the usual size, each committed on its own, rather than in one that grows with the delay.
                if (waiting.size() <= maxBatch) {
                    batch = waiting;
                    waiting = new ArrayList<>();
                } else {
                    List<Pending> first = waiting.subList(0, maxBatch);
                    batch = new ArrayList<>(first);
                    first.clear();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } finally {
                lock.unlock();
            }
            try {
                flushNow(batch);
            } finally {
                unrecorded.addAndGet(-batch.size());
                afterFlush.run();
            }
        }
    }

    /** True while {@code maxUnrecorded} or more acknowledgements wait to be recorded: time to stop claiming. */
    boolean behind() {
        return unrecorded.get() >= maxUnrecorded;
    }

    /** Acknowledgements submitted and not yet through a store call. */
    int unrecorded() {
        return unrecorded.get();
    }

    private boolean overdue() {
        return System.nanoTime() - firstArrivedNanos >= maxDelay.toNanos();
    }

    private void flushNow(List<Pending> batch) {
        if (batch.isEmpty()) {
            return;
        }
        List<LeaseRef> leases = new ArrayList<>(batch.size());
        for (Pending pending : batch) {
            leases.add(NamespaceService.leaseOf(pending.delivery()));
        }
        try {
            Set<Long> done = engine.store().completeIfLeased(new CompleteCommand(namespace, leases, engine.commandTime()));
            for (Pending pending : batch) {
                Delivery d = pending.delivery();
                if (!done.contains(d.id().value()) && !pending.completedInCallerTransaction()) {
                    log.warn("message {} (topic {}, namespace {}): lease lost before its acknowledgement was recorded (attempt {}); "
                            + "another worker may have run it", d.id(), d.topic(), d.namespace(), d.attempt());
                }
            }
        } catch (RuntimeException e) {
            log.warn("could not record {} acknowledgements in namespace {}; those messages run again when their leases expire: {}",
                    batch.size(), namespace, e.toString());
        }
    }

    /** Flushes everything waiting and stops the flusher. */
    void close() {
        lock.lock();
        try {
            closed = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        try {
            flusher.join(30_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
