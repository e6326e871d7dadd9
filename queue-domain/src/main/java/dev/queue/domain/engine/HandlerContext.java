package dev.queue.domain.engine;

import dev.queue.api.Delivery;
import dev.queue.api.InvalidInputException;
import dev.queue.api.MessageContext;
import dev.queue.domain.port.Clock;
import dev.queue.domain.rules.InputRules;

import java.time.Duration;
import java.time.Instant;

/** The context of one handler run: records what the handler asked for, applied after it returns. */
final class HandlerContext implements MessageContext, CompletionAware {

    enum Intent { ACK, RETRY, FAIL, SNOOZE }

    private final Delivery delivery;
    /** Where the subscription notes that this run should stop. */
    private final HeldMessage held;
    private final Clock clock;
    private volatile Intent intent = Intent.ACK;
    private volatile Duration retryDelay;
    private volatile Instant snoozeUntil;
    private volatile String reason;
    private volatile boolean completedInCallerTransaction;

    HandlerContext(HeldMessage held, Clock clock) {
        this.delivery = held.delivery;
        this.held = held;
        this.clock = clock;
    }

    @Override
    public Delivery delivery() {
        return delivery;
    }

    @Override
    public void retryIn(Duration delay, String why) {
        if (delay == null || delay.isNegative() || delay.compareTo(InputRules.MAX_DELAY) > 0) {
            throw new InvalidInputException("delay", delay, "0 to " + InputRules.MAX_DELAY.toDays() + " days");
        }
        this.retryDelay = delay;
        this.reason = why;
        this.intent = Intent.RETRY;
    }

    @Override
    public void fail(String why) {
        this.reason = why;
        this.intent = Intent.FAIL;
    }

    @Override
    public void snooze(Duration delay) {
        if (delay == null || delay.isNegative() || delay.compareTo(InputRules.MAX_DELAY) > 0) {
            throw new InvalidInputException("delay", delay, "0 to " + InputRules.MAX_DELAY.toDays() + " days");
        }
        this.retryDelay = delay;
        this.snoozeUntil = null;
        this.intent = Intent.SNOOZE;
    }

    @Override
    public void snoozeUntil(Instant runAt) {
        if (runAt == null || runAt.isAfter(clock.now().plus(InputRules.MAX_DELAY))) {
            throw new InvalidInputException("runAt", runAt, "an instant at most " + InputRules.MAX_DELAY.toDays()
                    + " days ahead");
        }
        this.retryDelay = null;
        this.snoozeUntil = runAt;
        this.intent = Intent.SNOOZE;
    }

    @Override
    public boolean isCancelled() {
        return held.stopAsked();
    }

    @Override
    public void completedInCallerTransaction() {
        completedInCallerTransaction = true;
    }

    Intent intent() {
        return intent;
    }

    Duration retryDelay() {
        return retryDelay;
    }

    Instant snoozeUntil() {
        return snoozeUntil;
    }

    String reason() {
        return reason;
    }

    boolean isCompletedInCallerTransaction() {
        return completedInCallerTransaction;
    }
}
