package dev.queue.inmemory;

import dev.queue.api.BehindDeadLetter;
import dev.queue.api.MessageState;
import dev.queue.api.TopicLimits;
import dev.queue.domain.port.CancelCommand;
import dev.queue.domain.port.PausedTopicsQuery;
import dev.queue.domain.port.TopicLimitsCommand;
import dev.queue.domain.port.TopicLimitsQuery;
import dev.queue.domain.port.TopicOrderingCommand;
import dev.queue.domain.port.TopicOrderingQuery;
import dev.queue.domain.port.TopicPauseCommand;
import dev.queue.inmemory.InMemoryWakeUps.TopicKey;

import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

import static dev.queue.inmemory.NamespaceState.bucketKey;

/**
 * The flow control of {@link InMemoryMessageStore}: pause and resume, the limits and rates of a topic (which the claim
 * applies, see {@link InMemoryClaim}), cancel, and ordering keys: the choice behind a dead letter and how the line of
 * a key advances when its head leaves.
 */
final class InMemoryFlowControl {

    private final InMemoryState state;

    InMemoryFlowControl(InMemoryState state) {
        this.state = state;
    }

    /** Under the lock every claim takes, so once a pause returns no claim starts a message of the topic. */
    boolean topicSetPaused(TopicPauseCommand command) {
        boolean changed;
        state.lock.lock();
        try {
            NamespaceState ns = state.namespace(command.namespace());
            changed = command.paused() ? ns.paused.add(command.topic()) : ns.paused.remove(command.topic());
        } finally {
            state.lock.unlock();
        }
        if (changed && !command.paused()) {
            state.wakeUps.signal(List.of(new TopicKey(command.namespace(), command.topic())));
        }
        return changed;
    }

    /** Under the lock every claim takes, so once limits are stored every claim counts against them. */
    boolean topicSetLimits(TopicLimitsCommand command) {
        boolean changed;
        state.lock.lock();
        try {
            NamespaceState ns = state.namespace(command.namespace());
            String topic = command.topic();
            TopicLimits old = ns.limits.get(topic);
            TopicLimits limits = command.limits();
            if (limits.isNone()) {
                changed = ns.limits.remove(topic) != null;
                ns.buckets.keySet().removeIf(key -> key.startsWith(topic + "\u0000"));
            } else {
                changed = !limits.equals(old);
                ns.limits.put(topic, limits);
                if (old != null && !old.partition().equals(limits.partition()) || limits.ratePerPartition().isEmpty()) {
                    ns.buckets.keySet().removeIf(key -> key.startsWith(topic + "\u0000p"));
                }
                if (limits.rate().isEmpty()) {
                    ns.buckets.remove(bucketKey(topic, null));
                }
            }
        } finally {
            state.lock.unlock();
        }
        if (changed) {
            state.wakeUps.signal(List.of(new TopicKey(command.namespace(), command.topic())));
        }
        return changed;
    }

    Map<String, TopicLimits> topicListLimits(TopicLimitsQuery query) {
        state.lock.lock();
        try {
            NamespaceState ns = state.namespaces.get(query.namespace());
            return ns == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(ns.limits));
        } finally {
            state.lock.unlock();
        }
    }

    List<String> topicListPaused(PausedTopicsQuery query) {
        state.lock.lock();
        try {
            NamespaceState ns = state.namespaces.get(query.namespace());
            return ns == null ? List.of() : List.copyOf(ns.paused);
        } finally {
            state.lock.unlock();
        }
    }

    Optional<MessageState> messageCancel(CancelCommand command) {
        Set<TopicKey> toWake = new LinkedHashSet<>();
        MessageState was;
        state.lock.lock();
        try {
            Msg msg = state.live.get(command.id());
            if (msg == null || !msg.namespace.equals(command.namespace())) {
                return Optional.empty();
            }
            was = msg.state;
            if (was == MessageState.RUNNING) {
                state.stopRunning(msg);
            } else if (msg.waiting) {
                KeyLine line = state.keyLines.get(msg.orderingKeyRef());
                line.waiting.remove(msg.id);
                msg.waiting = false;
                msg.topic.waitingCount--;
            } else {
                msg.topic.removePending(msg);
            }
            state.forget(msg);
            if (msg.orderingKey != null) {
                if (state.keyLines.get(msg.orderingKeyRef()).head == msg) {
                    headLeft(msg, false, state.now(command.time()), toWake);
                } else {
                    advance(msg.orderingKeyRef(), state.now(command.time()), toWake);
                }
            }
        } finally {
            state.lock.unlock();
        }
        state.wakeUps.signal(toWake);
        return Optional.of(was);
    }

    /** Under the store's lock, like every promotion. */
    boolean topicSetBehindDeadLetter(TopicOrderingCommand command) {
        Set<TopicKey> toWake = new LinkedHashSet<>();
        boolean changed;
        state.lock.lock();
        try {
            NamespaceState ns = state.namespace(command.namespace());
            changed = command.behindDeadLetter() == BehindDeadLetter.CONTINUE
                    ? ns.continueTopics.add(command.topic()) : ns.continueTopics.remove(command.topic());
            if (changed && command.behindDeadLetter() == BehindDeadLetter.CONTINUE) {
                Instant now = state.now(command.time());
                for (OrderingKey key : List.copyOf(state.keyLines.keySet())) {
                    if (key.namespace().equals(command.namespace()) && key.topic().equals(command.topic())) {
                        advance(key, now, toWake);
                    }
                }
            }
        } finally {
            state.lock.unlock();
        }
        state.wakeUps.signal(toWake);
        return changed;
    }

    BehindDeadLetter topicBehindDeadLetter(TopicOrderingQuery query) {
        state.lock.lock();
        try {
            NamespaceState ns = state.namespaces.get(query.namespace());
            return ns != null && ns.continueTopics.contains(query.topic()) ? BehindDeadLetter.CONTINUE : BehindDeadLetter.WAIT;
        } finally {
            state.lock.unlock();
        }
    }

    /** The head of an ordering key left (completed, cancelled or, {@code dead}, dead-lettered): the key advances. */
    void headLeft(Msg msg, boolean dead, Instant now, Set<TopicKey> toWake) {
        OrderingKey ref = msg.orderingKeyRef();
        KeyLine line = state.keyLines.get(ref);
        if (line.head == msg) {
            line.head = null;
        }
        if (dead) {
            line.dead.add(msg.id);
        }
        advance(ref, now, toWake);
    }

    /**
     * When the key has no pending or running message, its first waiting one becomes pending (due now if its due time
     * passed), unless its topic waits behind dead letters and a dead letter of the key came before it.
     */
    void advance(OrderingKey ref, Instant now, Set<TopicKey> toWake) {
        KeyLine line = state.keyLines.get(ref);
        if (line == null) {
            return;
        }
        if (line.head == null && !line.waiting.isEmpty()) {
            Msg next = line.waiting.firstEntry().getValue();
            boolean blocked = state.namespaces.get(ref.namespace()).waitsBehindDead(ref.topic())
                    && !line.dead.isEmpty() && line.dead.first() < next.id;
            if (!blocked) {
                line.waiting.remove(next.id);
                next.waiting = false;
                next.topic.waitingCount--;
                if (next.runAt.isBefore(now)) {
                    next.runAt = now;
                }
                line.head = next;
                next.topic.addPending(next);
                toWake.add(new TopicKey(next.namespace, next.topic.name));
            }
        }
        if (line.head == null && line.waiting.isEmpty() && line.dead.isEmpty()) {
            state.keyLines.remove(ref);
        }
    }
}
