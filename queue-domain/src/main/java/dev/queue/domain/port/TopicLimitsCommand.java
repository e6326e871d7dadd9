package dev.queue.domain.port;

import dev.queue.api.TopicLimits;

import java.util.Objects;

/**
 * Sets the limits of a topic of a namespace for every process sharing the store, replacing any it had, or clears
 * them when {@code limits} has none ({@link TopicLimits#isNone()}). Once stored, every claim that begins afterwards
 * respects them, counting the messages already running; setting or clearing wakes the topic's listeners.
 */
public record TopicLimitsCommand(String namespace, String topic, TopicLimits limits, CommandTime time) {

    public TopicLimitsCommand {
        Objects.requireNonNull(limits, "limits");
    }
}
