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
 *
 * @param <T> the payload type the handler receives
 */
public final class Subscriber<T> {

    /** How many handlers run at once unless set otherwise: {@value}. */
    public static final int DEFAULT_CONCURRENCY = 10;
    /** How long each claim holds a message unless set otherwise: 30 s. */
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);
    /** How long closing waits for running handlers unless set otherwise: 30 s. */
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

    /**
     * Starts a subscriber of one or more topics, in priority order: due messages of the first are claimed before
     * those of the next.
     *
     * @param topics 1 to 64 topics, each listed once
     * @return a builder with default options; finish it with {@link Builder#handle} or
     *         {@link Builder#handleDelivery}
     */
    public static Builder on(String... topics) {
        return new Builder(topics == null ? null : Collections.unmodifiableList(Arrays.asList(topics.clone())),
                DEFAULT_CONCURRENCY, DEFAULT_LEASE, null, null, DEFAULT_SHUTDOWN_TIMEOUT);
    }

    /**
     * The topics, in priority order.
     *
     * @return an unmodifiable list
     */
    public List<String> topics() {
        return topics;
    }

    /**
     * How many handlers run at once.
     *
     * @return the concurrency
     */
    public int concurrency() {
        return concurrency;
    }

    /**
     * How long each claim holds a message.
     *
     * @return the lease
     */
    public Duration lease() {
        return lease;
    }

    /**
     * The wait before each retry.
     *
     * @return the backoff; null for the queue's backoff of each topic
     */
    public Backoff backoff() {
        return backoff;
    }

    /**
     * The worker name the subscriber claims under.
     *
     * @return the name; null for a name made of host and process
     */
    public String worker() {
        return worker;
    }

    /**
     * How long {@link Subscription#close()} waits for running handlers.
     *
     * @return the shutdown timeout
     */
    public Duration shutdownTimeout() {
        return shutdownTimeout;
    }

    /**
     * The class payloads are decoded to.
     *
     * @return the payload class; null for a handler of raw deliveries
     */
    public Class<T> payloadType() {
        return payloadType;
    }

    /**
     * The handler.
     *
     * @return the handler
     */
    public MessageHandler<T> handler() {
        return handler;
    }

    /**
     * The options of a subscriber, before its handler is known. Immutable: each setter returns a new builder. The
     * values are checked when the subscriber subscribes.
     */
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

        /**
     * How many handlers run at once (1 to 1000); 10 by default.
     *
     * @param value the concurrency
     * @return a copy with this concurrency
     */
        public Builder concurrency(int value) {
            return new Builder(topics, value, lease, backoff, worker, shutdownTimeout);
        }

        /**
     * How long each claim holds a message (1 s to 24 h; 30 s by default); extended automatically once half of it
     * has passed while its handler runs.
     *
     * @param value the lease
     * @return a copy with this lease
     */
        public Builder lease(Duration value) {
            return new Builder(topics, concurrency, value, backoff, worker, shutdownTimeout);
        }

        /**
     * The wait before each retry of a message whose handler threw, instead of the queue's backoff for the topic.
     *
     * @param value the backoff
     * @return a copy with this backoff
     */
        public Builder retry(Backoff value) {
            return new Builder(topics, concurrency, lease, value, worker, shutdownTimeout);
        }

        /**
         * The worker name the subscriber claims under, shown in stats and logs; by default a name made of host and
         * process id.
         *
         * @param name 1 to 128 characters without control characters
         * @return a copy with this worker name
         */
        public Builder worker(String name) {
            return new Builder(topics, concurrency, lease, backoff, name, shutdownTimeout);
        }

        /**
     * How long {@link Subscription#close()} waits for running handlers (0 to 1 h; 30 s by default).
     *
     * @param value the shutdown timeout
     * @return a copy with this timeout
     */
        public Builder shutdownTimeout(Duration value) {
            return new Builder(topics, concurrency, lease, backoff, worker, value);
        }

        /**
     * Handles payloads decoded to {@code type} by the queue's codec. A payload that cannot be decoded makes the
     * message a dead letter without running the handler.
     *
     * @param type    the class to decode payloads to
     * @param handler the handler
     * @param <T>     the payload type
     * @return the subscriber, ready for {@link Namespace#subscribe}
     */
        public <T> Subscriber<T> handle(Class<T> type, MessageHandler<T> handler) {
            return new Subscriber<>(topics, concurrency, lease, backoff, worker, shutdownTimeout, type, handler);
        }

        /**
     * Handles deliveries as they are, payload as JSON text: {@code context.delivery().json()}.
     *
     * @param handler the handler, given each {@link Delivery}
     * @return the subscriber, ready for {@link Namespace#subscribe}
     */
        public Subscriber<Delivery> handleDelivery(MessageHandler<Delivery> handler) {
            return new Subscriber<>(topics, concurrency, lease, backoff, worker, shutdownTimeout, null, handler);
        }
    }
}
