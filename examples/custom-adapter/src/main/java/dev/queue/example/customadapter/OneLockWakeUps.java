package dev.queue.example.customadapter;

import dev.queue.domain.port.WakeUps;

import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Wake-ups within one process: every listener with the topics it listens to, called on the signalling thread.
 * The store signals only after it has released its lock, so a listener may call the store.
 */
final class OneLockWakeUps implements WakeUps {

    private static final System.Logger LOG = System.getLogger(OneLockWakeUps.class.getName());

    private final List<Listener> listeners = new CopyOnWriteArrayList<>();

    @Override
    public Registration listen(String namespace, Collection<String> topics, Runnable onWake) {
        Listener listener = new Listener(Objects.requireNonNull(namespace, "namespace"), Set.copyOf(topics),
                Objects.requireNonNull(onWake, "onWake"));
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }

    /** Wakes, once each, the listeners of any of the topics; a failing listener does not stop the others. */
    void signal(Collection<TopicRef> topics) {
        if (topics.isEmpty()) {
            return;
        }
        for (Listener listener : listeners) {
            if (topics.stream().anyMatch(listener::hears)) {
                try {
                    listener.onWake.run();
                } catch (RuntimeException e) {
                    // a wake-up is a hint: subscribers sweep anyway, so a failing listener costs latency only
                    LOG.log(System.Logger.Level.WARNING, "a wake-up listener failed; continuing", e);
                }
            }
        }
    }

    private record Listener(String namespace, Set<String> topics, Runnable onWake) {
        boolean hears(TopicRef topic) {
            return namespace.equals(topic.namespace()) && topics.contains(topic.topic());
        }
    }
}
