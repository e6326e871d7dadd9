package dev.queue.postgres;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Rate-limits the wake-ups a publishing process sends, per (namespace, topic). The first publish of a window
 * notifies inside its own transaction; publishes later in the window do not, and once they have committed,
 * one trailing wake-up is sent at the window's end. A trailing wake-up is only requested after a commit, so it
 * can never arrive before the message it announces is visible: the limiter opens no latency hole beyond the
 * window. Every NOTIFY serialises commits on one global lock, which is why this exists.
 * <p>
 * A key also has at most one notifying publish in flight: until it has finished, later publishes of the key are
 * held back even if the window has closed. The global lock is held from the notifying commit's start until its
 * WAL flush is done, so when the server is busy a notifying commit can outlast the window. Without this, every
 * window would start one more of them and they would queue on that lock: on a saturated 2-core server, 9 of 16
 * one-message publishers were seen waiting on it at once (wait event {@code Lock/object}), each holding up its
 * producer. A held-back publish gets its trailing wake-up as usual.
 */
final class NotifyLimiter implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(NotifyLimiter.class);

    private final long windowNanos;
    private final Consumer<String> sendOutsideTransaction;
    private final ConcurrentHashMap<String, Window> windows = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer;

    /**
     * One key's window: when it closes, whether a trailing wake-up is already on its way, and whether a publish
     * that notifies inside its transaction has not finished yet.
     */
    private static final class Window {
        long closesAt = Long.MIN_VALUE;
        boolean trailingScheduled;
        boolean notifyInFlight;
    }

    NotifyLimiter(Duration window, Consumer<String> sendOutsideTransaction) {
        this.windowNanos = window.toNanos();
        this.sendOutsideTransaction = sendOutsideTransaction;
        this.timer = windowNanos == 0 ? null : Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "queue-notify-trailing");
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * True: notify inside this publish's transaction, and call {@link #notifyFinished(String)} once it has committed
     * or failed. False: call {@link #committedWithout(String)} after commit.
     */
    boolean notifyNow(String key) {
        if (windowNanos == 0) {
            return true;
        }
        Window window = windows.computeIfAbsent(key, k -> new Window());
        synchronized (window) {
            long now = System.nanoTime();
            if (!window.notifyInFlight && (window.closesAt == Long.MIN_VALUE || now - window.closesAt >= 0)) {
                window.closesAt = now + windowNanos;
                window.notifyInFlight = true;
                return true;
            }
            return false;
        }
    }

    /** The publish that {@link #notifyNow(String)} let notify has committed or failed. */
    void notifyFinished(String key) {
        if (windowNanos == 0) {
            return;
        }
        Window window = windows.get(key);
        if (window != null) {
            synchronized (window) {
                window.notifyInFlight = false;
            }
        }
    }

    /** A publish that did not notify has committed: make sure a wake-up follows by the end of the window. */
    void committedWithout(String key) {
        Window window = windows.computeIfAbsent(key, k -> new Window());
        long delay;
        synchronized (window) {
            if (window.trailingScheduled) {
                return;
            }
            window.trailingScheduled = true;
            delay = Math.max(0, window.closesAt - System.nanoTime());
        }
        try {
            timer.schedule(() -> sendTrailing(key, window), delay, TimeUnit.NANOSECONDS);
        } catch (RuntimeException e) {
            // Closed: subscribers still find the message by their sweep.
            log.debug("no trailing wake-up for {}: {}", key, e.toString());
        }
    }

    private void sendTrailing(String key, Window window) {
        synchronized (window) {
            window.trailingScheduled = false;
            window.closesAt = System.nanoTime() + windowNanos;
        }
        try {
            sendOutsideTransaction.accept(key);
        } catch (RuntimeException e) {
            log.debug("trailing wake-up for {} failed; subscribers will find its messages by their sweep: {}", key, e.toString());
        }
    }

    @Override
    public void close() {
        if (timer != null) {
            timer.shutdown();
            try {
                timer.awaitTermination(1, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
