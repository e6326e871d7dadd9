package dev.queue.domain.engine;

import dev.queue.api.Delivery;
import dev.queue.api.InvalidInputException;
import dev.queue.api.MessageContext;
import dev.queue.domain.rules.InputRules;

import java.time.Duration;

/** The context of one handler run: records what the handler asked for, applied after it returns. */
final class HandlerContext implements MessageContext, CompletionAware {

    enum Intent { ACK, RETRY, FAIL }

    private final Delivery delivery;
    private volatile Intent intent = Intent.ACK;
    private volatile Duration retryDelay;
    private volatile String reason;
    private volatile boolean completedInCallerTransaction;

    HandlerContext(Delivery delivery) {
        this.delivery = delivery;
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
    public void completedInCallerTransaction() {
        completedInCallerTransaction = true;
    }

    Intent intent() {
        return intent;
    }

    Duration retryDelay() {
        return retryDelay;
    }

    String reason() {
        return reason;
    }

    boolean isCompletedInCallerTransaction() {
        return completedInCallerTransaction;
    }
}
