package dev.queue.inmemory;

import dev.queue.api.Attempt;
import dev.queue.api.AttemptOutcome;
import dev.queue.api.DeadLetter;
import dev.queue.api.MessageId;
import dev.queue.api.MessageInfo;
import dev.queue.api.MessageState;
import dev.queue.domain.port.NewMessage;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/** One stored message. Its fields that order a sorted set change only while it is out of that set. */
final class Msg {

    /** The order of a topic's pending set. */
    static final Comparator<Msg> BY_DUE = Comparator.<Msg, Instant>comparing(m -> m.runAt)
            .thenComparingLong(m -> m.id);
    /** The order of the running messages. */
    static final Comparator<Msg> BY_LEASE_END = Comparator.<Msg, Instant>comparing(m -> m.leaseUntil)
            .thenComparingLong(m -> m.id);

    final long id;
    final String namespace;
    final TopicState topic;
    final String json;
    final Map<String, String> headers;
    final int priority;
    final int maxAttempts;
    final String uniqueKey;
    final String orderingKey;
    final Instant publishedAt;

    MessageState state;
    /** Pending behind the head of its ordering key, out of the pending sets. */
    boolean waiting;
    Instant runAt;
    int attempts;
    String worker;
    long leaseToken;
    Instant leaseUntil;
    String lastError;
    Instant failedAt;
    Instant attemptStartedAt;
    /** The ended attempts kept, oldest first; a success ends none here, the message leaves. */
    final java.util.ArrayDeque<Attempt> ended = new java.util.ArrayDeque<>();
    int attemptsNotKept;

    Msg(long id, NewMessage message, TopicState topic, Instant runAt, Instant publishedAt) {
        this.id = id;
        this.namespace = message.namespace();
        this.topic = topic;
        this.json = message.json();
        this.headers = message.headers() == null ? Map.of() : Map.copyOf(message.headers());
        this.priority = message.priority();
        this.maxAttempts = message.maxAttempts();
        this.uniqueKey = message.uniqueKey();
        this.orderingKey = message.orderingKey();
        this.publishedAt = publishedAt;
        this.runAt = runAt;
        this.state = MessageState.PENDING;
    }

    /** The ended attempts kept, then the running one. */
    List<Attempt> history() {
        List<Attempt> list = new ArrayList<>(ended);
        if (state == MessageState.RUNNING) {
            list.add(new Attempt(attempts, AttemptOutcome.RUNNING, worker, attemptStartedAt, null, null));
        }
        return list;
    }

    /** The attempt of a running message ended in a failure: kept in its history (the last few only, the rest counted). */
    void recordFailure(String error, Instant now, AttemptOutcome outcome) {
        ended.addLast(new Attempt(attempts, outcome, worker, attemptStartedAt, now, error));
        while (ended.size() > MessageInfo.HISTORY_LIMIT) {
            ended.removeFirst();
            attemptsNotKept++;
        }
    }

    /** Sorts after every message due at or before {@code now}: {@code set.higher(probe)} is the first due later. */
    private Msg(Instant now) {
        this.id = Long.MAX_VALUE;
        this.namespace = null;
        this.topic = null;
        this.json = null;
        this.headers = Map.of();
        this.priority = 0;
        this.maxAttempts = 0;
        this.uniqueKey = null;
        this.orderingKey = null;
        this.publishedAt = null;
        this.runAt = now;
    }

    static Msg probe(Instant now) {
        return new Msg(now);
    }

    UniqueKey uniqueKeyRef() {
        return new UniqueKey(namespace, topic.name, uniqueKey);
    }

    OrderingKey orderingKeyRef() {
        return new OrderingKey(namespace, topic.name, orderingKey);
    }

    DeadLetter toDeadLetter() {
        return new DeadLetter(MessageId.of(id), namespace, topic.name, json, headers, priority, attempts, maxAttempts,
                lastError, publishedAt, failedAt);
    }

    @Override
    public String toString() {
        return "Msg{id=" + id + ", " + topic + ", state=" + state + ", attempts=" + attempts + '}';
    }
}
