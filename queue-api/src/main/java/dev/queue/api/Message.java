package dev.queue.api;

import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A message to publish: a topic, a payload and options. Immutable; every {@code with}-style method returns a
 * new instance, so a template can be shared and varied safely.
 *
 * <pre>{@code
 * Message.to("sync").payload(Map.of("user", 42)).uniqueKey("sync:user:42").delay(Duration.ofSeconds(30))
 * }</pre>
 *
 * Options left unset take the queue's defaults: priority {@value #DEFAULT_PRIORITY}, run now, no unique key,
 * max attempts from {@link QueueOptions#defaultMaxAttempts()}.
 */
public final class Message {

    /** Priorities run from 0 (first) to 9 (last); among equal priorities the earliest due message runs first. */
    public static final int DEFAULT_PRIORITY = 0;

    private final String topic;
    private final Object payload;
    private final boolean payloadIsJson;
    private final Map<String, String> headers;
    private final Integer priority;
    private final Integer maxAttempts;
    private final String uniqueKey;
    private final Duration delay;
    private final Instant runAt;

    private Message(String topic, Object payload, boolean payloadIsJson, Map<String, String> headers, Integer priority,
                    Integer maxAttempts, String uniqueKey, Duration delay, Instant runAt) {
        this.topic = topic;
        this.payload = payload;
        this.payloadIsJson = payloadIsJson;
        this.headers = headers;
        this.priority = priority;
        this.maxAttempts = maxAttempts;
        this.uniqueKey = uniqueKey;
        this.delay = delay;
        this.runAt = runAt;
    }

    /** Starts a message for a topic, with an empty JSON object as payload until one is given. */
    public static Message to(String topic) {
        return new Message(topic, "{}", true, Map.of(), null, null, null, null, null);
    }

    /** The payload as an object, encoded to JSON by the queue's codec when published. */
    public Message payload(Object value) {
        return new Message(topic, value, false, headers, priority, maxAttempts, uniqueKey, delay, runAt);
    }

    /** The payload as JSON text, stored exactly as given once checked to be valid JSON. */
    public Message json(String json) {
        return new Message(topic, json, true, headers, priority, maxAttempts, uniqueKey, delay, runAt);
    }

    public Message header(String name, String value) {
        Map<String, String> copy = new LinkedHashMap<>(headers);
        copy.put(name, value);
        return new Message(topic, payload, payloadIsJson, Collections.unmodifiableMap(copy), priority, maxAttempts, uniqueKey, delay, runAt);
    }

    public Message headers(Map<String, String> values) {
        Map<String, String> copy = new LinkedHashMap<>(headers);
        copy.putAll(InvalidInputException.requireNonNull(values, "headers", "a map of header names to values, possibly empty"));
        return new Message(topic, payload, payloadIsJson, Collections.unmodifiableMap(copy), priority, maxAttempts, uniqueKey, delay, runAt);
    }

    /** 0 runs first, 9 last. */
    public Message priority(int value) {
        return new Message(topic, payload, payloadIsJson, headers, value, maxAttempts, uniqueKey, delay, runAt);
    }

    /** How many times a handler may start on this message before it becomes a dead letter. */
    public Message maxAttempts(int value) {
        return new Message(topic, payload, payloadIsJson, headers, priority, value, uniqueKey, delay, runAt);
    }

    /**
     * While a message of the same topic with this key is pending or running, publishing another is a no-op
     * that reports {@link PublishResult.Duplicate}. Once the first is done or dead, the key is free again.
     */
    public Message uniqueKey(String key) {
        return new Message(topic, payload, payloadIsJson, headers, priority, maxAttempts, key, delay, runAt);
    }

    /** Not deliverable before this much time has passed since publishing. Replaces any {@link #runAt}. */
    public Message delay(Duration value) {
        return new Message(topic, payload, payloadIsJson, headers, priority, maxAttempts, uniqueKey, value, null);
    }

    /** Not deliverable before this instant. Replaces any {@link #delay}. */
    public Message runAt(Instant value) {
        return new Message(topic, payload, payloadIsJson, headers, priority, maxAttempts, uniqueKey, null, value);
    }

    public String topic() {
        return topic;
    }

    /** The payload object, or JSON text when {@link #payloadIsJson()}. */
    public Object payload() {
        return payload;
    }

    public boolean payloadIsJson() {
        return payloadIsJson;
    }

    public Map<String, String> headers() {
        return headers;
    }

    /** Null when not set. */
    public Integer priority() {
        return priority;
    }

    /** Null when not set. */
    public Integer maxAttempts() {
        return maxAttempts;
    }

    /** Null when not set. */
    public String uniqueKey() {
        return uniqueKey;
    }

    /** Null when not set. */
    public Duration delay() {
        return delay;
    }

    /** Null when not set. */
    public Instant runAt() {
        return runAt;
    }

    @Override
    public String toString() {
        return "Message{topic=" + topic + ", uniqueKey=" + uniqueKey + ", priority=" + priority + ", delay=" + delay
                + ", runAt=" + runAt + ", maxAttempts=" + maxAttempts + ", headers=" + headers.keySet() + '}';
    }
}
