package dev.queue.inmemory;

import dev.queue.api.TopicLimits;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/** One namespace: its topics, its dead letters and the flow control set on its topics. */
final class NamespaceState {
    final String name;
    final TreeMap<String, TopicState> topics = new TreeMap<>();
    /** Dead letters by id, oldest first. */
    final TreeMap<Long, Msg> dead = new TreeMap<>();
    /** Paused topics, by name: claims skip them. */
    final TreeSet<String> paused = new TreeSet<>();
    /** Limited topics, by name. */
    final TreeMap<String, TopicLimits> limits = new TreeMap<>();
    /** The token buckets of rate-limited topics and their partitions, by {@link #bucketKey}. */
    final Map<String, TokenBucket> buckets = new HashMap<>();

    /** Topics whose ordering keys go on behind a dead letter (the others wait). */
    final Set<String> continueTopics = new HashSet<>();

    boolean waitsBehindDead(String topic) {
        return !continueTopics.contains(topic);
    }

    NamespaceState(String name) {
        this.name = name;
    }

    TopicState topic(String topic) {
        return topics.computeIfAbsent(topic, t -> new TopicState(name, t));
    }

    /** The topic's bucket (partition null) or a partition's, in {@link #buckets}. */
    static String bucketKey(String topic, String partition) {
        return partition == null ? topic + "\u0000t" : topic + "\u0000p" + partition;
    }
}
