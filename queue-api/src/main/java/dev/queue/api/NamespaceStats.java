package dev.queue.api;

import java.util.Map;

/** Message counts of one namespace, in total and per topic (topics ordered by name). */
public record NamespaceStats(String namespace, long pending, long running, long completed, long dead,
                             Map<String, TopicStats> topics) {

    public NamespaceStats {
        topics = java.util.Collections.unmodifiableMap(new java.util.TreeMap<>(
                InvalidInputException.requireNonNull(topics, "topics", "a map of topic names to their stats, possibly empty")));
    }

    public long total() {
        return pending + running + completed + dead;
    }

    /** How many topics have ever held a message in this namespace. */
    public int topicCount() {
        return topics.size();
    }

    public TopicStats topic(String name) {
        TopicStats stats = topics.get(InvalidInputException.requireNonNull(name, "topic", "a topic name"));
        return stats != null ? stats : new TopicStats(name, 0, 0, 0, 0);
    }
}
