package dev.queue.api;

import dev.queue.api.observation.QueueInterceptor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Behaviour shared by every adapter, with documented defaults. Immutable; the setters do not check their values:
 * the whole set is validated once, when a queue is created (before the PostgreSQL adapter opens a connection, as
 * part of its configuration's {@code validate()}), and a bad value fails with {@link InvalidInputException} naming
 * the option and the value received.
 */
public final class QueueOptions {

    /** Attempts a message gets unless it sets its own: {@value}. */
    public static final int DEFAULT_MAX_ATTEMPTS = 20;
    /** The largest payload accepted by default, in bytes of UTF-8 JSON: 1 MiB. */
    public static final int DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;
    /** How often idle subscribers look for due messages, and expired leases are rescued, by default: 1 s. */
    public static final Duration DEFAULT_SWEEP_INTERVAL = Duration.ofSeconds(1);
    /** How often the queue fires due schedules by default: 1 s. */
    public static final Duration DEFAULT_SCHEDULE_TICK_INTERVAL = Duration.ofSeconds(1);
    /** How long {@link Queue#close()} waits for running calls by default: 30 s. */
    public static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(30);

    private final int defaultMaxAttempts;
    private final int maxPayloadBytes;
    private final Backoff defaultBackoff;
    private final Map<String, Backoff> topicBackoffs;
    private final Duration sweepInterval;
    private final PayloadCodec codec;
    private final Duration scheduleTickInterval;
    private final Duration closeTimeout;
    private final List<QueueInterceptor> interceptors;

    private QueueOptions(int defaultMaxAttempts, int maxPayloadBytes, Backoff defaultBackoff,
                         Map<String, Backoff> topicBackoffs, Duration sweepInterval, PayloadCodec codec,
                         Duration scheduleTickInterval, Duration closeTimeout, List<QueueInterceptor> interceptors) {
        this.defaultMaxAttempts = defaultMaxAttempts;
        this.maxPayloadBytes = maxPayloadBytes;
        this.defaultBackoff = defaultBackoff;
        this.topicBackoffs = topicBackoffs;
        this.sweepInterval = sweepInterval;
        this.codec = codec;
        this.scheduleTickInterval = scheduleTickInterval;
        this.closeTimeout = closeTimeout;
        this.interceptors = interceptors;
    }

    /**
     * Max attempts 20, payloads up to 1 MiB, backoff 1 s doubling to 1 h with 20% jitter, sweep every second,
     * schedules ticked every second, 30 s to close, the adapter's codec, no interceptors.
     *
     * @return the default options
     */
    public static QueueOptions defaults() {
        return new QueueOptions(DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_PAYLOAD_BYTES, Backoff.DEFAULT, Map.of(),
                DEFAULT_SWEEP_INTERVAL, null, DEFAULT_SCHEDULE_TICK_INTERVAL, DEFAULT_CLOSE_TIMEOUT, List.of());
    }

    /**
     * Attempts a message gets when it does not set {@link Message#maxAttempts(int)}.
     *
     * @param value 1 to 1000; {@value #DEFAULT_MAX_ATTEMPTS} by default
     * @return a copy with this default
     */
    public QueueOptions defaultMaxAttempts(int value) {
        return new QueueOptions(value, maxPayloadBytes, defaultBackoff, topicBackoffs, sweepInterval, codec, scheduleTickInterval, closeTimeout, interceptors);
    }

    /**
     * The largest payload accepted, in bytes of UTF-8 JSON; a larger one fails its publish with
     * {@link InvalidPayloadException}.
     *
     * @param value 2 to 64 MiB; 1 MiB by default
     * @return a copy with this limit
     */
    public QueueOptions maxPayloadBytes(int value) {
        return new QueueOptions(defaultMaxAttempts, value, defaultBackoff, topicBackoffs, sweepInterval, codec, scheduleTickInterval, closeTimeout, interceptors);
    }

    /**
     * The wait before retries of topics without a backoff of their own.
     *
     * @param value the backoff; {@link Backoff#DEFAULT} by default
     * @return a copy with this backoff
     */
    public QueueOptions defaultBackoff(Backoff value) {
        return new QueueOptions(defaultMaxAttempts, maxPayloadBytes, value, topicBackoffs, sweepInterval, codec, scheduleTickInterval, closeTimeout, interceptors);
    }

    /**
     * The backoff used by {@link Namespace#nack(Delivery, String)} and subscribers of this topic, unless a
     * subscriber sets its own.
     *
     * @param topic the topic, in every namespace
     * @param value the backoff
     * @return a copy with this topic's backoff set
     * @throws InvalidInputException when {@code topic} is null
     */
    public QueueOptions backoff(String topic, Backoff value) {
        Map<String, Backoff> copy = new HashMap<>(topicBackoffs);
        copy.put(InvalidInputException.requireNonNull(topic, "backoff topic", "a topic name"), value);
        return new QueueOptions(defaultMaxAttempts, maxPayloadBytes, defaultBackoff, Collections.unmodifiableMap(copy),
                sweepInterval, codec, scheduleTickInterval, closeTimeout, interceptors);
    }

    /**
     * How often idle subscribers look for due messages without a wake-up, and rescue expired leases. Wake-ups
     * make delivery prompt; the sweep only bounds the delay when a wake-up is lost.
     *
     * @param value 10 ms to 1 h; 1 s by default
     * @return a copy with this interval
     */
    public QueueOptions sweepInterval(Duration value) {
        return new QueueOptions(defaultMaxAttempts, maxPayloadBytes, defaultBackoff, topicBackoffs, value, codec, scheduleTickInterval, closeTimeout, interceptors);
    }

    /**
     * The codec that encodes payload objects and decodes them for handlers.
     *
     * @param value the codec; null for the adapter's default (Jackson)
     * @return a copy with this codec
     */
    public QueueOptions codec(PayloadCodec value) {
        return new QueueOptions(defaultMaxAttempts, maxPayloadBytes, defaultBackoff, topicBackoffs, sweepInterval, value, scheduleTickInterval, closeTimeout, interceptors);
    }

    /**
     * How often the queue fires due schedules by itself (it also wakes at the next due time). Zero turns the
     * automatic ticking off, for those who call {@link Schedules#tick()} themselves.
     *
     * @param value 0 (off) to 1 h; 1 s by default
     * @return a copy with this interval
     */
    public QueueOptions scheduleTickInterval(Duration value) {
        return new QueueOptions(defaultMaxAttempts, maxPayloadBytes, defaultBackoff, topicBackoffs, sweepInterval, codec, value, closeTimeout, interceptors);
    }

    /**
     * How long {@link Queue#close()} waits for calls already running (a publish, a pull, an acknowledgement) to
     * finish before it releases the store; new calls fail at once with {@link QueueClosedException}. A call still
     * running after this long fails with {@link QueueClosedException} too, its outcome unknown.
     *
     * @param value 0 to 1 h; 30 s by default
     * @return a copy with this timeout
     */
    public QueueOptions closeTimeout(Duration value) {
        return new QueueOptions(defaultMaxAttempts, maxPayloadBytes, defaultBackoff, topicBackoffs, sweepInterval, codec,
                scheduleTickInterval, value, interceptors);
    }

    /**
     * Adds an interceptor that hears of every publish, handler run and maintenance event, after those added
     * before. None by default, and then the queue does nothing extra on its hot paths.
     *
     * @param value the interceptor
     * @return a copy with the interceptor added
     * @throws InvalidInputException when {@code value} is null
     */
    public QueueOptions interceptor(QueueInterceptor value) {
        List<QueueInterceptor> copy = new ArrayList<>(interceptors);
        copy.add(InvalidInputException.requireNonNull(value, "interceptor", "a QueueInterceptor"));
        return new QueueOptions(defaultMaxAttempts, maxPayloadBytes, defaultBackoff, topicBackoffs, sweepInterval, codec,
                scheduleTickInterval, closeTimeout, List.copyOf(copy));
    }

    /**
     * The interceptors, in the order they were added; empty by default.
     *
     * @return an unmodifiable list
     */
    public List<QueueInterceptor> interceptors() {
        return interceptors;
    }

    /**
     * How long {@link Queue#close()} waits for running calls.
     *
     * @return the close timeout
     */
    public Duration closeTimeout() {
        return closeTimeout;
    }

    /**
     * How often the queue fires due schedules by itself.
     *
     * @return the interval; zero when automatic ticking is off
     */
    public Duration scheduleTickInterval() {
        return scheduleTickInterval;
    }

    /**
     * Attempts a message gets unless it sets its own.
     *
     * @return the default max attempts
     */
    public int defaultMaxAttempts() {
        return defaultMaxAttempts;
    }

    /**
     * The largest payload accepted.
     *
     * @return the limit in bytes of UTF-8 JSON
     */
    public int maxPayloadBytes() {
        return maxPayloadBytes;
    }

    /**
     * The backoff of topics without one of their own.
     *
     * @return the default backoff
     */
    public Backoff defaultBackoff() {
        return defaultBackoff;
    }

    /**
     * The backoffs set per topic.
     *
     * @return an unmodifiable map of topic names to backoffs, possibly empty
     */
    public Map<String, Backoff> topicBackoffs() {
        return topicBackoffs;
    }

    /**
     * The backoff that applies to a topic: its own, else the default.
     *
     * @param topic the topic
     * @return the topic's backoff
     * @throws InvalidInputException when {@code topic} is null
     */
    public Backoff backoffFor(String topic) {
        return topicBackoffs.getOrDefault(InvalidInputException.requireNonNull(topic, "topic", "a topic name"), defaultBackoff);
    }

    /**
     * How often idle subscribers look for due messages without a wake-up, and expired leases are rescued.
     *
     * @return the sweep interval
     */
    public Duration sweepInterval() {
        return sweepInterval;
    }

    /**
     * The codec set.
     *
     * @return the codec; null when the adapter's default applies
     */
    public PayloadCodec codec() {
        return codec;
    }

    @Override
    public String toString() {
        return "QueueOptions{defaultMaxAttempts=" + defaultMaxAttempts + ", maxPayloadBytes=" + maxPayloadBytes
                + ", defaultBackoff=" + defaultBackoff + ", topicBackoffs=" + topicBackoffs + ", sweepInterval=" + sweepInterval
                + ", scheduleTickInterval=" + scheduleTickInterval + ", closeTimeout=" + closeTimeout
                + ", interceptors=" + interceptors.size() + ", codec=" + (codec == null ? "the adapter's" : codec.getClass().getName()) + '}';
    }
}
