package dev.queue.inmemory;

import dev.queue.api.MessageId;
import dev.queue.api.MessageInfo;
import dev.queue.domain.port.MessageRef;

import java.util.Optional;

/** The inspection of {@link InMemoryMessageStore}: one pending, running or dead message as it stands. */
final class InMemoryInspect {

    private final InMemoryState state;

    InMemoryInspect(InMemoryState state) {
        this.state = state;
    }

    Optional<MessageInfo> messageFind(MessageRef message) {
        String namespace = message.namespace();
        long id = message.id();
        state.lock.lock();
        try {
            Msg msg = state.live.get(id);
            if (msg == null) {
                NamespaceState ns = state.namespaces.get(namespace);
                msg = ns == null ? null : ns.dead.get(id);
            }
            if (msg == null || !msg.namespace.equals(namespace)) {
                return Optional.empty();
            }
            return Optional.of(new MessageInfo(MessageId.of(msg.id), msg.namespace, msg.topic.name, msg.state, msg.json,
                    msg.headers, msg.priority, msg.attempts, msg.maxAttempts, msg.uniqueKey, msg.publishedAt, msg.runAt,
                    msg.leaseUntil, msg.worker, msg.lastError, msg.history(), msg.attemptsNotKept,
                    Optional.ofNullable(msg.orderingKey), msg.waiting));
        } finally {
            state.lock.unlock();
        }
    }
}
