package dev.queue.domain.engine;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** The subscriptions running on one queue, and whether they run on their own threads or in {@code runDue()}. */
final class Subscriptions {

    private final boolean manualDispatch;
    private final CopyOnWriteArrayList<SubscriberRuntime> running = new CopyOnWriteArrayList<>();

    Subscriptions(boolean manualDispatch) {
        this.manualDispatch = manualDispatch;
    }

    boolean manualDispatch() {
        return manualDispatch;
    }

    void add(SubscriberRuntime runtime) {
        running.add(runtime);
    }

    void remove(SubscriberRuntime runtime) {
        running.remove(runtime);
    }

    /** Wakes the dispatchers of a namespace's subscriptions, so they claim at once what became due there. */
    void wake(String namespace) {
        for (SubscriberRuntime runtime : running) {
            runtime.wakeIfIn(namespace);
        }
    }

    /** Wakes the dispatchers of the subscriptions of a namespace that claim from the topic. */
    void wake(String namespace, String topic) {
        for (SubscriberRuntime runtime : running) {
            runtime.wakeIfOn(namespace, topic);
        }
    }

    /** Tells the subscriptions of a namespace that one of their messages was cancelled, so its handler can stop. */
    void cancelled(String namespace, long id) {
        for (SubscriberRuntime runtime : running) {
            runtime.cancelledIfIn(namespace, id);
        }
    }

    List<SubscriberRuntime> snapshot() {
        return List.copyOf(running);
    }
}
