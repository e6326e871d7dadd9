package dev.queue.spring;

import dev.queue.api.InvalidInputException;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import dev.queue.postgres.PostgresQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.context.SmartLifecycle;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Runs the {@link QueueHandler} methods: subscribes each when the application context starts, and at shutdown
 * stops claiming on all of them at once and gives their running handlers {@code queue.handlers.shutdown-timeout}
 * to finish. A handler still running after that keeps its message leased until the lease expires; then the
 * message becomes due again and another process (or this one, restarted) runs it, so no message is lost.
 */
public final class QueueHandlerSubscriptions implements SmartLifecycle {

    private static final Logger LOG = LoggerFactory.getLogger(QueueHandlerSubscriptions.class);
    private static final int MAX_CONCURRENCY = 1000;

    private final PostgresQueue queue;
    private final QueueHandlerCollector collector;
    private final QueueProperties properties;
    private final List<Running> running = new CopyOnWriteArrayList<>();
    private volatile boolean started;

    private record Running(QueueHandlerMethod method, String namespace, Subscription subscription) {
    }

    QueueHandlerSubscriptions(PostgresQueue queue, QueueHandlerCollector collector, QueueProperties properties) {
        this.queue = queue;
        this.collector = collector;
        this.properties = properties;
        checkHandlerDefaults(properties.getHandlers());
    }

    private static void checkHandlerDefaults(QueueProperties.Handlers handlers) {
        if (handlers.getConcurrency() < 1 || handlers.getConcurrency() > MAX_CONCURRENCY) {
            throw new InvalidQueuePropertyException("queue.handlers.concurrency", handlers.getConcurrency(),
                    "1 to " + MAX_CONCURRENCY, null);
        }
        if (handlers.getLease() == null || handlers.getLease().isNegative() || handlers.getLease().isZero()) {
            throw new InvalidQueuePropertyException("queue.handlers.lease", handlers.getLease(), "a positive duration", null);
        }
        if (handlers.getShutdownTimeout() == null || handlers.getShutdownTimeout().isNegative()) {
            throw new InvalidQueuePropertyException("queue.handlers.shutdown-timeout", handlers.getShutdownTimeout(),
                    "zero or a positive duration", null);
        }
    }

    @Override
    public synchronized void start() {
        if (started) {
            return;
        }
        try {
            for (QueueHandlerMethod method : collector.methods()) {
                running.add(subscribe(method));
            }
        } catch (RuntimeException e) {
            closeAll(Duration.ZERO);
            throw e;
        }
        started = true;
    }

    private Running subscribe(QueueHandlerMethod method) {
        QueueHandler annotation = method.annotation();
        String namespace = annotation.namespace().isEmpty() ? properties.getNamespace() : annotation.namespace();
        int concurrency = annotation.concurrency() == 0 ? properties.getHandlers().getConcurrency() : annotation.concurrency();
        Duration lease = properties.getHandlers().getLease();
        try {
            if (!annotation.lease().isEmpty()) {
                lease = DurationStyle.detectAndParse(annotation.lease());
            }
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("@QueueHandler method " + method.description() + " has lease \""
                    + annotation.lease() + "\"; expected a duration such as 30s or PT30S", e);
        }
        Subscriber.Builder builder = Subscriber.on(annotation.topic())
                .concurrency(concurrency)
                .lease(lease)
                .shutdownTimeout(properties.getHandlers().getShutdownTimeout());
        Subscriber<?> subscriber = method.takesDelivery()
                ? builder.handleDelivery(method.handler())
                : builder.handle(method.payloadType(), method.handler());
        try {
            Subscription subscription = queue.namespace(namespace).subscribe(subscriber);
            LOG.info("subscribed {} to topics {} in namespace {} (concurrency {}, lease {})", method.description(),
                    Arrays.toString(annotation.topic()), namespace, concurrency, lease);
            return new Running(method, namespace, subscription);
        } catch (InvalidInputException e) {
            throw new IllegalStateException("@QueueHandler method " + method.description() + " cannot subscribe: "
                    + e.getMessage(), e);
        }
    }

    @Override
    public void stop() {
        stopClaimingAndWait();
    }

    @Override
    public void stop(Runnable callback) {
        // Spring waits for the callback up to its per-phase timeout; closing on another thread lets every
        // subscription's wait run at once instead of one after the other.
        CompletableFuture.runAsync(this::stopClaimingAndWait, runnable -> {
            Thread thread = new Thread(runnable, "queue-handlers-stop");
            thread.start();
        }).whenComplete((ignored, failure) -> callback.run());
    }

    private synchronized void stopClaimingAndWait() {
        if (!started) {
            return;
        }
        started = false;
        closeAll(properties.getHandlers().getShutdownTimeout());
    }

    private void closeAll(Duration timeout) {
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (Running each : running) {
            closing.add(CompletableFuture.runAsync(() -> close(each, timeout), runnable -> {
                Thread thread = new Thread(runnable, "queue-handler-stop-" + each.method().description());
                thread.start();
            }));
        }
        CompletableFuture.allOf(closing.toArray(CompletableFuture[]::new)).join();
        running.clear();
    }

    private static void close(Running each, Duration timeout) {
        int inFlight = each.subscription().inFlight();
        try {
            each.subscription().close(timeout);
            LOG.info("stopped {} in namespace {} ({} handler(s) were running at shutdown, given {})",
                    each.method().description(), each.namespace(), inFlight, timeout);
        } catch (RuntimeException e) {
            LOG.warn("stopping {} in namespace {} failed; its messages run again when their leases expire",
                    each.method().description(), each.namespace(), e);
        }
    }

    @Override
    public boolean isRunning() {
        return started;
    }

    /**
     * Late among lifecycle beans: stops after the web server stopped taking requests (its phases are higher), and
     * like every lifecycle bean before any singleton, so the queue and its DataSource are still open meanwhile.
     */
    @Override
    public int getPhase() {
        return SmartLifecycle.DEFAULT_PHASE - 2048;
    }

    /** Subscriptions running now, for the health indicator. */
    int runningCount() {
        int count = 0;
        for (Running each : running) {
            if (each.subscription().isRunning()) {
                count++;
            }
        }
        return count;
    }

    int subscribedCount() {
        return started ? running.size() : 0;
    }
}
