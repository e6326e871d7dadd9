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
    private final String orderingKey;

    /**
     * A delivery as a store hands it out. Applications receive deliveries from {@link Namespace#pull(Pull)} or in
     * {@link MessageContext#delivery()}; adapters and tests build them.
     *
     * @param id          the message's id
     * @param namespace   the namespace the message belongs to
     * @param topic       the topic it was published to
     * @param json        the payload as stored JSON text
     * @param headers     its headers, possibly empty (copied)
     * @param priority    its priority, 0 (first) to 9 (last)
     * @param attempt     this attempt's number, from 1
     * @param maxAttempts how many attempts it is allowed
     * @param leaseToken  the token of this lease
     * @param worker      the worker holding the lease
     * @param leaseUntil  when the lease ends unless extended
     * @param publishedAt when it was published
     * @param codec       decodes {@link #payload(Class)}; null when the queue has none
     * @param orderingKey its ordering key; null when it has none
     * @throws InvalidInputException when the id, namespace, topic, json or headers are null
     */
    public Delivery(MessageId id, String namespace, String topic, String json, Map<String, String> headers, int priority,
                    int attempt, int maxAttempts, long leaseToken, String worker, Instant leaseUntil, Instant publishedAt,
                    PayloadCodec codec, String orderingKey) {
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
        this.orderingKey = orderingKey;
    }

    /**
     * A delivery without an ordering key, as a store that has none hands it out.
     *
     * @param id          the message's id
     * @param namespace   the namespace the message belongs to
     * @param topic       the topic it was published to
     * @param json        the payload as stored JSON text
     * @param headers     its headers, possibly empty (copied)
     * @param priority    its priority, 0 (first) to 9 (last)
     * @param attempt     this attempt's number, from 1
     * @param maxAttempts how many attempts it is allowed
     * @param leaseToken  the token of this lease
     * @param worker      the worker holding the lease
     * @param leaseUntil  when the lease ends unless extended
     * @param publishedAt when it was published
     * @param codec       decodes {@link #payload(Class)}; null when the queue has none
     * @throws InvalidInputException when the id, namespace, topic, json or headers are null
     */
    public Delivery(MessageId id, String namespace, String topic, String json, Map<String, String> headers, int priority,
                    int attempt, int maxAttempts, long leaseToken, String worker, Instant leaseUntil, Instant publishedAt,
                    PayloadCodec codec) {
        this(id, namespace, topic, json, headers, priority, attempt, maxAttempts, leaseToken, worker, leaseUntil,
                publishedAt, codec, null);
    }

    /**
     * The message's id, the same on every attempt.
     *
     * @return the id
     */
    public MessageId id() {
        return id;
    }

    /**
     * The namespace the message belongs to.
     *
     * @return the namespace name
     */
    public String namespace() {
        return namespace;
    }

    /**
     * The topic the message was published to.
     *
     * @return the topic name
     */
    public String topic() {
        return topic;
    }

    /**
     * The payload as the JSON text it was stored as.
     *
     * @return the JSON text, byte for byte as published
     */
    public String json() {
        return json;
    }

    /**
     * The payload decoded by the queue's codec.
     *
     * @param type the class to decode to
     * @param <T>  the payload type
     * @return the decoded payload
     * @throws PayloadCodecException when the JSON does not fit {@code type}, or the delivery has no codec
     */
    public <T> T payload(Class<T> type) {
        if (codec == null) {
            throw new PayloadCodecException("no payload codec configured; read json() instead", null);
        }
        return codec.decode(json, type);
    }

    /**
     * The message's headers, including any the queue set itself (names starting with {@code queue-}, on the
     * messages of a schedule).
     *
     * @return an unmodifiable map, possibly empty
     */
    public Map<String, String> headers() {
        return headers;
    }

    /**
     * The message's priority.
     *
     * @return 0 (first) to 9 (last)
     */
    public int priority() {
        return priority;
    }

    /**
     * Which attempt this is. A lease that expired counts as an attempt; a claim given back unstarted on shutdown
     * does not.
     *
     * @return 1 on the first delivery, 2 on the first retry, and so on
     */
    public int attempt() {
        return attempt;
    }

    /**
     * How many attempts the message is allowed before it becomes a dead letter.
     *
     * @return the maximum number of attempts
     */
    public int maxAttempts() {
        return maxAttempts;
    }

    /**
     * Whether a failure of this attempt makes the message a dead letter.
     *
     * @return true on the last allowed attempt
     */
    public boolean isLastAttempt() {
        return attempt >= maxAttempts;
    }

    /**
     * The token of this lease. Together with the id it identifies the holder: a settlement naming an old token
     * is answered with {@link Outcome#LEASE_LOST} and changes nothing.
     *
     * @return the lease token
     */
    public long leaseToken() {
        return leaseToken;
    }

    /**
     * The worker that holds the lease.
     *
     * @return the worker name
     */
    public String worker() {
        return worker;
    }

    /**
     * When the lease ends unless extended, as of the claim; an {@link Namespace#extend extension} does not change
     * this instance.
     *
     * @return the lease's end when claimed
     */
    public Instant leaseUntil() {
        return leaseUntil;
    }

    /**
     * When the message was published.
     *
     * @return the publish time, by the queue's clock
     */
    public Instant publishedAt() {
        return publishedAt;
    }

    /**
     * The message's ordering key ({@link Message#orderingKey(String)}): while this delivery runs, no other message of
     * the key does, and the later ones wait for it to leave.
     *
     * @return the key; empty when the message has none
     */
    public java.util.Optional<String> orderingKey() {
        return java.util.Optional.ofNullable(orderingKey);
    }

    @Override
    public String toString() {
        return "Delivery{id=" + id + ", namespace=" + namespace + ", topic=" + topic + ", attempt=" + attempt + "/"
                + maxAttempts + ", worker=" + worker + ", leaseUntil=" + leaseUntil + '}';
    }
}
