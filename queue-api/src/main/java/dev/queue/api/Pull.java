package dev.queue.api;

import java.time.Duration;
import java.util.List;

/**
 * A request to lease messages: from one topic, or from several in the order given (all due messages of the
 * first topic before any of the second), for a named worker, up to a limit, for a visibility timeout. Immutable;
 * the setters do not check their values, {@link Namespace#pull(Pull)} does: 1 to 64 topics, each a valid name and
 * listed once; a limit of 1 to 1000; a visibility of 1 s to 24 h; a worker name of 1 to 128 characters without
 * control characters.
 */
public final class Pull {

    /** How long a pulled message is held unless set otherwise: 30 s. */
    public static final Duration DEFAULT_VISIBILITY = Duration.ofSeconds(30);

    private final List<String> topics;
    private final String worker;
    private final int limit;
    private final Duration visibility;

    private Pull(List<String> topics, String worker, int limit, Duration visibility) {
        this.topics = topics;
        this.worker = worker;
        this.limit = limit;
        this.visibility = visibility;
    }

    /**
     * A pull from one topic, of one message, held for {@link #DEFAULT_VISIBILITY}.
     *
     * @param topic the topic
     * @return a pull with default options
     */
    public static Pull from(String topic) {
        return new Pull(java.util.Collections.singletonList(topic), null, 1, DEFAULT_VISIBILITY);
    }

    /**
     * A pull from several topics in priority order: due messages of the first topic are taken before those of the
     * next.
     *
     * @param topics the topics, in priority order
     * @return a pull with default options
     */
    public static Pull fromAny(String... topics) {
        return new Pull(topics == null ? null : java.util.Arrays.asList(topics.clone()), null, 1, DEFAULT_VISIBILITY);
    }

    /**
     * A pull from several topics in priority order, as {@link #fromAny(String...)}.
     *
     * @param topics the topics, in priority order (copied)
     * @return a pull with default options
     */
    public static Pull fromAny(List<String> topics) {
        return new Pull(topics == null ? null : java.util.Collections.unmodifiableList(new java.util.ArrayList<>(topics)), null, 1, DEFAULT_VISIBILITY);
    }

    /**
     * Who holds the lease; shown in stats and logs. Defaults to a name made of host and process id.
     *
     * @param name 1 to 128 characters without control characters
     * @return a copy with this worker
     */
    public Pull worker(String name) {
        return new Pull(topics, name, limit, visibility);
    }

    /**
     * At most this many messages (1 to 1000).
     *
     * @param value the limit
     * @return a copy with this limit
     */
    public Pull limit(int value) {
        return new Pull(topics, worker, value, visibility);
    }

    /**
     * How long the caller holds each message before it may be delivered again (1 s to 24 h).
     *
     * @param value the visibility timeout
     * @return a copy with this visibility timeout
     */
    public Pull visibility(Duration value) {
        return new Pull(topics, worker, limit, value);
    }

    /**
     * The topics, in priority order.
     *
     * @return the topics as given
     */
    public List<String> topics() {
        return topics;
    }

    /**
     * The worker name set.
     *
     * @return the name; null when not set (the default name then)
     */
    public String worker() {
        return worker;
    }

    /**
     * How many messages at most.
     *
     * @return the limit
     */
    public int limit() {
        return limit;
    }

    /**
     * How long each message is held.
     *
     * @return the visibility timeout
     */
    public Duration visibility() {
        return visibility;
    }

    @Override
    public String toString() {
        return "Pull{topics=" + topics + ", worker=" + worker + ", limit=" + limit + ", visibility=" + visibility + '}';
    }
}
