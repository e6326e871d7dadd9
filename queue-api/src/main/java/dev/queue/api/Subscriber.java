package dev.queue.api;

import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * Everything a subscription needs: topics (in priority order), concurrency, lease, retry backoff and the
 * handler. Built fluently and immutable; {@link Namespace#subscribe} checks every property together before anything
 * starts, and refuses a bad one with {@link InvalidInputException} naming it and the value received:
 *
 * <pre>{@code
 * Subscriber.on("order.paid").concurrency(16).handle(OrderPaid.class, (order, ctx) -> billing.charge(order))
 * }</pre>
 */
public final class Subscriber<T> {

    public static final int DEFAULT_CONCURRENCY = 10;
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);
    public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(30);

    private final List<String> topics;
    private final int concurrency;
    private final Duration lease;
    private final Backoff backoff;
    private final String worker;
    private final Duration shutdownTimeout;
    private final Class<T> payloadType;
    private final MessageHandler<T> handler;

    private Subscriber(List<String> topics, int concurrency, Duration lease, Backoff backoff, String worker,
                       Duration shutdownTimeout, Class<T> payloadType, MessageHandler<T> handler) {
        this.topics = topics;
        this.concurrency = concurrency;
        this.lease = lease;
        this.backoff = backoff;
        this.worker = worker;
        this.shutdownTimeout = shutdownTimeout;
        this.payloadType = payloadType;
        this.handler = handler;
    }

    /** Topics in priority order: due messages of the first are claimed before those of the next. */
    public static Builder on(String... topics) {
        return new Builder(topics == null ? null : Collections.unmodifiableList(Arrays.asList(topics.clone())),
                DEFAULT_CONCURRENCY, DEFAULT_LEASE, null, null, DEFAULT_SHUTDOWN_TIMEOUT);
    }

    public List<String> topics() {
        return topics;
    }

    public int concurrency() {
        return concurrency;
    }

    public Duration lease() {
        return lease;
    }

    /** Null: the queue's backoff for the topic. */
    public Backoff backoff() {
        return backoff;
    }

    /** Null: a name made of host and process. */
    public String worker() {
        return worker;
    }

    public Duration shutdownTimeout() {
        return shutdownTimeout;
    }

    /** Null for a handler of raw deliveries. */
    public Class<T> payloadType() {
        return payloadType;
    }

    public MessageHandler<T> handler() {
        return handler;
    }

    /** The options of a subscriber, before its handler is known. */
    public static final class Builder {
        private final List<String> topics;
        private final int concurrency;
        private final Duration lease;
        private final Backoff backoff;
        private final String worker;
        private final Duration shutdownTimeout;

        private Builder(List<String> topics, int concurrency, Duration lease, Backoff backoff, String worker,
                        Duration shutdownTimeout) {
            this.topics = topics;
            this.concurrency = concurrency;
            this.lease = lease;
            this.backoff = backoff;
            this.worker = worker;
            this.shutdownTimeout = shutdownTimeout;
        }

        /** How many handlers run at once (1 to 1000). */
        public Builder concurrency(int value) {
            return new Builder(topics, value, lease, backoff, worker, shutdownTimeout);
        }

        /** How long each claim holds a message; extended automatically while its handler runs. */
        public Builder lease(Duration value) {
            return new Builder(topics, concurrency, value, backoff, worker, shutdownTimeout);
        }

        /** The wait before each retry of a message whose handler threw. */
        public Builder retry(Backoff value) {
            return new Builder(topics, concurrency, lease, value, worker, shutdownTimeout);
        }

        public Builder worker(String name) {
            return new Builder(topics, concurrency, lease, backoff, name, shutdownTimeout);
        }

        /** How long {@link Subscription#close()} waits for running handlers. */
        public Builder shutdownTimeout(Duration value) {
            return new Builder(topics, concurrency, lease, backoff, worker, value);
        }

        /** Handles payloads decoded to {@code type} by the queue's codec. */
        public <T> Subscriber<T> handle(Class<T> type, MessageHandler<T> handler) {
            return new Subscriber<>(topics, concurrency, lease, backoff, worker, shutdownTimeout, type, handler);
        }

        /** Handles deliveries as they are, payload as JSON text: {@code context.delivery().json()}. */
        public Subscriber<Delivery> handleDelivery(MessageHandler<Delivery> handler) {
            return new Subscriber<>(topics, concurrency, lease, backoff, worker, shutdownTimeout, null, handler);
        }
    }
}
