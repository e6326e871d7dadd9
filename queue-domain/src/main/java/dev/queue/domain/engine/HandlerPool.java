package dev.queue.domain.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The handler threads of one subscriber: up to {@code maxThreads}, started as work arrives, sharing one queue.
 *
 * <p>Why not {@code Executors.newFixedThreadPool}: it wakes a parked thread for every task, a system call and
 * a context switch per message, which under load cost more CPU than short handlers themselves. Here at most one
 * wake-up is in flight at a time, and the thread it wakes, on taking a task while more wait, passes the wake-up
 * on (as {@link java.util.concurrent.ForkJoinPool} does). Threads that finish a handler take the next task
 * without parking. Quick handlers are then run by the few threads already awake; slow ones spread over more
 * threads, one wake-up after the other (tens of microseconds each).
 */
final class HandlerPool extends AbstractExecutorService {

    private final int maxThreads;
    private final ThreadFactory threadFactory;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    /** Parked workers, most recently parked first (its caches are warmest). */
    private final ConcurrentLinkedDeque<Worker> idle = new ConcurrentLinkedDeque<>();
    /** Wake-ups given (or threads started) whose worker has not yet looked at the queue. */
    private final AtomicInteger wakesInFlight = new AtomicInteger();
    private final List<Worker> workers = new ArrayList<>();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition terminated = lock.newCondition();
    private volatile boolean shutdown;
    /** Set by {@link #shutdownNow()}: interrupts are then meant for every handler, none is cleared. */
    private volatile boolean stopping;
    private int alive;

    HandlerPool(int maxThreads, ThreadFactory threadFactory) {
        if (maxThreads < 1) {
            throw new IllegalArgumentException("maxThreads must be at least 1, got: " + maxThreads);
        }
        this.maxThreads = maxThreads;
        this.threadFactory = threadFactory;
    }

    @Override
    public void execute(Runnable task) {
        if (shutdown) {
            throw new RejectedExecutionException("handler pool is shut down");
        }
        tasks.offer(task);
        if (wakesInFlight.get() == 0) {
            signalOne();
        }
    }

    /** Wakes a parked worker, or starts a new one while below the maximum. */
    private void signalOne() {
        Worker parked = idle.pollFirst();
        if (parked != null) {
            wakesInFlight.incrementAndGet();
            parked.wake();
            return;
        }
        lock.lock();
        try {
            if (shutdown || workers.size() >= maxThreads) {
                return;
            }
            Worker worker = new Worker();
            Thread thread = threadFactory.newThread(worker);
            worker.thread = thread;
            workers.add(worker);
            alive++;
            wakesInFlight.incrementAndGet();
            thread.start();
        } finally {
            lock.unlock();
        }
    }

    private final class Worker implements Runnable {
        volatile Thread thread;
        private volatile boolean woken;

        void wake() {
            woken = true;
            LockSupport.unpark(thread);
        }

        @Override
        public void run() {
            boolean counted = true;
            try {
                while (true) {
                    Runnable task = tasks.poll();
                    if (counted) {
                        counted = false;
                        wakesInFlight.decrementAndGet();
                    }
                    if (task != null) {
                        if (!tasks.isEmpty() && wakesInFlight.get() == 0) {
                            signalOne();
                        }
                        runTask(task);
                        if (!stopping) {
                            Thread.interrupted(); // an interrupt of the finished handler must not hit the next one
                        }
                        continue;
                    }
                    if (shutdown) {
                        return;
                    }
                    woken = false;
                    idle.offerFirst(this);
                    // A task offered before this worker was listed as idle found nobody to wake: look again.
                    if (!tasks.isEmpty() || shutdown) {
                        if (idle.remove(this)) {
                            continue;
                        }
                        // Someone took this worker off the idle list to wake it: that wake-up is counted.
                    }
                    while (!woken && !shutdown) {
                        LockSupport.park(this);
                        if (!stopping) {
                            Thread.interrupted(); // a stray interrupt would make park return at once, forever
                        }
                    }
                    counted = woken;
                }
            } finally {
                if (counted) {
                    wakesInFlight.decrementAndGet();
                }
                exited();
            }
        }
    }

    private static void runTask(Runnable task) {
        try {
            task.run();
        } catch (RuntimeException | Error e) {
            // Tasks handle their own failures; one that escapes must not end the worker. Report it as a thread
            // pool would, and go on.
            Thread current = Thread.currentThread();
            current.getUncaughtExceptionHandler().uncaughtException(current, e);
        }
    }

    private void exited() {
        lock.lock();
        try {
            alive--;
            if (alive == 0) {
                terminated.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void shutdown() {
        shutdown = true;
        lock.lock();
        try {
            for (Worker worker : workers) {
                LockSupport.unpark(worker.thread);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Stops taking tasks, interrupts running handlers and returns the tasks that never started. */
    @Override
    public List<Runnable> shutdownNow() {
        stopping = true;
        shutdown();
        List<Runnable> never = new ArrayList<>();
        Runnable task;
        while ((task = tasks.poll()) != null) {
            never.add(task);
        }
        lock.lock();
        try {
            for (Worker worker : workers) {
                worker.thread.interrupt();
            }
        } finally {
            lock.unlock();
        }
        return never;
    }

    @Override
    public boolean isShutdown() {
        return shutdown;
    }

    @Override
    public boolean isTerminated() {
        lock.lock();
        try {
            return shutdown && alive == 0;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        long nanos = unit.toNanos(timeout);
        lock.lock();
        try {
            while (!(shutdown && alive == 0)) {
                if (nanos <= 0) {
                    return false;
                }
                nanos = terminated.awaitNanos(nanos);
            }
            return true;
        } finally {
            lock.unlock();
        }
    }
}
