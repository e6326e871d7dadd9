package dev.queue.domain.port;

import java.util.List;

/** The earliest due time among pending messages of these topics of the namespace that are not yet due at {@code time}. */
public record NextDueQuery(String namespace, List<String> topics, CommandTime time) {
}
