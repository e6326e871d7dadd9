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

    public static final int DEFAULT_MAX_ATTEMPTS = 20;
    public static final int DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;
    public static final Duration DEFAULT_SWEEP_INTERVAL = Duration.ofSeconds(1);
    public static final Duration DEFAULT_SCHEDULE_TICK_INTERVAL = Duration.ofSeconds(1);
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

    /** Max attempts 20, payloads up to 1 MiB, backoff 1 s doubling to 1 h with 20% jitter, sweep every second. */
    public static QueueOptions defaults() {
        return new QueueOptions(DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_PAYLOAD_BYTES, Backoff.DEFAULT, Map.of(),
                DEFAULT_SWEEP_INTERVAL, null, DEFAULT_SCHEDULE_TICK_INTERVAL, DEFAULT_CLOSE_TIMEOUT, List.of());
    }

    public QueueOptions defaultMaxAttempts(int value) {
        return new QueueOptions(value, maxPayloadBytes, defaultBackoff, topicBackoffs, sweepInterval, codec, scheduleTickInterval, closeTimeout, interceptors);
    }

    public QueueOptions maxPayloadBytes(int value) {
        return new QueueOptions(defaultMaxAttempts, value, defaultBackoff, topicBackoffs, sweepInterval, codec, scheduleTickInterval, closeTimeout, interceptors);
    }

    public QueueOptions defaultBackoff(Backoff value) {
        return new QueueOptions(defaultMaxAttempts, maxPayloadBytes, value, topicBackoffs, sweepInterval, codec, scheduleTickInterval, closeTimeout, interceptors);
    }

    /** The backoff used by {@link Namespace#nack(Delivery, String)} and subscribers of this topic. */
    public QueueOptions backoff(String topic, Backoff value) {
        Map<String, Backoff> copy = new HashMap<>(topicBackoffs);
        copy.put(InvalidInputException.requireNonNull(topic, "backoff topic", "a topic name"), value);
        return new QueueOptions(defaultMaxAttempts, maxPayloadBytes, defaultBackoff, Collections.unmodifiableMap(copy),
                sweepInterval, codec, scheduleTickInterval, closeTimeout, interceptors);
    }

    /**
     * How often idle subscribers look for due messages without a wake-up, and rescue expired leases. Wake-ups
     * make delivery prompt; the sweep only bounds the delay when a wake-up is lost.
     */
    public QueueOptions sweepInterval(Duration value) {
        return new QueueOptions(defaultMaxAttempts, maxPayloadBytes, defaultBackoff, topicBackoffs, value, codec, scheduleTickInterval, closeTimeout, interceptors);
    }

    /** Null: the adapter's default (Jackson). */
    public QueueOptions codec(PayloadCodec value) {
        return new QueueOptions(defaultMaxAttempts, maxPayloadBytes, defaultBackoff, topicBackoffs, sweepInterval, value, scheduleTickInterval, closeTimeout, interceptors);
    }

    /**
     * How often the queue fires due schedules by itself (it also wakes at the next due time). Zero turns the
     * automatic ticking off, for those who call {@link Schedules#tick()} themselves.
     */
    public QueueOptions scheduleTickInterval(Duration value) {
        return new QueueOptions(defaultMaxAttempts, maxPayloadBytes, defaultBackoff, topicBackoffs, sweepInterval, codec, value, closeTimeout, interceptors);
    }

    /**
     * How long {@link Queue#close()} waits for calls already running (a publish, a pull, an acknowledgement) to
     * finish before it releases the store; new calls fail at once with {@link QueueClosedException}. A call still
     * running after this long fails with {@link QueueClosedException} too, its outcome unknown. 0 to 1 h; 30 s.
     */
    public QueueOptions closeTimeout(Duration value) {
        return new QueueOptions(defaultMaxAttempts, maxPayloadBytes, defaultBackoff, topicBackoffs, sweepInterval, codec,
                scheduleTickInterval, value, interceptors);
    }

    /**
     * Adds an interceptor that hears of every publish, handler run and maintenance event, after those added
     * before. None by default, and then the queue does nothing extra on its hot paths.
     */
    public QueueOptions interceptor(QueueInterceptor value) {
        List<QueueInterceptor> copy = new ArrayList<>(interceptors);
        copy.add(InvalidInputException.requireNonNull(value, "interceptor", "a QueueInterceptor"));
        return new QueueOptions(defaultMaxAttempts, maxPayloadBytes, defaultBackoff, topicBackoffs, sweepInterval, codec,
                scheduleTickInterval, closeTimeout, List.copyOf(copy));
    }

    /** The interceptors, in the order they were added; empty by default. */
    public List<QueueInterceptor> interceptors() {
        return interceptors;
    }

    public Duration closeTimeout() {
        return closeTimeout;
    }

    public Duration scheduleTickInterval() {
        return scheduleTickInterval;
    }

    public int defaultMaxAttempts() {
        return defaultMaxAttempts;
    }

    public int maxPayloadBytes() {
        return maxPayloadBytes;
    }

    public Backoff defaultBackoff() {
        return defaultBackoff;
    }

    public Map<String, Backoff> topicBackoffs() {
        return topicBackoffs;
    }

    public Backoff backoffFor(String topic) {
        return topicBackoffs.getOrDefault(InvalidInputException.requireNonNull(topic, "topic", "a topic name"), defaultBackoff);
    }

    public Duration sweepInterval() {
        return sweepInterval;
    }

    /** Null when the adapter's default applies. */
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
