package dev.queue.api;

import java.time.Duration;
import java.util.List;

/**
 * A request to lease messages: from one topic, or from several in the order given (all due messages of the
 * first topic before any of the second), for a named worker, up to a limit, for a visibility timeout.
 */
public final class Pull {

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

    public static Pull from(String topic) {
        return new Pull(java.util.Collections.singletonList(topic), null, 1, DEFAULT_VISIBILITY);
    }

    /** Topics in priority order: the first topic with a due message wins. */
    public static Pull fromAny(String... topics) {
        return new Pull(topics == null ? null : java.util.Arrays.asList(topics.clone()), null, 1, DEFAULT_VISIBILITY);
    }

    public static Pull fromAny(List<String> topics) {
        return new Pull(topics == null ? null : java.util.Collections.unmodifiableList(new java.util.ArrayList<>(topics)), null, 1, DEFAULT_VISIBILITY);
    }

    /** Who holds the lease; shown in stats and logs. Defaults to this process. */
    public Pull worker(String name) {
        return new Pull(topics, name, limit, visibility);
    }

    /** At most this many messages (1 to 1000). */
    public Pull limit(int value) {
        return new Pull(topics, worker, value, visibility);
    }

    /** How long the caller holds each message before it may be delivered again. */
    public Pull visibility(Duration value) {
        return new Pull(topics, worker, limit, value);
    }

    public List<String> topics() {
        return topics;
    }

    /** Null when not set. */
    public String worker() {
        return worker;
    }

    public int limit() {
        return limit;
    }

    public Duration visibility() {
        return visibility;
    }

    @Override
    public String toString() {
        return "Pull{topics=" + topics + ", worker=" + worker + ", limit=" + limit + ", visibility=" + visibility + '}';
    }
}
