package dev.queue.inmemory;

import dev.queue.domain.port.WakeUps;

import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Wake-ups within one process: listeners registered per namespace and topic, called on the signalling thread.
 * The {@link InMemoryMessageStore} signals after its lock is released, so a listener may call the store.
 * Thread-safe.
 */
public final class InMemoryWakeUps implements WakeUps {

    private static final System.Logger LOG = System.getLogger(InMemoryWakeUps.class.getName());

    private final ConcurrentHashMap<TopicKey, CopyOnWriteArrayList<Listener>> listeners = new ConcurrentHashMap<>();

    @Override
    public Registration listen(String namespace, Collection<String> topics, Runnable onWake) {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(topics, "topics");
        Listener listener = new Listener(Objects.requireNonNull(onWake, "onWake"));
        Set<TopicKey> keys = new LinkedHashSet<>();
        for (String topic : topics) {
            keys.add(new TopicKey(namespace, Objects.requireNonNull(topic, "topic")));
        }
        for (TopicKey key : keys) {
            listeners.compute(key, (k, list) -> {
                CopyOnWriteArrayList<Listener> target = list != null ? list : new CopyOnWriteArrayList<>();
                target.add(listener);
                return target;
            });
        }
        return () -> {
            if (listener.closed.compareAndSet(false, true)) {
                for (TopicKey key : keys) {
                    listeners.computeIfPresent(key, (k, list) -> {
                        list.remove(listener);
                        return list.isEmpty() ? null : list;
                    });
                }
            }
        };
    }

    /** Wakes every listener of the topic of the namespace, on this thread. */
    public void signal(String namespace, String topic) {
        signal(List.of(new TopicKey(namespace, topic)));
    }

    /** How many listeners wait on the topic of the namespace. */
    public int listenerCount(String namespace, String topic) {
        List<Listener> list = listeners.get(new TopicKey(namespace, topic));
        return list == null ? 0 : list.size();
    }

    /** Wakes each listener of any of the topics once, however many of them it listens to. */
    void signal(Collection<TopicKey> topics) {
        if (topics.isEmpty()) {
            return;
        }
        Set<Listener> toWake = Collections.newSetFromMap(new IdentityHashMap<>());
        for (TopicKey key : topics) {
            List<Listener> list = listeners.get(key);
            if (list != null) {
                toWake.addAll(list);
            }
        }
        for (Listener listener : toWake) {
            if (listener.closed.get()) {
                continue;
            }
            try {
                listener.onWake.run();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "a wake-up listener failed; wake-ups are only hints, continuing", e);
            }
        }
    }

    /** A topic of a namespace. */
    record TopicKey(String namespace, String topic) {
    }

    private static final class Listener {
        final Runnable onWake;
        final AtomicBoolean closed = new AtomicBoolean();

        Listener(Runnable onWake) {
            this.onWake = onWake;
        }
    }
}
