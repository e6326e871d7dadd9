package dev.queue.inmemory;

import dev.queue.domain.port.Clock;
import dev.queue.domain.port.WorkerBeat;
import dev.queue.domain.port.WorkerRegistry;

import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The live workers of an in-memory queue: its own process, while anything subscribes. Kept in memory like
 * everything else of this adapter, with the same rules as the PostgreSQL registry: alive while the last beat is
 * younger than three intervals, removed once gone for longer than {@link #REMOVE_AFTER}.
 */
public final class InMemoryWorkerRegistry implements WorkerRegistry {

    /** How long a gone entry stays listed before a beat of another process removes it. */
    public static final Duration REMOVE_AFTER = Duration.ofHours(1);

    /** One entry: the last beat and when it came, by the queue's clock. */
    public record Entry(WorkerBeat beat, Instant heartbeatAt, boolean alive) {
    }

    private final Clock clock;
    private final Map<String, Map.Entry<WorkerBeat, Instant>> entries = new ConcurrentHashMap<>();

    InMemoryWorkerRegistry(Clock clock) {
        this.clock = clock;
    }

    @Override
    public void heartbeat(WorkerBeat beat) {
        Instant now = clock.now();
        entries.put(beat.processId(), Map.entry(beat, now));
        entries.entrySet().removeIf(e -> !e.getKey().equals(beat.processId())
                && goneSince(e.getValue()).plus(REMOVE_AFTER).isBefore(now));
    }

    @Override
    public void remove(String processId) {
        entries.remove(processId);
    }

    /** The entries, alive first, by process id. */
    public List<Entry> workers() {
        Instant now = clock.now();
        return entries.values().stream()
                .map(e -> new Entry(e.getKey(), e.getValue(), !goneSince(e).isBefore(now)))
                .sorted(Comparator.comparing((Entry e) -> !e.alive()).thenComparing(e -> e.beat().processId()))
                .toList();
    }

    private static Instant goneSince(Map.Entry<WorkerBeat, Instant> entry) {
        return entry.getValue().plus(entry.getKey().interval().multipliedBy(3));
    }
}
