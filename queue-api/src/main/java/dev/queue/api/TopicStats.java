package dev.queue.api;

/** Message counts of one topic. {@code completed} counts acknowledged messages since the topic was first used. */
public record TopicStats(String topic, long pending, long running, long completed, long dead) {

    public long total() {
        return pending + running + completed + dead;
    }
}
