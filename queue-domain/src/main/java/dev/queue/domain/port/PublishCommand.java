package dev.queue.domain.port;

import java.util.List;

/** Stores messages in one transaction. Each message gets a due time relative to {@code time} unless it names its own. */
public record PublishCommand(List<NewMessage> messages, CommandTime time) {
}
