package dev.queue.api;

import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A message to publish: a topic, a payload and options. Immutable; every {@code with}-style method returns a
 * new instance, so a template can be shared and varied safely. The setters do not check their values; publishing
 * does, and refuses a bad one with {@link InvalidInputException} before anything is stored.
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
    private final String orderingKey;

    private Message(String topic, Object payload, boolean payloadIsJson, Map<String, String> headers, Integer priority,
                    Integer maxAttempts, String uniqueKey, Duration delay, Instant runAt, String orderingKey) {
        this.topic = topic;
        this.payload = payload;
        this.payloadIsJson = payloadIsJson;
        this.headers = headers;
        this.priority = priority;
        this.maxAttempts = maxAttempts;
        this.uniqueKey = uniqueKey;
        this.delay = delay;
        this.runAt = runAt;
        this.orderingKey = orderingKey;
    }

    /**
     * Starts a message for a topic, with an empty JSON object as payload until one is given.
     *
     * @param topic 1 to 64 characters: letters, digits, {@code .}, {@code _} or {@code -}, starting with a letter
     *              or digit
     * @return a message with default options
     */
    public static Message to(String topic) {
        return new Message(topic, "{}", true, Map.of(), null, null, null, null, null, null);
    }

    /**
     * The payload as an object, encoded to JSON by the queue's codec when published. A value the codec cannot
     * write fails the publish with {@link InvalidPayloadException}.
     *
     * @param value the payload object
     * @return a copy with this payload
     */
    public Message payload(Object value) {
        return new Message(topic, value, false, headers, priority, maxAttempts, uniqueKey, delay, runAt, orderingKey);
    }

    /**
     * The payload as JSON text, stored exactly as given once checked to be valid JSON. Text that is not one valid
     * JSON value, or is larger than {@link QueueOptions#maxPayloadBytes()} in UTF-8, fails the publish with
     * {@link InvalidPayloadException}.
     *
     * @param json the payload as JSON text ({@code "null"} for a JSON null)
     * @return a copy with this payload
     */
    public Message json(String json) {
        return new Message(topic, json, true, headers, priority, maxAttempts, uniqueKey, delay, runAt, orderingKey);
    }

    /**
     * Sets one header, replacing a header of that name. At most 32 headers; names follow the naming rule of topics
     * and must not start with {@code queue-} (in any case), which the queue keeps for its own; values are at most
     * 1024 characters, without NUL.
     *
     * @param name  the header name
     * @param value the header value
     * @return a copy with this header
     */
    public Message header(String name, String value) {
        Map<String, String> copy = new LinkedHashMap<>(headers);
        copy.put(name, value);
        return new Message(topic, payload, payloadIsJson, Collections.unmodifiableMap(copy), priority, maxAttempts, uniqueKey, delay, runAt, orderingKey);
    }

    /**
     * Sets several headers, replacing headers of the same names, under the rules of {@link #header(String, String)}.
     *
     * @param values header names to values, possibly empty
     * @return a copy with these headers added
     * @throws InvalidInputException when {@code values} is null
     */
    public Message headers(Map<String, String> values) {
        Map<String, String> copy = new LinkedHashMap<>(headers);
        copy.putAll(InvalidInputException.requireNonNull(values, "headers", "a map of header names to values, possibly empty"));
        return new Message(topic, payload, payloadIsJson, Collections.unmodifiableMap(copy), priority, maxAttempts, uniqueKey, delay, runAt, orderingKey);
    }

    /**
     * Where the message stands among due messages of its topic: 0 runs first, 9 last.
     *
     * @param value 0 to 9
     * @return a copy with this priority
     */
    public Message priority(int value) {
        return new Message(topic, payload, payloadIsJson, headers, value, maxAttempts, uniqueKey, delay, runAt, orderingKey);
    }

    /**
     * How many times a handler may start on this message before it becomes a dead letter.
     *
     * @param value 1 to 1000
     * @return a copy with this limit
     */
    public Message maxAttempts(int value) {
        return new Message(topic, payload, payloadIsJson, headers, priority, value, uniqueKey, delay, runAt, orderingKey);
    }

    /**
     * While a message of the same topic with this key is pending or running, publishing another is a no-op
     * that reports {@link PublishResult.Duplicate}. Once the first is done or dead, the key is free again.
     * Keys are scoped to the namespace and topic.
     *
     * @param key 1 to 255 characters without control characters; null for none
     * @return a copy with this key
     */
    public Message uniqueKey(String key) {
        return new Message(topic, payload, payloadIsJson, headers, priority, maxAttempts, key, delay, runAt, orderingKey);
    }

    /**
     * Runs this message only after every message published earlier to the same topic of the namespace with the same
     * ordering key has left the queue (completed, cancelled, or dead-lettered: what follows a dead letter is the
     * topic's choice, {@link FlowControl#setBehindDeadLetter(String, BehindDeadLetter)}), and never while another
     * message of the key runs, in any process. Earlier means published before: by the order of ids, which for one
     * key is the order its publishers committed in. A retry, a snooze and a rescued lease keep the message's place
     * (the later ones wait). Messages without a key, and other keys, are not held back. Keys are scoped to the
     * namespace and topic; schedules do not take one. A store without ordering keys refuses the publish with
     * {@link UnsupportedCapabilityException}.
     *
     * @param key 1 to 255 characters without control characters (the limits of {@link #uniqueKey(String)}); null
     *            for none
     * @return a copy with this ordering key
     */
    public Message orderingKey(String key) {
        return new Message(topic, payload, payloadIsJson, headers, priority, maxAttempts, uniqueKey, delay, runAt, key);
    }

    /**
     * Not deliverable before this much time has passed since publishing. Replaces any {@link #runAt}.
     *
     * @param value 0 to 365 days
     * @return a copy with this delay
     */
    public Message delay(Duration value) {
        return new Message(topic, payload, payloadIsJson, headers, priority, maxAttempts, uniqueKey, value, null, orderingKey);
    }

    /**
     * Not deliverable before this instant; an instant in the past means now. Replaces any {@link #delay}.
     *
     * @param value an instant between 1970 and 9999
     * @return a copy due at this instant
     */
    public Message runAt(Instant value) {
        return new Message(topic, payload, payloadIsJson, headers, priority, maxAttempts, uniqueKey, null, value, orderingKey);
    }

    /**
     * The topic the message is for.
     *
     * @return the topic name as given
     */
    public String topic() {
        return topic;
    }

    /**
     * The payload object, or JSON text when {@link #payloadIsJson()}.
     *
     * @return the payload as given
     */
    public Object payload() {
        return payload;
    }

    /**
     * Whether the payload is JSON text, given with {@link #json(String)}, rather than an object for the codec.
     *
     * @return true for JSON text
     */
    public boolean payloadIsJson() {
        return payloadIsJson;
    }

    /**
     * The headers set so far, in the order they were set.
     *
     * @return an unmodifiable map, possibly empty
     */
    public Map<String, String> headers() {
        return headers;
    }

    /**
     * The priority set.
     *
     * @return the priority; null when not set ({@value #DEFAULT_PRIORITY} then)
     */
    public Integer priority() {
        return priority;
    }

    /**
     * The attempt limit set.
     *
     * @return the limit; null when not set (the queue's {@link QueueOptions#defaultMaxAttempts()} then)
     */
    public Integer maxAttempts() {
        return maxAttempts;
    }

    /**
     * The unique key set.
     *
     * @return the key; null when not set
     */
    public String uniqueKey() {
        return uniqueKey;
    }

    /**
     * The ordering key set.
     *
     * @return the key; null when not set
     */
    public String orderingKey() {
        return orderingKey;
    }

    /**
     * The delay set.
     *
     * @return the delay; null when not set, or replaced by {@link #runAt()}
     */
    public Duration delay() {
        return delay;
    }

    /**
     * The due instant set.
     *
     * @return the instant; null when not set, or replaced by {@link #delay()}
     */
    public Instant runAt() {
        return runAt;
    }

    @Override
    public String toString() {
        return "Message{topic=" + topic + ", uniqueKey=" + uniqueKey + ", orderingKey=" + orderingKey + ", priority=" + priority + ", delay=" + delay
                + ", runAt=" + runAt + ", maxAttempts=" + maxAttempts + ", headers=" + headers.keySet() + '}';
    }
}
