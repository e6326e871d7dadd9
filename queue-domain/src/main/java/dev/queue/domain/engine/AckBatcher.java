package dev.queue.domain.engine;

import dev.queue.api.Delivery;
import dev.queue.api.observation.HandleOutcome;
import dev.queue.domain.port.LeaseRef;
import dev.queue.domain.rules.RetryPause;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * Collects the acknowledgements of many handlers and completes them in one store call, when {@code maxBatch}
 * are waiting or {@code maxDelay} after the first arrived, whichever is first, at most {@code maxBatch} a call.
 * One statement for hundreds of messages is what lets completion keep up with claiming. The cost, accepted and
 * documented: a handler that succeeded just before the process died may run again, because its acknowledgement
 * was still waiting here. That is within the at-least-once promise.
 *
 * <p>An acknowledgement that others wait for (room under its topic's running limit) is written at once, with
 * whatever else waits: the delay would bound how fast a topic with a running limit moves. A rate's room comes back
 * with time, so a rate alone leaves acknowledgements batched, and so do ordering keys: the promotion of a key's next
 * message is one more statement of the batch, which no publisher of the key waits for. While a statement is being
 * written the next batch still grows, so a busy limited topic is not written one message a statement.
 *
 * <p>It also counts the acknowledgements not yet recorded (waiting, or in the statement being written) and says
 * when they reach {@code maxUnrecorded}: the subscriber stops claiming until they drop below it. Without that, a
 * database slower to record than the handlers are to finish lets the waiting grow until acknowledgements outlive
 * their leases and the messages run a second time elsewhere.
 *
 * <p>A store call that fails (the database restarting, a connection cut) is retried with a growing pause, for as
 * long as a lease lasts from when the acknowledgement arrived, instead of being dropped: dropping would make
 * every message it named run again once its lease expired, however short the outage. Completion only deletes
 * rows still held under the named lease, so a retry of a call that did commit changes nothing.
 */
final class AckBatcher {

    private static final Logger log = LoggerFactory.getLogger(AckBatcher.class);
    /** The pauses between tries of a failed store call recording handler results, here and in the runtime. */
    static final Duration FIRST_RETRY_PAUSE = Duration.ofMillis(50);
    static final Duration MAX_RETRY_PAUSE = Duration.ofSeconds(2);

    private final String namespace;
    private final Function<List<LeaseRef>, Set<Long>> complete;
    private final int maxBatch;
    private final Duration maxDelay;
    private final int maxUnrecorded;
    private final long retryForNanos;
    private final Runnable afterFlush;
    /** Submitted and not yet through a store call; read without the lock by the subscriber's dispatcher. */
    private final AtomicInteger unrecorded = new AtomicInteger();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private List<Pending> waiting = new ArrayList<>();
    private long firstArrivedNanos;
    /** Whether an acknowledgement others wait for is among the waiting: the batch goes without the delay. */
    private boolean urgentWaiting;
    private boolean closed;
    private final Thread flusher;

    /**
     * An acknowledgement, what to say if its lease turns out lost, when it arrived, and whether a store call
     * naming it failed before (its completion may then have been recorded by that call).
     */
    record Pending(Delivery delivery, boolean completedInCallerTransaction, long arrivedNanos, boolean retried,
                   Interceptors.HandleCall observed) {
    }

    private enum FlushResult { DONE, RETRY }

    /**
     * @param complete      records acknowledgements of the namespace in one store call: the ids completed
     * @param maxUnrecorded how many acknowledgements may wait unrecorded before {@link #behind()} says so
     * @param retryFor      how long after its arrival an acknowledgement is retried when store calls fail
     * @param afterFlush    run on the flusher thread after acknowledgements leave it (recorded or given up), so a
     *                      paused subscriber can look again
     */
    AckBatcher(String namespace, Function<List<LeaseRef>, Set<Long>> complete, int maxBatch, Duration maxDelay, int maxUnrecorded, Duration retryFor,
               Runnable afterFlush, String threadName) {
        this.namespace = namespace;
        this.complete = complete;
        this.maxBatch = maxBatch;
        this.maxDelay = maxDelay;
        this.maxUnrecorded = maxUnrecorded;
        this.retryForNanos = retryFor.toNanos();
        this.afterFlush = afterFlush;
        this.flusher = new Thread(this::run, threadName);
        this.flusher.setDaemon(true);
        this.flusher.start();
    }

    void submit(Delivery delivery, boolean completedInCallerTransaction, Interceptors.HandleCall observed) {
        submit(delivery, completedInCallerTransaction, observed, false);
    }

    /**
     * @param observed the interceptors' view of the run, told its outcome once recorded; null when none listen
     * @param urgent   whether other messages wait for this acknowledgement: it is written without the delay
     */
    void submit(Delivery delivery, boolean completedInCallerTransaction, Interceptors.HandleCall observed, boolean urgent) {
        Pending pending = new Pending(delivery, completedInCallerTransaction, System.nanoTime(), false, observed);
        lock.lock();
        try {
            if (closed) {
                flush(List.of(pending), false);
                return;
            }
            if (waiting.isEmpty()) {
                firstArrivedNanos = pending.arrivedNanos();
            }
            unrecorded.incrementAndGet();
            waiting.add(pending);
            if (urgent && !urgentWaiting) {
                urgentWaiting = true;
                changed.signalAll();
            } else if (waiting.size() == 1 || waiting.size() >= maxBatch) {
                changed.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    private void run() {
        long retryPauseMillis = 0;
        int failures = 0;
        while (true) {
            List<Pending> batch;
            boolean mayRetry;
            lock.lock();
            try {
                // After a failed store call, pause before the next; closing cuts the pause short.
                long pauseNanos = TimeUnit.MILLISECONDS.toNanos(retryPauseMillis);
                while (!closed && pauseNanos > 0) {
                    pauseNanos = changed.awaitNanos(pauseNanos);
                }
                while (!closed && (waiting.isEmpty() || (waiting.size() < maxBatch && !urgentWaiting && !overdue()))) {
                    long waitNanos = waiting.isEmpty() ? Long.MAX_VALUE
                            : maxDelay.toNanos() - (System.nanoTime() - firstArrivedNanos);
                    changed.awaitNanos(Math.max(1, Math.min(waitNanos, 1_000_000_000L)));
                }
                if (closed && waiting.isEmpty()) {
                    return;
                }
                mayRetry = !closed;
                // At most maxBatch per statement: one that fell behind (a slow database) catches up in statements
                // of the usual size, each committed on its own, rather than in one that grows with the delay.
                if (waiting.size() <= maxBatch) {
                    batch = waiting;
                    waiting = new ArrayList<>();
                    urgentWaiting = false;
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
            int settled = batch.size();
            try {
                if (flush(batch, mayRetry) == FlushResult.RETRY) {
                    List<Pending> again = stillWorthRetrying(batch);
                    settled = batch.size() - again.size();
                    requeue(again);
                    failures++;
                    retryPauseMillis = RetryPause.after(failures, FIRST_RETRY_PAUSE, MAX_RETRY_PAUSE,
                            ThreadLocalRandom.current()::nextDouble).toMillis();
                } else {
                    failures = 0;
                    retryPauseMillis = 0;
                }
            } finally {
                if (settled > 0) {
                    unrecorded.addAndGet(-settled);
                    afterFlush.run();
                }
            }
        }
    }

    /** The acknowledgements of a failed call that arrived less than a lease ago; the rest are given up, saying so. */
    private List<Pending> stillWorthRetrying(List<Pending> failed) {
        long now = System.nanoTime();
        List<Pending> again = new ArrayList<>(failed.size());
        int givenUp = 0;
        for (Pending pending : failed) {
            if (now - pending.arrivedNanos() < retryForNanos) {
                again.add(new Pending(pending.delivery(), pending.completedInCallerTransaction(), pending.arrivedNanos(), true,
                        pending.observed()));
            } else {
                givenUp++;
                if (pending.observed() != null) {
                    pending.observed().ended(HandleOutcome.NOT_RECORDED, null, null);
                }
            }
        }
        if (givenUp > 0) {
            log.warn("gave up recording {} acknowledgements in namespace {} after retrying them for a lease; those messages run "
                    + "again when their leases expire", givenUp, namespace);
        }
        return again;
    }

    /** Puts acknowledgements back at the head of the queue, due at once. */
    private void requeue(List<Pending> again) {
        if (again.isEmpty()) {
            return;
        }
        lock.lock();
        try {
            List<Pending> merged = new ArrayList<>(again.size() + waiting.size());
            merged.addAll(again);
            merged.addAll(waiting);
            waiting = merged;
            firstArrivedNanos = again.get(0).arrivedNanos();
        } finally {
            lock.unlock();
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

    private FlushResult flush(List<Pending> batch, boolean mayRetry) {
        if (batch.isEmpty()) {
            return FlushResult.DONE;
        }
        List<LeaseRef> leases = new ArrayList<>(batch.size());
        for (Pending pending : batch) {
            leases.add(NamespaceService.leaseOf(pending.delivery()));
        }
        Set<Long> done;
        try {
            done = complete.apply(leases);
        } catch (RuntimeException e) {
            if (mayRetry) {
                boolean firstFailure = batch.stream().noneMatch(Pending::retried);
                if (firstFailure) {
                    log.warn("could not record {} acknowledgements in namespace {}; retrying while their leases last: {}", batch.size(),
                            namespace, e.toString());
                } else {
                    log.debug("could not record {} acknowledgements in namespace {} again; retrying: {}", batch.size(), namespace,
                            e.toString());
                }
                return FlushResult.RETRY;
            }
            log.warn("could not record {} acknowledgements in namespace {} while closing; those messages run again when their "
                    + "leases expire: {}", batch.size(), namespace, e.toString());
            for (Pending pending : batch) {
                if (pending.observed() != null) {
                    pending.observed().ended(HandleOutcome.NOT_RECORDED, null, null);
                }
            }
            return FlushResult.DONE;
        }
        for (Pending pending : batch) {
            Delivery d = pending.delivery();
            boolean acked = done.contains(d.id().value()) || pending.completedInCallerTransaction();
            if (pending.observed() != null) {
                pending.observed().ended(acked ? HandleOutcome.ACKED : HandleOutcome.LEASE_LOST, null, null);
            }
            if (acked) {
                continue;
            }
            if (pending.retried()) {
                log.warn("message {} (topic {}, namespace {}): not held under its lease when its acknowledgement was retried "
                        + "(attempt {}); either the failed call recorded it, or the lease was lost and another worker may have "
                        + "run it", d.id(), d.topic(), d.namespace(), d.attempt());
            } else {
                log.warn("message {} (topic {}, namespace {}): lease lost before its acknowledgement was recorded (attempt {}); "
                        + "another worker may have run it", d.id(), d.topic(), d.namespace(), d.attempt());
            }
        }
        return FlushResult.DONE;
    }

    /** Flushes everything waiting (one attempt each) and stops the flusher. */
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
