package dev.queue.domain.engine;

import dev.queue.api.Backoff;
import dev.queue.api.Delivery;
import dev.queue.api.MessageHandler;
import dev.queue.api.Outcome;
import dev.queue.api.QueueOptions;
import dev.queue.api.StoreUnavailableException;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import dev.queue.domain.port.Clock;
import dev.queue.domain.port.LeaseRef;
import dev.queue.domain.port.WakeUps;
import dev.queue.domain.rules.InputRules;
import dev.queue.domain.rules.Lifecycle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Runs one subscriber: claims as many messages as it has free handler slots, runs the handler for each,
 * acknowledges on success, retries with backoff on an exception, dead-letters when attempts run out, and
 * extends the leases of handlers still running. An empty claim waits for a wake-up, a clock jump, the next
 * due time, or the sweep interval, whichever comes first; a claim that found work claims again at once.
 */
final class SubscriberRuntime implements Subscription {

    private static final Logger log = LoggerFactory.getLogger(SubscriberRuntime.class);
    private static final AtomicInteger SEQUENCE = new AtomicInteger();
    /** Upper bound of one claim, so one subscriber with many slots does not starve its peers of a burst. */
    private static final int MAX_CLAIM = 100;
    /**
     * While a backlog waits, free handler slots wait this long for more to free up before they are claimed for, so
     * that fast handlers are fed by full claims (one statement per hundred messages, not one per handful) and a
     * slot of a slow handler stands empty for at most this long.
     */
    private static final long CLAIM_LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    /** Acknowledgements wait at most this long, or until this many are waiting, before one store call records them. */
    private static final int ACK_BATCH = 500;
    private static final Duration ACK_DELAY = Duration.ofMillis(5);
    /**
     * Claims pause while this many acknowledgements wait unrecorded: one full statement being written and one full
     * statement behind it. More than that only happens when the database records slower than the handlers finish;
     * claiming on would make the wait longer for every acknowledgement, until they outlive their leases.
     */
    private static final int MAX_UNRECORDED_ACKS = 2 * ACK_BATCH;

    private enum HoldState { CLAIMED, STARTED, RELEASED }

    /** A message this runtime holds: claimed, maybe started, until settled. */
    private static final class Held {
        final Delivery delivery;
        final AtomicInteger state = new AtomicInteger(HoldState.CLAIMED.ordinal());
        volatile Instant leaseUntil;
        /** Set when the handler has returned or thrown: from then on a lease that is gone is no cause for alarm. */
        volatile boolean handlerDone;

        Held(Delivery delivery) {
            this.delivery = delivery;
            this.leaseUntil = delivery.leaseUntil();
        }

        boolean start() {
            return state.compareAndSet(HoldState.CLAIMED.ordinal(), HoldState.STARTED.ordinal());
        }

        boolean release() {
            return state.compareAndSet(HoldState.CLAIMED.ordinal(), HoldState.RELEASED.ordinal());
        }

        boolean started() {
            return state.get() == HoldState.STARTED.ordinal();
        }
    }

    private final NamespaceService namespace;
    private final Environment environment;
    private final QueueOptions options;
    private final Clock clock;
    private final Subscriber<?> subscriber;
    private final String worker;
    private final List<String> topics;
    private final Duration lease;
    private final Backoff backoff;
    private final String label;

    private final Map<Long, Held> held = new ConcurrentHashMap<>();
    private final Semaphore slots;
    /** The size of a full claim: every slot, up to {@link #MAX_CLAIM}. */
    private final int fullClaim;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final WakeSignal signal = new WakeSignal();
    private final java.util.concurrent.atomic.AtomicBoolean closeStarted = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile boolean running;
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
    /** When the current pause for acknowledgements began, 0 when not paused; dispatcher thread only. */
    private long ackPauseStartedNanos;
    private volatile boolean closing;
    private final AtomicLong lastExtendNanos = new AtomicLong();

    private ExecutorService handlers;
    private AckBatcher acks;
    private Thread dispatcher;
    private WakeUps.Registration wakeRegistration;
    private AutoCloseable clockRegistration;

    /** What a subscription needs of its queue besides its namespace. */
    record Environment(WakeUps wakeUps, Clock clock, QueueOptions options, Subscriptions subscriptions) {
    }

    SubscriberRuntime(NamespaceService namespace, Environment environment, Subscriber<?> subscriber, String worker) {
        this.namespace = namespace;
        this.environment = environment;
        this.options = environment.options();
        this.clock = environment.clock();
        this.subscriber = subscriber;
        this.worker = worker;
        this.topics = List.copyOf(subscriber.topics());
        this.lease = subscriber.lease();
        this.slots = new Semaphore(subscriber.concurrency());
        this.fullClaim = Math.min(subscriber.concurrency(), MAX_CLAIM);
        this.backoff = subscriber.backoff();
        this.label = "queue-" + namespace.name() + "-" + String.join("+", topics) + "-" + SEQUENCE.incrementAndGet();
    }

    void start() {
        running = true;
        environment.subscriptions().add(this);
        if (environment.subscriptions().manualDispatch()) {
            return;
        }
        handlers = new HandlerPool(subscriber.concurrency(), daemonThreads(label + "-handler"));
        acks = new AckBatcher(namespace.name(), namespace::completeLeases, ACK_BATCH, ACK_DELAY, MAX_UNRECORDED_ACKS, lease, this::afterAcksRecorded,
                label + "-acks");
        wakeRegistration = environment.wakeUps().listen(namespace.name(), topics, this::wake);
        clockRegistration = clock.onAdvance(this::wake);
        dispatcher = daemonThreads(label + "-dispatch").newThread(this::dispatchLoop);
        dispatcher.start();
        log.debug("subscriber {} started: namespace {}, topics {}, concurrency {}, worker {}", label, namespace.name(), topics,
                subscriber.concurrency(), worker);
    }

    /** Runs due messages on the calling thread until none is due; for manual dispatch. */
    int drainDue() {
        if (!running) {
            return 0;
        }
        int handled = 0;
        namespace.rescueIfDue();
        while (running) {
            List<Delivery> claimed = namespace.claim(topics, worker, Math.min(MAX_CLAIM, subscriber.concurrency()), lease);
            if (claimed.isEmpty()) {
                return handled;
            }
            for (Delivery delivery : claimed) {
                Held entry = new Held(delivery);
                held.put(delivery.id().value(), entry);
                entry.start();
                runHandler(entry);
                handled++;
            }
        }
        return handled;
    }

    private void dispatchLoop() {
        long failures = 0;
        while (running && !closing) {
            String operation = "extend the leases of its running handlers";
            try {
                extendLeasesIfDue();
                if (acksBehind()) {
                    continue;
                }
                int free = slots.availablePermits();
                if (free == 0) {
                    lingerSinceNanos = 0;
                    awaitSlots(1, options.sweepInterval());
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
                    long left = CLAIM_LINGER_NANOS - (now - lingerSinceNanos);
                    if (left > 0) {
                        awaitSlots(fullClaim, Duration.ofNanos(left));
                        continue;
                    }
                }
                lingerSinceNanos = 0;
                int want = Math.min(free, MAX_CLAIM);
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
                    operation = "rescue expired leases";
                    namespace.rescueIfDue();
                    if (!backlogged) {
                        untilNextDue = untilNextDue();
                    }
                    operation = "claim";
                    claimed = namespace.claim(topics, worker, want, lease);
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
                if (claimed.isEmpty() && untilNextDue != null) {
                    awaitWake(untilNextDue);
                }
            } catch (RuntimeException e) {
                failures++;
                Duration pause = Duration.ofMillis(Math.min(5_000, 50L << Math.min(failures, 7)));
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
        Held entry = new Held(delivery);
        held.put(delivery.id().value(), entry);
        try {
            handlers.execute(() -> {
                if (entry.start()) {
                    try {
                        runHandler(entry);
                    } finally {
                        slots.release();
                        if (waitingForSlots && slots.availablePermits() >= ringAtFree) {
                            wake();
                        }
                    }
                }
            });
        } catch (RejectedExecutionException e) {
            // Closing: the entry stays CLAIMED and close() gives it back.
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
                awaitWake(options.sweepInterval());
            }
        } finally {
            waitingForAcks = false;
        }
        return true;
    }

    private void afterAcksRecorded() {
        if (waitingForAcks && !acks.behind()) {
            wake();
        }
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
        Duration sweep = options.sweepInterval();
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

    private void runHandler(Held entry) {
        Delivery delivery = entry.delivery;
        inFlight.incrementAndGet();
        HandlerContext context = new HandlerContext(delivery);
        try {
            Object payload;
            try {
                payload = subscriber.payloadType() == null ? delivery : delivery.payload(subscriber.payloadType());
            } catch (RuntimeException e) {
                String reason = "payload cannot be decoded as " + subscriber.payloadType().getName() + ": " + e.getMessage();
                Outcome outcome = recordResult(delivery, "dead-lettering",
                        () -> namespace.carryOut(delivery, new Lifecycle.DeadLetter(reason))).outcome();
                log.warn("message {} (topic {}, namespace {}) dead-lettered: payload cannot be decoded as {}: {} [{}]",
                        delivery.id(), delivery.topic(), delivery.namespace(), subscriber.payloadType().getName(), e.getMessage(), outcome);
                return;
            }
            Throwable failure = null;
            try {
                invoke(subscriber.handler(), payload, context);
            } catch (Throwable e) {
                // Errors too: a StackOverflowError has unwound by now, and even after an OutOfMemoryError recording
                // the attempt is worth trying (the handler's garbage is collectable again). Left uncaught, the
                // message would stay running until its lease expired, its cause unrecorded.
                failure = e;
            } finally {
                entry.handlerDone = true;
            }
            settle(entry, context, failure);
        } catch (RuntimeException e) {
            log.warn("message {} (topic {}, namespace {}) could not be settled, retried for a lease; it runs again when its lease "
                    + "expires: {}",
                    delivery.id(), delivery.topic(), delivery.namespace(), e.toString());
        } finally {
            held.remove(delivery.id().value());
            inFlight.decrementAndGet();
        }
    }

    @SuppressWarnings("unchecked")
    private static void invoke(MessageHandler<?> handler, Object payload, HandlerContext context) throws Exception {
        ((MessageHandler<Object>) handler).handle(payload, context);
    }

    private void settle(Held entry, HandlerContext context, Throwable failure) {
        Delivery delivery = entry.delivery;
        Lifecycle.Result result;
        if (failure != null) {
            result = new Lifecycle.Failed(describe(failure));
        } else {
            result = switch (context.intent()) {
                case RETRY -> new Lifecycle.RetryAsked(context.reason(), context.retryDelay());
                case FAIL -> new Lifecycle.DeadLetterAsked(context.reason());
                case ACK -> new Lifecycle.Succeeded();
            };
        }
        Lifecycle.Decision decision = Lifecycle.decide(result, delivery.attempt(), delivery.maxAttempts(), backoffFor(delivery),
                ThreadLocalRandom.current()::nextDouble);
        if (decision instanceof Lifecycle.Complete && acks != null) {
            acks.submit(delivery, context.isCompletedInCallerTransaction());
            return;
        }
        String what = failure != null ? "failed attempt" : describe(decision);
        Recorded recorded = recordResult(delivery, what, () -> namespace.carryOut(delivery, decision));
        Outcome outcome = recorded.outcome();
        if (failure instanceof VirtualMachineError) {
            log.error("message {} (topic {}, namespace {}): its handler failed with {} on attempt {} of {} [{}]", delivery.id(),
                    delivery.topic(), delivery.namespace(), failure.getClass().getName(), delivery.attempt(), delivery.maxAttempts(),
                    outcome, failure);
        } else if (failure != null && outcome == Outcome.DEAD_LETTERED) {
            log.warn("message {} (topic {}, namespace {}) dead-lettered after {} attempts: {}", delivery.id(), delivery.topic(),
                    delivery.namespace(), delivery.attempt(), describe(failure));
        } else if (failure != null && decision instanceof Lifecycle.Retry retry) {
            log.info("message {} (topic {}, namespace {}) failed attempt {} of {}, retry in {}: {}", delivery.id(), delivery.topic(),
                    delivery.namespace(), delivery.attempt(), delivery.maxAttempts(), retry.delay(), describe(failure));
        } else if (result instanceof Lifecycle.DeadLetterAsked) {
            log.info("message {} (topic {}, namespace {}) dead-lettered by its handler: {}", delivery.id(), delivery.topic(),
                    delivery.namespace(), InputRules.errorText(context.reason()));
        }
        if (recorded.outcome() == Outcome.LEASE_LOST && !context.isCompletedInCallerTransaction()) {
            if (recorded.retried()) {
                log.info("message {} (topic {}, namespace {}): not held under its lease when its {} was retried (attempt {}); either "
                        + "the failed call recorded it, or the lease was lost and another worker may have run it", delivery.id(),
                        delivery.topic(), delivery.namespace(), what, delivery.attempt());
            } else {
                log.warn("message {} (topic {}, namespace {}): lease lost before the handler's result was recorded (attempt {}); "
                        + "another worker may have run it", delivery.id(), delivery.topic(), delivery.namespace(), delivery.attempt());
            }
        }
    }

    /** What a store call recording a handler's result answered, and whether it took more than one try. */
    private record Recorded(Outcome outcome, boolean retried) {
    }

    /**
     * Runs a store call that records a handler's result (a retry, a dead letter, an acknowledgement), retrying it
     * when the store is unavailable, with a pause growing from 50 ms to 2 s, for as long as a lease lasts from now:
     * the same bound acknowledgements have. Given up, the message waits for its lease to expire and spends an attempt;
     * retried, it runs again after its backoff. Each statement is guarded by the lease, so repeating one that did
     * commit changes nothing (it then finds the message no longer held).
     */
    private Recorded recordResult(Delivery delivery, String what, Supplier<Outcome> call) {
        long deadline = System.nanoTime() + lease.toNanos();
        long pauseMillis = AckBatcher.FIRST_RETRY_PAUSE_MILLIS;
        boolean retried = false;
        while (true) {
            try {
                return new Recorded(call.get(), retried);
            } catch (StoreUnavailableException e) {
                if (System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(pauseMillis) - deadline > 0) {
                    throw e;
                }
                if (retried) {
                    log.debug("message {} (topic {}, namespace {}): could not record its {} again; retrying: {}", delivery.id(),
                            delivery.topic(), delivery.namespace(), what, e.toString());
                } else {
                    log.warn("message {} (topic {}, namespace {}): could not record its {}; retrying while its lease lasts: {}",
                            delivery.id(), delivery.topic(), delivery.namespace(), what, e.toString());
                }
                try {
                    Thread.sleep(pauseMillis);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
                retried = true;
                pauseMillis = Math.min(AckBatcher.MAX_RETRY_PAUSE_MILLIS, pauseMillis * 2);
            }
        }
    }

    private Backoff backoffFor(Delivery delivery) {
        return backoff != null ? backoff : options.backoffFor(delivery.topic());
    }

    /** The decision's name in the log lines of a settle that failed. */
    private static String describe(Lifecycle.Decision decision) {
        if (decision instanceof Lifecycle.Retry) {
            return "retry";
        }
        if (decision instanceof Lifecycle.DeadLetter) {
            return "dead-lettering";
        }
        return decision instanceof Lifecycle.Release ? "release" : "acknowledgement";
    }

    private static String describe(Throwable failure) {
        String message = failure.getMessage();
        return failure.getClass().getName() + (message == null ? "" : ": " + message);
    }

    /** Keeps the leases of running handlers alive: any lease with half or less of its length left is renewed. */
    private void extendLeasesIfDue() {
        long now = System.nanoTime();
        long last = lastExtendNanos.get();
        long every = Math.min(lease.toNanos() / 4, options.sweepInterval().toNanos());
        if (now - last < every && !clock.isAuthoritative()) {
            return;
        }
        lastExtendNanos.set(now);
        Instant clockNow = clock.now();
        Instant threshold = clockNow.plus(lease.dividedBy(2));
        List<LeaseRef> due = new ArrayList<>();
        List<Held> entries = new ArrayList<>();
        for (Held entry : held.values()) {
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
        for (Held entry : entries) {
            long id = entry.delivery.id().value();
            if (extended.contains(id)) {
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

    void wake() {
        signal.wake();
    }

    private void awaitWake(Duration max) {
        // With handlers running, wake often enough to keep their leases extended.
        Duration bound = held.isEmpty() ? max : min(max, min(lease.dividedBy(4), options.sweepInterval()));
        if (!signal.await(bound)) {
            closing = true;
        }
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    @Override
    public void close() {
        close(subscriber.shutdownTimeout());
    }

    @Override
    public void close(Duration timeout) {
        if (!closeStarted.compareAndSet(false, true)) {
            return;
        }
        closing = true;
        signal.wake();
        try {
            if (wakeRegistration != null) {
                wakeRegistration.close();
            }
            if (clockRegistration != null) {
                clockRegistration.close();
            }
        } catch (Exception e) {
            log.debug("subscriber {}: closing a registration failed: {}", label, e.toString());
        }
        if (dispatcher != null) {
            try {
                // A claim in progress normally ends within milliseconds; one stuck waiting for an unreachable
                // database is interrupted rather than holding the shutdown for the pool's connection timeout.
                dispatcher.join(2_000);
                if (dispatcher.isAlive()) {
                    dispatcher.interrupt();
                    dispatcher.join(TimeUnit.SECONDS.toMillis(5));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        releaseUnstarted();
        if (handlers != null) {
            handlers.shutdown();
            boolean finished = awaitHandlers(timeout);
            if (!finished) {
                log.warn("subscriber {} (namespace {}, topics {}): {} handlers still running after {}; interrupting them, their "
                        + "messages run again when their leases expire", label, namespace.name(), topics, inFlight.get(), timeout);
                handlers.shutdownNow();
            }
        }
        if (acks != null) {
            acks.close();
        }
        running = false;
        environment.subscriptions().remove(this);
    }

    /** Waits for handlers while keeping their leases alive. */
    private boolean awaitHandlers(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long step = Math.max(1, Math.min(lease.dividedBy(4).toMillis(), options.sweepInterval().toMillis()));
        try {
            while (true) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return handlers.isTerminated();
                }
                if (handlers.awaitTermination(Math.min(step, TimeUnit.NANOSECONDS.toMillis(left) + 1), TimeUnit.MILLISECONDS)) {
                    return true;
                }
                try {
                    extendLeasesIfDue();
                } catch (RuntimeException e) {
                    log.debug("subscriber {}: lease extension during shutdown failed: {}", label, e.toString());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private void releaseUnstarted() {
        List<LeaseRef> toRelease = new ArrayList<>();
        Set<Long> ids = new HashSet<>();
        for (Held entry : held.values()) {
            if (entry.release()) {
                toRelease.add(NamespaceService.leaseOf(entry.delivery));
                ids.add(entry.delivery.id().value());
            }
        }
        if (toRelease.isEmpty()) {
            return;
        }
        try {
            Set<Long> released = namespace.releaseLeases(toRelease);
            log.info("subscriber {} (namespace {}, topics {}) gave back {} messages it never started", label, namespace.name(), topics,
                    released.size());
        } catch (RuntimeException e) {
            log.warn("subscriber {} (namespace {}): could not give back {} unstarted messages; they run again when their leases "
                    + "expire: {}", label, namespace.name(), toRelease.size(), e.toString());
        } finally {
            ids.forEach(held::remove);
        }
    }

    @Override
    public boolean isRunning() {
        return running && !closing;
    }

    @Override
    public int inFlight() {
        return inFlight.get();
    }

    private static ThreadFactory daemonThreads(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, prefix + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    @Override
    public String toString() {
        return label;
    }
}
