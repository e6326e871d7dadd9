package dev.queue.inmemory;

import dev.queue.api.NamespaceStats;
import dev.queue.api.TopicStats;
import dev.queue.domain.port.StatsQuery;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/** The statistics of {@link InMemoryMessageStore}: the counts each topic keeps, summed over its namespace. */
final class InMemoryStats {

    private final InMemoryState state;

    InMemoryStats(InMemoryState state) {
        this.state = state;
    }

    NamespaceStats namespaceStats(StatsQuery query) {
        String namespace = query.namespace();
        state.lock.lock();
        try {
            Instant now = state.now(query.time());
            NamespaceState ns = state.namespaces.get(namespace);
            if (ns == null) {
                return new NamespaceStats(namespace, 0, 0, 0, 0, Map.of());
            }
            long pending = 0;
            long running = 0;
            long completed = 0;
            long dead = 0;
            Map<String, TopicStats> topics = new LinkedHashMap<>();
            for (TopicState topic : ns.topics.values()) {
                // a message waiting behind its ordering key counts as pending: it has not run
                topics.put(topic.name, new TopicStats(topic.name, topic.pendingCount + topic.waitingCount, topic.running,
                        topic.completed, topic.dead, topic.oldestDueAt(now)));
                pending += topic.pendingCount + topic.waitingCount;
                running += topic.running;
                completed += topic.completed;
                dead += topic.dead;
            }
            return new NamespaceStats(namespace, pending, running, completed, dead, topics);
        } finally {
            state.lock.unlock();
        }
    }
}
