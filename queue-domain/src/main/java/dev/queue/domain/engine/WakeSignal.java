package dev.queue.domain.engine;

import java.time.Duration;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A sleeper's doorbell: {@link #await(Duration)} returns when {@link #wake()} was called since the last return,
 * or when the time is up. A wake that comes while nobody waits is kept for the next await, so none is lost.
 */
final class WakeSignal {

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition rung = lock.newCondition();
    private volatile boolean pending;

    void wake() {
        if (pending) {
            return; // rung already and not yet answered: the sleeper will see it (handlers ring this per message)
        }
        lock.lock();
        try {
            pending = true;
            rung.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** False when the waiting thread was interrupted (its interrupt flag is set again). */
    boolean await(Duration max) {
        long nanos = Math.max(0, max.toNanos());
        lock.lock();
        try {
            while (!pending && nanos > 0) {
                nanos = rung.awaitNanos(nanos);
            }
            pending = false;
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            lock.unlock();
        }
    }
}
