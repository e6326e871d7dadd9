package dev.queue.domain.engine;

import dev.queue.api.Delivery;
import dev.queue.domain.port.ClaimPosition;
import dev.queue.domain.port.Clock;
import dev.queue.domain.rules.RetryPause;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A subscription's claim loop, on its own thread: claims as many messages as there are free handler slots (up to
 * {@link Tuning#maxClaim()}), hands each to a handler thread, and between claims keeps the running handlers'
 * leases alive. An empty claim waits for a wake-up, a clock jump, the next due time, or the sweep interval,
 * whichever comes first; a claim that found work claims again at once. Claims pause while too many
 * acknowledgements wait unrecorded, and failures of the store are retried with a growing pause.
 */
final class Dispatcher {

    /** A subscription speaks under one logger name, whichever of its parts is talking. */
    private static final Logger log = LoggerFactory.getLogger(SubscriberRuntime.class);
    private static final Duration FIRST_FAILURE_PAUSE = Duration.ofMillis(100);
    private static final Duration MAX_FAILURE_PAUSE = Duration.ofSeconds(5);

    private final NamespaceService namespace;
    private final List<String> topics;
    private final String worker;
    private final Duration lease;
    private final Duration sweepInterval;
    private final Clock clock;
    private final Map<Long, HeldMessage> held;
    private final LeaseKeeper leases;
    private final HandlerRun handlerRun;
    private final ExecutorService handlers;
    private final AckBatcher acks;
    private final String label;
    private final Semaphore slots;
    private final int maxClaim;
    private final long claimLingerNanos;
    /** The size of a full claim: every slot, up to the tuning's largest claim. */
    private final int fullClaim;
    private final WakeSignal signal = new WakeSignal();
    private final ClaimCursor cursor;
    private volatile boolean stopped;
    /** The last claim filled every slot it asked for: more is waiting. */
    private volatile boolean backlogged;
    /**
     * True while the dispatcher waits for handler slots. Only then does a finishing handler ring it: ringing an
     * idle dispatcher, which waits for new messages, would cost a claim (and a next-due read) per handled message
     * that cannot find anything the wake-ups would not announce.
     */
    private volatile boolean waitingForSlots;
    /** The number of free slots at which a finishing handler rings the dispatcher waiting for slots. */
    private volatile int ringAtFree = 1;
    /** Since when free slots have waited for a full claim, 0 when none wait; dispatcher thread only. */
    private long lingerSinceNanos;
    /** True while the dispatcher waits for acknowledgements to be recorded; the flusher rings it when they are. */
    private volatile boolean waitingForAcks;
    /** Limited topics a message of which was settled since the batcher last flushed. */
    private final Set<String> limitedSettledUnrecorded = ConcurrentHashMap.newKeySet();
    /** Wakes the claimers of a topic of the namespace in this process (this one included). */
    private final Consumer<String> limitFreed;
    /** When the current pause for acknowledgements began, 0 when not paused; dispatcher thread only. */
    private long ackPauseStartedNanos;

    Dispatcher(NamespaceService namespace, List<String> topics, String worker, Duration lease, int concurrency, Tuning tuning,
               Duration sweepInterval, Clock clock, Map<Long, HeldMessage> held, LeaseKeeper leases, HandlerRun handlerRun,
               ExecutorService handlers, AckBatcher acks, String label, Consumer<String> limitFreed) {
        this.namespace = namespace;
        this.topics = topics;
        this.worker = worker;
        this.lease = lease;
        this.sweepInterval = sweepInterval;
        this.clock = clock;
        this.held = held;
        this.leases = leases;
        this.handlerRun = handlerRun;
        this.handlers = handlers;
        this.acks = acks;
        this.label = label;
        this.limitFreed = limitFreed;
        this.slots = new Semaphore(concurrency);
        this.maxClaim = tuning.maxClaim();
        this.claimLingerNanos = tuning.claimLinger().toNanos();
        this.fullClaim = Math.min(concurrency, maxClaim);
        this.cursor = new ClaimCursor(sweepInterval, clock);
    }

    /** Ends the loop at its next look; a claim in progress finishes first. */
    void stop() {
        stopped = true;
        signal.wake();
    }

    /** Stopped, or its thread was interrupted while waiting. */
    boolean stopped() {
        return stopped;
    }

    /** The loop; runs on the dispatcher's thread until stopped. */
    void run() {
        int failures = 0;
        while (!stopped) {
            String operation = "extend the leases of its running handlers";
            try {
                leases.extendIfDue();
                if (acksBehind()) {
                    continue;
                }
                int free = slots.availablePermits();
                if (free == 0) {
                    lingerSinceNanos = 0;
                    awaitSlots(1, sweepInterval);
                    continue;
                }
                // While a backlog waits (the last claim came back full), free slots wait a moment for a full claim:
                // fast handlers free them all within that moment, and each claim statement then serves a hundred
                // messages instead of the few that finished first. Without a backlog, any free slot claims at
                // once, so a new message never waits for a batch.
                if (backlogged && free < fullClaim) {
                    long now = System.nanoTime();
                    if (lingerSinceNanos == 0) {
                        lingerSinceNanos = now;
                    }
                    long left = claimLingerNanos - (now - lingerSinceNanos);
                    if (left > 0) {
                        awaitSlots(fullClaim, Duration.ofNanos(left));
                        continue;
                    }
                }
                lingerSinceNanos = 0;
                int want = Math.min(free, maxClaim);
                if (!slots.tryAcquire(want)) {
                    continue;
                }
                // Unless the last claim came back full, read the next due time before claiming: if this claim comes
                // back empty, the dispatcher sleeps until then, and a message that becomes due after the read is
                // either claimed now or covered by that sleep. Read after an empty claim, it could fall between the
                // two and cost a whole sweep interval. A short claim is followed by one more claim at once (messages
                // whose wake-up is still on its way), so reading before that one lets an empty answer end the round
                // with a sleep instead of costing a third claim.
                Duration untilNextDue = null;
                List<Delivery> claimed;
                try {
                    if (!backlogged) {
                        untilNextDue = untilNextDue();
                    }
                    operation = "claim";
                    claimed = namespace.claim(topics, worker, want, lease, cursor);
                } catch (RuntimeException e) {
                    slots.release(want);
                    throw e;
                }
                slots.release(want - claimed.size());
                backlogged = claimed.size() == want;
                failures = 0;
                for (Delivery delivery : claimed) {
                    dispatch(delivery);
                }
                // The fleet's look behind a position reads no further: the claim after it resumes, at once.
                if (claimed.isEmpty() && untilNextDue != null && !cursor.lookedBehindOnly()) {
                    awaitWake(untilNextDue);
                }
            } catch (RuntimeException e) {
                failures++;
                Duration pause = RetryPause.after(failures, FIRST_FAILURE_PAUSE, MAX_FAILURE_PAUSE,
                        ThreadLocalRandom.current()::nextDouble);
                log.warn("subscriber {} (namespace {}, topics {}) could not {}; retrying in {} ms: {}", label,
                        namespace.name(), topics, operation, pause.toMillis(), e.toString());
                awaitWake(pause);
            } catch (Error e) {
                log.error("subscriber {} (namespace {}, topics {}) stopped by an error", label, namespace.name(), topics, e);
                throw e;
            }
        }
    }

    private void dispatch(Delivery delivery) {
        boolean limited = cursor.limited(delivery.topic());
        HeldMessage entry = new HeldMessage(delivery, limited);
        held.put(entry.id(), entry);
        try {
            handlers.execute(() -> {
                if (entry.start()) {
                    try {
                        handlerRun.run(entry);
                    } finally {
                        slots.release();
                        if (limited) {
                            limitedSettled(delivery.topic());
                        } else if (waitingForSlots && slots.availablePermits() >= ringAtFree) {
                            wake();
                        }
                    }
                }
            });
        } catch (RejectedExecutionException e) {
            // Closing: the entry stays claimed and the subscription's close gives it back.
            slots.release();
        }
    }

    /**
     * Whether claiming must wait because too many acknowledgements are unrecorded; if so, waits (bounded, so leases
     * of running handlers are still extended) and the caller looks again.
     */
    private boolean acksBehind() {
        if (acks == null || !acks.behind()) {
            if (ackPauseStartedNanos != 0) {
                long pausedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - ackPauseStartedNanos);
                ackPauseStartedNanos = 0;
                if (pausedMillis >= 1_000) {
                    log.warn("subscriber {} (namespace {}, topics {}) paused claiming for {} ms while the database recorded its "
                            + "acknowledgements", label, namespace.name(), topics, pausedMillis);
                } else {
                    log.debug("subscriber {} (namespace {}, topics {}) paused claiming for {} ms while the database recorded its "
                            + "acknowledgements", label, namespace.name(), topics, pausedMillis);
                }
            }
            return false;
        }
        if (ackPauseStartedNanos == 0) {
            ackPauseStartedNanos = System.nanoTime();
            log.debug("subscriber {} (namespace {}, topics {}): {} acknowledgements wait unrecorded; claiming paused", label,
                    namespace.name(), topics, acks.unrecorded());
        }
        // Same handshake as for slots: announce, look again, then wait; a flush after the flag is set rings.
        waitingForAcks = true;
        try {
            if (acks.behind()) {
                awaitWake(sweepInterval);
            }
        } finally {
            waitingForAcks = false;
        }
        return true;
    }

    /**
     * The batcher recorded acknowledgements: a dispatcher paused for them looks again, and so do the subscriptions
     * of a limited topic one of whose messages it settled (room freed under the limit).
     */
    void afterAcksRecorded() {
        if (!limitedSettledUnrecorded.isEmpty()) {
            for (String topic : limitedSettledUnrecorded) {
                limitedSettledUnrecorded.remove(topic);
                limitFreed.accept(topic);
            }
        }
        if (waitingForAcks && !acks.behind()) {
            wake();
        }
    }

    /**
     * An ordering key's next message became pending at {@code position} of the topic's claim order, perhaps behind
     * where this dispatcher's claims have passed: the next claim looks again from just before it. Any thread.
     */
    void promoted(String topic, ClaimPosition position) {
        // Woken again although the topic's plain wake-up came with it: that one arrives first, and the claim it
        // started may have run before the rewind was noted.
        if (cursor.rewind(topic, position)) {
            wake();
        }
    }

    /**
     * A handler of a limited topic's message finished: its settle frees room under the limit, now (a retry, a dead
     * letter, a snooze) or once the batcher records its acknowledgement. Claimers held back by the limit, this one
     * and the others of the topic in this process, look again at both moments.
     */
    private void limitedSettled(String topic) {
        limitedSettledUnrecorded.add(topic);
        limitFreed.accept(topic);
    }

    /**
     * Waits until at least {@code free} slots are free, or for {@code max}. Announces the wait, then looks again: a
     * handler that finished before the flag was set is seen here, one that finishes after it sees the flag and
     * rings (both fields are volatile).
     */
    private void awaitSlots(int free, Duration max) {
        ringAtFree = free;
        waitingForSlots = true;
        try {
            if (slots.availablePermits() < free) {
                awaitWake(max);
            }
        } finally {
            waitingForSlots = false;
        }
    }

    /** How long an idle dispatcher may sleep: until the next due message, at most one sweep interval. */
    private Duration untilNextDue() {
        Duration sweep = sweepInterval;
        try {
            Optional<Instant> next = namespace.nextDueAt(topics);
            if (next.isPresent()) {
                Duration untilDue = Duration.between(clock.now(), next.get());
                if (untilDue.compareTo(sweep) < 0) {
                    return untilDue.isNegative() ? Duration.ZERO : untilDue;
                }
            }
        } catch (RuntimeException e) {
            log.debug("subscriber {} could not read the next due time: {}", label, e.toString());
        }
        return sweep;
    }

    void wake() {
        signal.wake();
    }

    private void awaitWake(Duration max) {
        // With handlers running, wake often enough to keep their leases extended.
        if (!signal.await(leases.bound(max))) {
            stopped = true;
        }
    }
}
