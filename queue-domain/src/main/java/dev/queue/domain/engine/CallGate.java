package dev.queue.domain.engine;

import dev.queue.api.QueueClosedException;
import dev.queue.api.StoreUnavailableException;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The door every public call of a queue goes through, so that closing never pulls the store out from under a call
 * in flight: a caller whose publish failed half-way cannot know whether it was stored, and a retrying publisher
 * would then store it twice. Once closed, new calls fail with {@link QueueClosedException} before touching the
 * store; calls already inside run to their end, and {@link #closeAndAwait} waits for them, boundedly.
 */
final class CallGate {

    private final AtomicInteger inside = new AtomicInteger();
    private final Object drained = new Object();
    private volatile boolean closed;
    /** Set when close stopped waiting: a store failure of a call still inside is then the close's doing. */
    private volatile boolean abandoned;

    /** Runs a call, unless the gate is closed. */
    <T> T call(Supplier<T> body) {
        enter();
        try {
            return body.get();
        } catch (StoreUnavailableException e) {
            if (abandoned) {
                throw new QueueClosedException("the queue was closed while this call ran and did not wait for it any longer;"
                        + " whether the call took effect is unknown", e);
            }
            throw e;
        } finally {
            exit();
        }
    }

    void run(Runnable body) {
        call(() -> {
            body.run();
            return null;
        });
    }

    /** Fails when closed, without counting a call: for checks ahead of work that does not touch the store. */
    void ensureOpen() {
        if (closed) {
            throw new QueueClosedException("the queue is closed");
        }
    }

    boolean isClosed() {
        return closed;
    }

    private void enter() {
        inside.incrementAndGet();
        // Counted first, checked second: a close that set the flag after this check sees the count and waits.
        if (closed) {
            exit();
            throw new QueueClosedException("the queue is closed");
        }
    }

    private void exit() {
        if (inside.decrementAndGet() == 0 && closed) {
            synchronized (drained) {
                drained.notifyAll();
            }
        }
    }

    /**
     * Refuses new calls and waits up to {@code timeout} for the calls inside to finish. True when they did; false
     * when some were still running, which then fail with {@link QueueClosedException} if the store goes away
     * under them.
     */
    boolean closeAndAwait(Duration timeout) {
        closed = true;
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (drained) {
            while (inside.get() > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    abandoned = true;
                    return false;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(drained, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    abandoned = true;
                    return false;
                }
            }
        }
        return true;
    }

    int callsInside() {
        return inside.get();
    }
}
