package dev.queue.domain.engine;

import dev.queue.api.Backoff;
import dev.queue.api.Delivery;
import dev.queue.api.MessageHandler;
import dev.queue.api.Outcome;
import dev.queue.api.QueueOptions;
import dev.queue.api.StoreUnavailableException;
import dev.queue.api.Subscriber;
import dev.queue.api.observation.HandleOutcome;
import dev.queue.domain.port.Clock;
import dev.queue.domain.rules.InputRules;
import dev.queue.domain.rules.Lifecycle;
import dev.queue.domain.rules.RetryPause;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * One run of a subscription's handler for a held message: decode the payload, invoke the handler, ask
 * {@link Lifecycle} what becomes of the message and have that recorded (acknowledgements through the batcher),
 * retrying a failed store call for as long as a lease lasts; and say what happened in the log.
 */
final class HandlerRun {

    /** A subscription speaks under one logger name, whichever of its parts is talking. */
    private static final Logger log = LoggerFactory.getLogger(SubscriberRuntime.class);

    private final NamespaceService namespace;
    private final Subscriber<?> subscriber;
    private final Duration lease;
    private final QueueOptions options;
    private final Map<Long, HeldMessage> held;
    /** Null in manual dispatch: acknowledgements are then recorded one by one, on the caller's thread. */
    private final AckBatcher acks;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final Clock clock;
    /** Null when none are registered: a run then reads no clock and allocates nothing for them. */
    private final Interceptors interceptors;

    HandlerRun(NamespaceService namespace, Subscriber<?> subscriber, QueueOptions options, Map<Long, HeldMessage> held, AckBatcher acks,
               Clock clock, Interceptors interceptors) {
        this.namespace = namespace;
        this.subscriber = subscriber;
        this.lease = subscriber.lease();
        this.options = options;
        this.held = held;
        this.acks = acks;
        this.clock = clock;
        this.interceptors = interceptors;
    }

    /** Handlers running now. */
    int inFlight() {
        return inFlight.get();
    }

    /** Runs the handler for a message this subscription holds and has started, and settles it. */
    void run(HeldMessage entry) {
        Delivery delivery = entry.delivery;
        inFlight.incrementAndGet();
        HandlerContext context = new HandlerContext(entry, clock);
        Interceptors.HandleCall observed = interceptors == null ? null : interceptors.handleStarting(delivery, clock.now());
        try {
            Object payload;
            try {
                payload = subscriber.payloadType() == null ? delivery : delivery.payload(subscriber.payloadType());
            } catch (RuntimeException e) {
                String reason = "payload cannot be decoded as " + subscriber.payloadType().getName() + ": " + e.getMessage();
                if (observed != null) {
                    observed.handlerFinished(observed.startedAt(), e);
                }
                Lifecycle.Decision decision = Lifecycle.decide(new Lifecycle.DeadLetterAsked(reason), delivery.attempt(),
                        delivery.maxAttempts(), backoffFor(delivery), ThreadLocalRandom.current()::nextDouble);
                Outcome outcome = recordResult(delivery, "dead-lettering", () -> namespace.carryOut(delivery, decision)).outcome();
                if (observed != null) {
                    observed.ended(observedOutcome(outcome), null, reason);
                }
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
            if (observed != null) {
                observed.handlerFinished(clock.now(), failure);
            }
            settle(entry, context, failure, observed);
        } catch (RuntimeException e) {
            if (observed != null) {
                observed.ended(HandleOutcome.NOT_RECORDED, null, e.toString());
            }
            log.warn("message {} (topic {}, namespace {}) could not be settled, retried for a lease; it runs again when its lease "
                    + "expires: {}",
                    delivery.id(), delivery.topic(), delivery.namespace(), e.toString());
        } finally {
            held.remove(entry.id());
            inFlight.decrementAndGet();
        }
    }

    @SuppressWarnings("unchecked")
    private static void invoke(MessageHandler<?> handler, Object payload, HandlerContext context) throws Exception {
        ((MessageHandler<Object>) handler).handle(payload, context);
    }

    private void settle(HeldMessage entry, HandlerContext context, Throwable failure, Interceptors.HandleCall observed) {
        Delivery delivery = entry.delivery;
        Lifecycle.Result result;
        if (failure != null) {
            result = new Lifecycle.Failed(describe(failure));
        } else {
            result = switch (context.intent()) {
                case RETRY -> new Lifecycle.RetryAsked(context.reason(), context.retryDelay());
                case FAIL -> new Lifecycle.DeadLetterAsked(context.reason());
                case SNOOZE -> new Lifecycle.SnoozeAsked(context.retryDelay(), context.snoozeUntil());
                case ACK -> new Lifecycle.Succeeded();
            };
        }
        Lifecycle.Decision decision = Lifecycle.decide(result, delivery.attempt(), delivery.maxAttempts(), backoffFor(delivery),
                ThreadLocalRandom.current()::nextDouble);
        if (decision instanceof Lifecycle.Ack && acks != null) {
            acks.submit(delivery, context.isCompletedInCallerTransaction(), observed, entry.holdsOthersBack);
            return;
        }
        String what = failure != null ? "failed attempt" : describe(decision);
        Recorded recorded = recordResult(delivery, what, () -> namespace.carryOut(delivery, decision));
        Outcome outcome = recorded.outcome();
        if (observed != null) {
            Instant retryAt = outcome == Outcome.RETRY_SCHEDULED && decision instanceof Lifecycle.Retry retry
                    ? clock.now().plus(retry.delay())
                    : outcome == Outcome.SNOOZED && decision instanceof Lifecycle.Snooze snooze
                    ? (snooze.until() != null ? snooze.until() : clock.now().plus(snooze.delay())) : null;
            String error = decision instanceof Lifecycle.Retry retry ? retry.error()
                    : decision instanceof Lifecycle.DeadLetter dead ? dead.error() : null;
            observed.ended(observedOutcome(outcome), retryAt, error);
        }
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
        if (recorded.outcome() == Outcome.LEASE_LOST && entry.cancelled) {
            log.info("message {} (topic {}, namespace {}) was cancelled while its handler ran (attempt {}); its {} changed nothing",
                    delivery.id(), delivery.topic(), delivery.namespace(), delivery.attempt(), what);
        } else if (recorded.outcome() == Outcome.LEASE_LOST && !context.isCompletedInCallerTransaction()) {
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
     * when the store is unavailable, with a pause growing from 50 ms to 2 s (jittered), for as long as a lease lasts from now:
     * the same bound acknowledgements have. Given up, the message waits for its lease to expire and spends an attempt;
     * retried, it runs again after its backoff. Each statement is guarded by the lease, so repeating one that did
     * commit changes nothing (it then finds the message no longer held).
     */
    private Recorded recordResult(Delivery delivery, String what, Supplier<Outcome> call) {
        long deadline = System.nanoTime() + lease.toNanos();
        int failures = 0;
        boolean retried = false;
        while (true) {
            try {
                return new Recorded(call.get(), retried);
            } catch (StoreUnavailableException e) {
                failures++;
                long pauseMillis = RetryPause.after(failures, AckBatcher.FIRST_RETRY_PAUSE, AckBatcher.MAX_RETRY_PAUSE,
                        ThreadLocalRandom.current()::nextDouble).toMillis();
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
            }
        }
    }

    /** The store's answer as the interceptors see it; a run that started is never released. */
    private static HandleOutcome observedOutcome(Outcome outcome) {
        return switch (outcome) {
            case ACKED -> HandleOutcome.ACKED;
            case RETRY_SCHEDULED -> HandleOutcome.RETRY_SCHEDULED;
            case DEAD_LETTERED -> HandleOutcome.DEAD_LETTERED;
            case SNOOZED -> HandleOutcome.SNOOZED;
            case LEASE_LOST, RELEASED, EXTENDED -> HandleOutcome.LEASE_LOST;
        };
    }

    private Backoff backoffFor(Delivery delivery) {
        return subscriber.backoff() != null ? subscriber.backoff() : options.backoffFor(delivery.topic());
    }

    /** The decision's name in the log lines of a settle that failed. */
    private static String describe(Lifecycle.Decision decision) {
        if (decision instanceof Lifecycle.Retry) {
            return "retry";
        }
        if (decision instanceof Lifecycle.DeadLetter) {
            return "dead-lettering";
        }
        if (decision instanceof Lifecycle.Snooze) {
            return "snooze";
        }
        return decision instanceof Lifecycle.Release ? "release" : "acknowledgement";
    }

    private static String describe(Throwable failure) {
        String message = failure.getMessage();
        return failure.getClass().getName() + (message == null ? "" : ": " + message);
    }
}
