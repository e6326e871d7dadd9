package dev.queue.domain.port;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Asks, for the whole fleet, to take the sweep behind the claim positions of these topics: a topic's sweep is
 * taken when no claimer of the namespace took it within {@code minGap} (or the store's clock went back since). The
 * claimer that takes it looks behind its position in its next claim; the others resume after theirs.
 */
public record HeadSweepCommand(String namespace, List<String> topics, Duration minGap, CommandTime time) {

    public HeadSweepCommand {
        topics = List.copyOf(Objects.requireNonNull(topics, "topics"));
        Objects.requireNonNull(minGap, "minGap");
        Objects.requireNonNull(time, "time");
    }
}
