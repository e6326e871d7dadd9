package dev.queue.api;

import java.time.Instant;
import java.util.Map;

/**
 * A message leased to a worker. The lease is identified by the message id and a lease token; only the
 * holder of both may acknowledge, retry, fail or extend it. Immutable: an extension does not change
 * {@link #leaseUntil()} of an existing instance.
 */
public final class Delivery {

    private final MessageId id;
    private final String namespace;
    private final String topic;
    private final String json;
    private final Map<String, String> headers;
    private final int priority;
    private final int attempt;
    private final int maxAttempts;
    private final long leaseToken;
    private final String worker;
    private final Instant leaseUntil;
    private final Instant publishedAt;
    private final PayloadCodec codec;

    public Delivery(MessageId id, String namespace, String topic, String json, Map<String, String> headers, int priority,
                    int attempt, int maxAttempts, long leaseToken, String worker, Instant leaseUntil, Instant publishedAt,
                    PayloadCodec codec) {
        this.id = InvalidInputException.requireNonNull(id, "id", "the message id");
        this.namespace = InvalidInputException.requireNonNull(namespace, "namespace", "the namespace name");
        this.topic = InvalidInputException.requireNonNull(topic, "topic", "the topic name");
        this.json = InvalidInputException.requireNonNull(json, "json", "the payload as JSON text");
        this.headers = Map.copyOf(InvalidInputException.requireNonNull(headers, "headers", "a map of headers, possibly empty"));
        this.priority = priority;
        this.attempt = attempt;
        this.maxAttempts = maxAttempts;
        this.leaseToken = leaseToken;
        this.worker = worker;
        this.leaseUntil = leaseUntil;
        this.publishedAt = publishedAt;
        this.codec = codec;
    }

    public MessageId id() {
        return id;
    }

    public String namespace() {
        return namespace;
    }

    public String topic() {
        return topic;
    }

    /** The payload as the JSON text it was stored as. */
    public String json() {
        return json;
    }

    /** The payload decoded by the queue's codec. */
    public <T> T payload(Class<T> type) {
        if (codec == null) {
            throw new PayloadCodecException("no payload codec configured; read json() instead", null);
        }
        return codec.decode(json, type);
    }

    public Map<String, String> headers() {
        return headers;
    }

    public int priority() {
        return priority;
    }

    /** 1 on the first delivery, 2 on the first retry, and so on. */
    public int attempt() {
        return attempt;
    }

    public int maxAttempts() {
        return maxAttempts;
    }

    /** True when a failure of this attempt makes the message a dead letter. */
    public boolean isLastAttempt() {
        return attempt >= maxAttempts;
    }

    public long leaseToken() {
        return leaseToken;
    }

    public String worker() {
        return worker;
    }

    public Instant leaseUntil() {
        return leaseUntil;
    }

    public Instant publishedAt() {
        return publishedAt;
    }

    @Override
    public String toString() {
        return "Delivery{id=" + id + ", namespace=" + namespace + ", topic=" + topic + ", attempt=" + attempt + "/"
                + maxAttempts + ", worker=" + worker + ", leaseUntil=" + leaseUntil + '}';
    }
}
