package dev.queue.domain.engine;

import dev.queue.api.BehindDeadLetter;
import dev.queue.api.FlowControl;
import dev.queue.api.InvalidInputException;
import dev.queue.api.MessageId;
import dev.queue.api.MessageState;
import dev.queue.api.TopicLimits;
import dev.queue.domain.port.CancelCommand;
import dev.queue.domain.port.Clock;
import dev.queue.domain.port.MessageStore;
import dev.queue.domain.port.PausedTopicsQuery;
import dev.queue.domain.port.TopicLimitsCommand;
import dev.queue.domain.port.TopicLimitsQuery;
import dev.queue.domain.port.TopicOrderingCommand;
import dev.queue.domain.port.TopicOrderingQuery;
import dev.queue.domain.port.TopicPauseCommand;
import dev.queue.domain.rules.InputRules;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Pause, resume, limits, cancel and the choice behind dead letters in one namespace: validation first, then one store call. */
final class FlowControlService implements FlowControl {

    private final String namespace;
    private final MessageStore store;
    private final InputRules rules;
    private final CallGate calls;
    private final Clock time;
    private final Subscriptions subscriptions;

    FlowControlService(String namespace, MessageStore store, InputRules rules, CallGate calls, Clock time,
                       Subscriptions subscriptions) {
        this.namespace = namespace;
        this.store = store;
        this.rules = rules;
        this.calls = calls;
        this.time = time;
        this.subscriptions = subscriptions;
    }

    @Override
    public boolean pause(String topic) {
        return setPaused(topic, true);
    }

    @Override
    public boolean resume(String topic) {
        boolean resumed = setPaused(topic, false);
        if (resumed) {
            // the store wakes listeners of other processes; this one's subscriptions claim at once
            subscriptions.wake(namespace);
        }
        return resumed;
    }

    private boolean setPaused(String topic, boolean paused) {
        rules.topic(topic);
        return calls.call(() -> store.topicSetPaused(new TopicPauseCommand(namespace, topic, paused, time.commandTime())));
    }

    @Override
    public List<String> pausedTopics() {
        return calls.call(() -> store.topicListPaused(new PausedTopicsQuery(namespace)));
    }

    @Override
    public boolean setLimits(String topic, TopicLimits limits) {
        rules.topic(topic);
        rules.limits(limits);
        return storeLimits(topic, limits);
    }

    @Override
    public Optional<TopicLimits> limits(String topic) {
        rules.topic(topic);
        return Optional.ofNullable(allLimits().get(topic));
    }

    @Override
    public boolean clearLimits(String topic) {
        rules.topic(topic);
        return storeLimits(topic, TopicLimits.none());
    }

    private boolean storeLimits(String topic, TopicLimits limits) {
        boolean changed = calls.call(() -> store.topicSetLimits(new TopicLimitsCommand(namespace, topic, limits,
                time.commandTime())));
        if (changed) {
            // the store wakes listeners of other processes; this one's subscriptions claim at once under the new limits
            subscriptions.wake(namespace);
        }
        return changed;
    }

    @Override
    public Map<String, TopicLimits> allLimits() {
        return calls.call(() -> store.topicListLimits(new TopicLimitsQuery(namespace)));
    }

    @Override
    public Optional<MessageState> cancel(MessageId id) {
        if (id == null) {
            throw new InvalidInputException("id", null, "a message id");
        }
        Optional<MessageState> cancelled = calls.call(
                () -> store.messageCancel(new CancelCommand(namespace, id.value(), time.commandTime())));
        if (cancelled.orElse(null) == MessageState.RUNNING) {
            subscriptions.cancelled(namespace, id.value());
        }
        return cancelled;
    }

    @Override
    public boolean setBehindDeadLetter(String topic, BehindDeadLetter choice) {
        rules.topic(topic);
        if (choice == null) {
            throw new InvalidInputException("choice", null, "BehindDeadLetter.WAIT or BehindDeadLetter.CONTINUE");
        }
        boolean changed = calls.call(() -> store.topicSetBehindDeadLetter(
                new TopicOrderingCommand(namespace, topic, choice, time.commandTime())));
        if (changed && choice == BehindDeadLetter.CONTINUE) {
            // keys that waited behind a dead letter may have gone on: this process's subscriptions claim at once
            subscriptions.wake(namespace);
        }
        return changed;
    }

    @Override
    public BehindDeadLetter behindDeadLetter(String topic) {
        rules.topic(topic);
        return calls.call(() -> store.topicBehindDeadLetter(new TopicOrderingQuery(namespace, topic)));
    }

    @Override
    public String toString() {
        return "FlowControl[" + namespace + "]";
    }
}
