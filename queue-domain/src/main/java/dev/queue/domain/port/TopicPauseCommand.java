package dev.queue.domain.port;

/**
 * Pauses ({@code paused}) or resumes a topic of a namespace for every process sharing the store. Once a pause is
 * stored, no claim of the store starts a message of the topic; a resume wakes the topic's listeners.
 */
public record TopicPauseCommand(String namespace, String topic, boolean paused, CommandTime time) {
}
