package dev.queue.inmemory;

import dev.queue.api.InvalidInputException;
import dev.queue.api.MessageId;
import dev.queue.api.MessageState;
import dev.queue.domain.port.CommandTime;
import dev.queue.domain.port.NewMessage;
import dev.queue.domain.port.PublishCommand;
import dev.queue.domain.port.StoredOutcome;
import dev.queue.inmemory.InMemoryWakeUps.TopicKey;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

import static dev.queue.inmemory.InMemoryState.micros;
import static dev.queue.inmemory.TopicState.PRIORITIES;

/**
 * The publish of {@link InMemoryMessageStore}: stores new messages, or finds the holder of their unique key, and puts
 * a message with an ordering key behind the messages of its key. Schedules publish through {@link #storeUnderLock}.
 */
final class InMemoryPublish {

    private final InMemoryState state;

    InMemoryPublish(InMemoryState state) {
        this.state = state;
    }

    List<StoredOutcome> messageInsertMany(PublishCommand command) {
        List<NewMessage> messages = command.messages();
        for (int i = 0; i < messages.size(); i++) {
            check(messages.get(i), i);
        }
        return storeUnderLock(command.time(), (now, store) -> {
            List<StoredOutcome> outcomes = new ArrayList<>(messages.size());
            for (NewMessage message : messages) {
                outcomes.add(store.apply(message));
            }
            return outcomes;
        });
    }

    /** Work that stores messages at one resolved time while the store's lock is held. */
    interface StoringWork<T> {
        T run(Instant now, Function<NewMessage, StoredOutcome> store);
    }

    /**
     * Runs {@code work} under the lock at the command's time; listeners of the topics it stored into are woken once
     * the lock is released.
     */
    <T> T storeUnderLock(CommandTime time, StoringWork<T> work) {
        Set<TopicKey> toWake = new LinkedHashSet<>();
        T result;
        state.lock.lock();
        try {
            Instant now = state.now(time);
            result = work.run(now, message -> storeLocked(message, now, toWake));
        } finally {
            state.lock.unlock();
        }
        state.wakeUps.signal(toWake);
        return result;
    }

    /** Stores one message (or finds the holder of its key); the caller holds the lock. */
    private StoredOutcome storeLocked(NewMessage message, Instant now, Set<TopicKey> toWake) {
        UniqueKey key = message.uniqueKey() == null ? null
                : new UniqueKey(message.namespace(), message.topic(), message.uniqueKey());
        Long holder = key == null ? null : state.uniqueKeys.get(key);
        if (holder != null) {
            return new StoredOutcome(holder, true);
        }
        Instant runAt = message.runAt() != null ? micros(message.runAt())
                : micros(now.plus(message.delay() == null ? Duration.ZERO : message.delay()));
        NamespaceState ns = state.namespace(message.namespace());
        TopicState topic = ns.topic(message.topic());
        Msg msg = new Msg(state.ids.incrementAndGet(), message, topic, runAt, now);
        state.live.put(msg.id, msg);
        if (key != null) {
            state.uniqueKeys.put(key, msg.id);
        }
        if (msg.orderingKey == null) {
            topic.addPending(msg);
        } else {
            KeyLine line = state.keyLines.computeIfAbsent(msg.orderingKeyRef(), k -> new KeyLine());
            if (line.head == null && line.waiting.isEmpty() && (!ns.waitsBehindDead(topic.name) || line.dead.isEmpty())) {
                line.head = msg;
                topic.addPending(msg);
            } else {
                msg.waiting = true;
                msg.state = MessageState.PENDING;
                line.waiting.put(msg.id, msg);
                topic.waitingCount++;
            }
        }
        state.published.add(new PublishedMessage(MessageId.of(msg.id), msg.namespace, msg.topic.name, msg.json,
                msg.headers, now));
        toWake.add(new TopicKey(msg.namespace, msg.topic.name));
        return new StoredOutcome(msg.id, false);
    }


    /** Inputs arrive validated; this only keeps a broken caller from storing half a batch. */
    private static void check(NewMessage message, int index) {
        String at = "messages[" + index + "].";
        if (message == null) {
            throw new InvalidInputException("messages[" + index + "]", null, "a message");
        }
        if (message.namespace() == null) {
            throw new InvalidInputException(at + "namespace", null, "a namespace");
        }
        if (message.topic() == null) {
            throw new InvalidInputException(at + "topic", null, "a topic");
        }
        if (message.json() == null) {
            throw new InvalidInputException(at + "json", null, "JSON text");
        }
        if (message.priority() < 0 || message.priority() >= PRIORITIES) {
            throw new InvalidInputException(at + "priority", message.priority(), "0 to " + (PRIORITIES - 1));
        }
        if (message.maxAttempts() < 1) {
            throw new InvalidInputException(at + "maxAttempts", message.maxAttempts(), "at least 1");
        }
    }
}
