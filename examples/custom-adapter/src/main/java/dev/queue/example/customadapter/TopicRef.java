package dev.queue.example.customadapter;

/** A topic of a namespace: what unique keys, counters and wake-ups are kept per. */
record TopicRef(String namespace, String topic) implements Comparable<TopicRef> {

    @Override
    public int compareTo(TopicRef other) {
        int byNamespace = namespace.compareTo(other.namespace);
        return byNamespace != 0 ? byNamespace : topic.compareTo(other.topic);
    }
}
