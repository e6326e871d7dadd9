package dev.queue.domain.port;

import java.time.Instant;
import java.util.List;

/** Stores messages in one transaction. {@code now} is null when the store's clock decides. */
public record PublishCommand(List<NewMessage> messages, Instant now) {
}
