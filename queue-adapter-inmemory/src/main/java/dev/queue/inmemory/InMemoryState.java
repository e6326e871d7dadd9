package dev.queue.inmemory;

import dev.queue.api.MessageState;
import dev.queue.domain.port.Clock;
import dev.queue.domain.port.CommandTime;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The state of one {@link InMemoryMessageStore}, shared by the classes of its areas (publish, claim, settle, ...): the
 * one lock, the messages and the indexes over them, and the few changes that keep those indexes in step.
 */
final class InMemoryState {

    final Clock clock;
    final InMemoryWakeUps wakeUps;
    final AtomicLong ids = new AtomicLong();
    final ReentrantLock lock = new ReentrantLock();

    // Everything below is guarded by lock.
    final Map<String, NamespaceState> namespaces = new HashMap<>();
    /** Pending and running messages by id. */
    final Map<Long, Msg> live = new HashMap<>();
    /** Running messages by lease end. */
    final TreeSet<Msg> leases = new TreeSet<>(Msg.BY_LEASE_END);
    /** Unique keys held by pending and running messages. */
    final Map<UniqueKey, Long> uniqueKeys = new HashMap<>();
    /** The messages of each ordering key that are live or dead; a key without any has no entry. */
    final Map<OrderingKey, KeyLine> keyLines = new HashMap<>();
    final List<PublishedMessage> published = new ArrayList<>();

    InMemoryState(Clock clock, InMemoryWakeUps wakeUps) {
        this.clock = clock;
        this.wakeUps = wakeUps;
    }

    Instant now(CommandTime time) {
        return micros(time.resolve(clock::now));
    }

    static Instant micros(Instant instant) {
        return instant.truncatedTo(ChronoUnit.MICROS);
    }

    NamespaceState namespace(String name) {
        return namespaces.computeIfAbsent(name, NamespaceState::new);
    }

    void startRunning(Msg msg) {
        msg.state = MessageState.RUNNING;
        msg.topic.running++;
        leases.add(msg);
    }

    /** Ends the lease of a running message: state undecided until the caller moves it on. */
    void stopRunning(Msg msg) {
        leases.remove(msg);
        msg.topic.running--;
        msg.worker = null;
        msg.leaseToken = 0;
        msg.leaseUntil = null;
    }

    /** Takes a message out of the live set and frees its unique key. */
    void forget(Msg msg) {
        live.remove(msg.id);
        if (msg.uniqueKey != null) {
            uniqueKeys.remove(msg.uniqueKeyRef(), msg.id);
        }
    }
}
