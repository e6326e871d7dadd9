package dev.queue.inmemory;

import dev.queue.api.MessageState;

import java.time.Instant;
import java.util.TreeSet;

/** One topic of a namespace: its pending messages, by priority, and its counts. */
final class TopicState {

    /** Priorities run from 0 (claimed first) to {@code PRIORITIES - 1}. */
    static final int PRIORITIES = 10;

    final String namespace;
    final String name;
    /** Pending messages, one set per priority, by due time then id. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    final TreeSet<Msg>[] pending = new TreeSet[PRIORITIES];
    int pendingCount;
    /** Messages waiting behind the head of their ordering key (not in the pending sets). */
    int waitingCount;
    int running;
    long completed;
    int dead;

    TopicState(String namespace, String name) {
        this.namespace = namespace;
        this.name = name;
        for (int i = 0; i < PRIORITIES; i++) {
            pending[i] = new TreeSet<>(Msg.BY_DUE);
        }
    }

    /** Each priority's pending set is ordered by due time, so its first element is its oldest candidate. */
    Instant oldestDueAt(Instant now) {
        Instant oldest = null;
        for (TreeSet<Msg> byDue : pending) {
            if (!byDue.isEmpty()) {
                Instant runAt = byDue.first().runAt;
                if (!runAt.isAfter(now) && (oldest == null || runAt.isBefore(oldest))) {
                    oldest = runAt;
                }
            }
        }
        return oldest;
    }

    void addPending(Msg msg) {
        msg.state = MessageState.PENDING;
        pending[msg.priority].add(msg);
        pendingCount++;
    }

    void removePending(Msg msg) {
        if (pending[msg.priority].remove(msg)) {
            pendingCount--;
        }
    }

    @Override
    public String toString() {
        return namespace + "/" + name;
    }
}
