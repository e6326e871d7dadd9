package dev.queue.inmemory;

import dev.queue.api.DeadLetter;
import dev.queue.api.MessageState;
import dev.queue.domain.port.CommandTime;
import dev.queue.domain.port.DeadLetterQuery;
import dev.queue.domain.port.MessageRef;
import dev.queue.domain.port.PurgeCommand;
import dev.queue.domain.port.RedriveCommand;
import dev.queue.domain.port.RedriveResult;
import dev.queue.inmemory.InMemoryWakeUps.TopicKey;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The dead letters of {@link InMemoryMessageStore}: how a message becomes one, and listing, finding, redriving and
 * purging them.
 */
final class InMemoryDeadLetters {

    private final InMemoryState state;
    private final InMemoryFlowControl flowControl;

    InMemoryDeadLetters(InMemoryState state, InMemoryFlowControl flowControl) {
        this.state = state;
        this.flowControl = flowControl;
    }

    /** A message whose lease was stopped becomes a dead letter; its ordering key goes on unless its topic waits. */
    void bury(Msg msg, Instant now, Set<TopicKey> toWake) {
        state.forget(msg);
        msg.state = MessageState.DEAD;
        msg.failedAt = now;
        msg.topic.dead++;
        state.namespaces.get(msg.namespace).dead.put(msg.id, msg);
        if (msg.orderingKey != null) {
            flowControl.headLeft(msg, true, now, toWake);
        }
    }

    List<DeadLetter> deadLetterList(DeadLetterQuery query) {
        if (query.limit() <= 0) {
            return List.of();
        }
        state.lock.lock();
        try {
            NamespaceState ns = state.namespaces.get(query.namespace());
            if (ns == null) {
                return List.of();
            }
            List<DeadLetter> page = new ArrayList<>(Math.min(query.limit(), 64));
            for (Msg msg : ns.dead.tailMap(query.afterId(), false).values()) {
                if (query.topic() == null || query.topic().equals(msg.topic.name)) {
                    page.add(msg.toDeadLetter());
                    if (page.size() >= query.limit()) {
                        break;
                    }
                }
            }
            return page;
        } finally {
            state.lock.unlock();
        }
    }

    Optional<DeadLetter> deadLetterFind(MessageRef message) {
        String namespace = message.namespace();
        long id = message.id();
        state.lock.lock();
        try {
            NamespaceState ns = state.namespaces.get(namespace);
            Msg msg = ns == null ? null : ns.dead.get(id);
            return msg == null ? Optional.empty() : Optional.of(msg.toDeadLetter());
        } finally {
            state.lock.unlock();
        }
    }

    RedriveResult deadLetterRedrive(RedriveCommand command) {
        Set<TopicKey> toWake = new LinkedHashSet<>();
        int redriven = 0;
        List<Msg> candidates;
        state.lock.lock();
        try {
            NamespaceState ns = state.namespaces.get(command.namespace());
            if (ns == null || (command.id() == null && command.topic() == null)) {
                return new RedriveResult(0, 0, command.afterId());
            }
            Instant now = state.now(command.time());
            candidates = deadLettersOf(ns, command.id(), command.topic(), command.afterId(), command.limit());
            for (Msg msg : candidates) {
                if (msg.uniqueKey != null && state.uniqueKeys.containsKey(msg.uniqueKeyRef())) {
                    continue; // a live message holds the key and already does the work
                }
                ns.dead.remove(msg.id);
                msg.topic.dead--;
                msg.attempts = 0;
                msg.runAt = now;
                msg.failedAt = null;
                state.live.put(msg.id, msg);
                if (msg.uniqueKey != null) {
                    state.uniqueKeys.put(msg.uniqueKeyRef(), msg.id);
                }
                if (msg.orderingKey == null) {
                    msg.topic.addPending(msg);
                    toWake.add(new TopicKey(msg.namespace, msg.topic.name));
                } else {
                    // back in line by its id: the head again unless something of its key is pending or running
                    KeyLine line = state.keyLines.computeIfAbsent(msg.orderingKeyRef(), k -> new KeyLine());
                    line.dead.remove(msg.id);
                    msg.waiting = true;
                    msg.state = MessageState.PENDING;
                    line.waiting.put(msg.id, msg);
                    msg.topic.waitingCount++;
                    flowControl.advance(msg.orderingKeyRef(), now, toWake);
                }
                redriven++;
            }
        } finally {
            state.lock.unlock();
        }
        state.wakeUps.signal(toWake);
        long lastId = candidates.isEmpty() ? command.afterId() : candidates.get(candidates.size() - 1).id;
        return new RedriveResult(redriven, candidates.size(), lastId);
    }

    int deadLetterPurge(PurgeCommand command) {
        Set<TopicKey> toWake = new LinkedHashSet<>();
        int purged;
        state.lock.lock();
        try {
            NamespaceState ns = state.namespaces.get(command.namespace());
            if (ns == null) {
                return 0;
            }
            List<Msg> victims = deadLettersOf(ns, command.id(), command.topic(), 0, command.limit());
            Instant now = state.now(CommandTime.storeClock());
            for (Msg msg : victims) {
                ns.dead.remove(msg.id);
                msg.topic.dead--;
                if (msg.orderingKey != null) {
                    KeyLine line = state.keyLines.get(msg.orderingKeyRef());
                    if (line != null) {
                        line.dead.remove(msg.id);
                    }
                    flowControl.advance(msg.orderingKeyRef(), now, toWake);
                }
            }
            purged = victims.size();
        } finally {
            state.lock.unlock();
        }
        state.wakeUps.signal(toWake);
        return purged;
    }

    /**
     * The dead letter with {@code id} when not null, else those of {@code topic} when not null, else all; by id,
     * above {@code afterId}, at most {@code limit}.
     */
    private static List<Msg> deadLettersOf(NamespaceState ns, Long id, String topic, long afterId, int limit) {
        if (id != null) {
            Msg msg = ns.dead.get(id);
            return msg == null ? List.of() : List.of(msg);
        }
        List<Msg> found = new ArrayList<>();
        for (Msg msg : ns.dead.tailMap(afterId, false).values()) {
            if (found.size() >= limit) {
                break;
            }
            if (topic == null || topic.equals(msg.topic.name)) {
                found.add(msg);
            }
        }
        return found;
    }
}
