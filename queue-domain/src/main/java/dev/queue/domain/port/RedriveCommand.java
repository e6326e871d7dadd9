package dev.queue.domain.port;

import java.time.Instant;

/**
 * Dead letters back to pending, due now, attempts reset to zero: the one with {@code id} when not null,
 * otherwise every one of {@code topic}. A redriven message whose unique key is held by a pending or running
 * message stays dead (the live one already does its work).
 */
public record RedriveCommand(String namespace, Long id, String topic, Instant now) {
}
