package dev.queue.api;

import java.util.Map;

/**
 * Message counts of one namespace, in total and per topic (topics ordered by name). {@code completed} counts
 * acknowledged messages since the topics were first used.
 *
 * @param namespace the namespace
 * @param pending   messages waiting: due, delayed or waiting for a retry
 * @param running   messages leased to a worker
 * @param completed messages acknowledged
 * @param dead      dead letters
 * @param topics    the stats of each topic that has held a message, by topic name
 */
public record NamespaceStats(String namespace, long pending, long running, long completed, long dead,
                             Map<String, TopicStats> topics) {

    /**
     * Stats with the topics copied into an unmodifiable map ordered by name.
     *
     * @param namespace the namespace
     * @param pending   messages waiting: due, delayed or waiting for a retry
     * @param running   messages leased to a worker
     * @param completed messages acknowledged
     * @param dead      dead letters
     * @param topics    the stats of each topic, by topic name; possibly empty
     * @throws InvalidInputException when {@code topics} is null
     */
    public NamespaceStats {
        topics = java.util.Collections.unmodifiableMap(new java.util.TreeMap<>(
                InvalidInputException.requireNonNull(topics, "topics", "a map of topic names to their stats, possibly empty")));
    }

    /**
     * All messages counted, in every state.
     *
     * @return pending + running + completed + dead
     */
    public long total() {
        return pending + running + completed + dead;
    }

    /**
     * How many topics have ever held a message in this namespace.
     *
     * @return the number of topics
     */
    public int topicCount() {
        return topics.size();
    }

    /**
     * The stats of one topic.
     *
     * @param name the topic
     * @return its stats; all zero for a topic that never held a message
     * @throws InvalidInputException when {@code name} is null
     */
    public TopicStats topic(String name) {
        TopicStats stats = topics.get(InvalidInputException.requireNonNull(name, "topic", "a topic name"));
        return stats != null ? stats : new TopicStats(name, 0, 0, 0, 0);
    }
}
