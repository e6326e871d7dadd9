package dev.queue.domain.engine;

import dev.queue.domain.port.Clock;
import dev.queue.domain.port.CommandTime;
import dev.queue.domain.port.LeaseRef;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Keeps the leases of a subscription's running handlers alive: any lease with half or less of its length left is
 * renewed, in one store call for all of them, at most every quarter lease (or sweep interval).
 */
final class LeaseKeeper {

    /** A subscription speaks under one logger name, whichever of its parts is talking. */
    private static final Logger log = LoggerFactory.getLogger(SubscriberRuntime.class);

    private final NamespaceService namespace;
    private final Collection<HeldMessage> held;
    private final Duration lease;
    private final Clock clock;
    private final Duration every;
    private final AtomicLong lastExtendNanos = new AtomicLong();

    LeaseKeeper(NamespaceService namespace, Collection<HeldMessage> held, Duration lease, Clock clock, Duration sweepInterval) {
        this.namespace = namespace;
        this.held = held;
        this.lease = lease;
        this.clock = clock;
        this.every = min(lease.dividedBy(4), sweepInterval);
    }

    /** How often leases are looked at: a quarter lease, or the sweep interval when shorter. */
    Duration interval() {
        return every;
    }

    /** How long a wait may last while handlers run, so that their leases are still extended in time. */
    Duration bound(Duration wait) {
        return held.isEmpty() ? wait : min(wait, every);
    }

    /**
     * Extends the leases that are due, unless the last round was less than a quarter lease ago on the wall clock
     * (paced only when the store keeps its own time: a given time may have jumped since).
     */
    void extendIfDue() {
        long now = System.nanoTime();
        if (now - lastExtendNanos.get() < every.toNanos() && clock.commandTime() == CommandTime.storeClock()) {
            return;
        }
        lastExtendNanos.set(now);
        Instant clockNow = clock.now();
        Instant threshold = clockNow.plus(lease.dividedBy(2));
        List<LeaseRef> due = new ArrayList<>();
        List<HeldMessage> entries = new ArrayList<>();
        for (HeldMessage entry : held) {
            if (entry.started() && entry.leaseUntil != null && !entry.leaseUntil.isAfter(threshold)) {
                due.add(NamespaceService.leaseOf(entry.delivery));
                entries.add(entry);
            }
        }
        if (due.isEmpty()) {
            return;
        }
        Set<Long> extended = namespace.extendLeases(due, lease);
        Instant newEnd = clockNow.plus(lease);
        for (HeldMessage entry : entries) {
            if (extended.contains(entry.id())) {
                entry.leaseUntil = newEnd;
            } else if (entry.handlerDone) {
                // Finished while the extension ran: its acknowledgement may have completed the row already.
                log.debug("message {} (topic {}, namespace {}): not extended, its handler had finished", entry.delivery.id(),
                        entry.delivery.topic(), entry.delivery.namespace());
            } else {
                log.warn("message {} (topic {}, namespace {}): lease lost while its handler runs; another worker may run it too",
                        entry.delivery.id(), entry.delivery.topic(), entry.delivery.namespace());
                entry.leaseUntil = null;
            }
        }
    }

    /**
     * Extends one lease now, on a notice that its message may have been cancelled elsewhere; a lease found gone
     * asks the handler to stop. The notice alone decides nothing: whoever may LISTEN on the channel may NOTIFY on
     * it too, so only the store says whether the message is still held.
     */
    void checkNow(HeldMessage entry) {
        if (!entry.started() || entry.leaseUntil == null) {
            return;
        }
        Instant clockNow = clock.now();
        Set<Long> extended = namespace.extendLeases(List.of(NamespaceService.leaseOf(entry.delivery)), lease);
        if (extended.contains(entry.id())) {
            entry.leaseUntil = clockNow.plus(lease);
        } else if (!entry.handlerDone) {
            log.info("message {} (topic {}, namespace {}): cancelled or its lease lost; its handler is asked to stop",
                    entry.delivery.id(), entry.delivery.topic(), entry.delivery.namespace());
            entry.leaseUntil = null;
        }
    }

    static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }
}
