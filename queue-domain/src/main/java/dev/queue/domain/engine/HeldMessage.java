package dev.queue.domain.engine;

import dev.queue.api.Delivery;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;

/** A message a subscription holds: claimed, maybe started, until settled or given back. */
final class HeldMessage {

    private enum State { CLAIMED, STARTED, RELEASED }

    final Delivery delivery;
    /**
     * Whether its settling frees room under its topic's running limit, which the next claim waits for: its
     * acknowledgement is recorded without waiting to be batched with more. A successor of an ordering key is
     * promoted by the batched acknowledgement like any other.
     */
    final boolean holdsOthersBack;
    private final AtomicInteger state = new AtomicInteger(State.CLAIMED.ordinal());
    /** Until when its lease runs as last extended; null once an extension found it gone. */
    volatile Instant leaseUntil;
    /** Set when the handler has returned or thrown: from then on a lease that is gone is no cause for alarm. */
    volatile boolean handlerDone;
    /** Set when this queue instance cancelled the message while it was held here. */
    volatile boolean cancelled;

    /** @param limited whether the message's topic has a running limit: its settling frees room */
    HeldMessage(Delivery delivery, boolean limited) {
        this.delivery = delivery;
        this.holdsOthersBack = limited;
        this.leaseUntil = delivery.leaseUntil();
    }

    /** Claimed to started, once; false if it was given back first. */
    boolean start() {
        return state.compareAndSet(State.CLAIMED.ordinal(), State.STARTED.ordinal());
    }

    /** Claimed to given back, once; false if its handler started first. */
    boolean release() {
        return state.compareAndSet(State.CLAIMED.ordinal(), State.RELEASED.ordinal());
    }

    /** Whether its handler should stop: cancelled here, or its lease found gone by an extension (cancelled elsewhere, or lost). */
    boolean stopAsked() {
        return cancelled || leaseUntil == null;
    }

    boolean started() {
        return state.get() == State.STARTED.ordinal();
    }

    long id() {
        return delivery.id().value();
    }
}
