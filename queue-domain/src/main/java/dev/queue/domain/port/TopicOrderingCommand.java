package dev.queue.domain.port;

import dev.queue.api.BehindDeadLetter;

/**
 * Sets what the later messages of an ordering key of a topic do behind a dead letter of their key, for every process
 * sharing the store. Going to {@link BehindDeadLetter#CONTINUE} promotes at once the keys that waited behind a dead
 * letter only, and wakes the topic's listeners.
 */
public record TopicOrderingCommand(String namespace, String topic, BehindDeadLetter behindDeadLetter, CommandTime time) {
}
