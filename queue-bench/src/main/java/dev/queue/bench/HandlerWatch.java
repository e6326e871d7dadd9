package dev.queue.bench;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the handlers see running, to check the queue's promises while it is measured: the most handlers running at
 * once in the whole fleet (against a concurrency limit), and, per ordering key, handlers of one key running at
 * once (overlaps) and starts of a message published before one of its key that already started (out of order).
 *
 * <p>A key's publish order is the order of its messages' ids (docs/flow-control.md, "Races considered"), so a
 * handler compares its message's id with the highest id started for the key. The bench's publish counter is no
 * substitute: two producers can commit their batches in either order. A message starting again while it is still the
 * highest of its key (a retry, a redelivery) keeps its place and is not out of order; one starting again after a later
 * message of its key started is, since that later message then ran before it had left.
 *
 * <p>The handler path takes no lock and allocates nothing: atomics, and arrays indexed by the key's number.
 */
final class HandlerWatch {

    /** The bench's keys are {@code k<number>}; anything else is not watched. */
    static final int NO_KEY = -1;

    private final AtomicInteger running = new AtomicInteger();
    private final AtomicInteger peakRunning = new AtomicInteger();
    private final int keys;
    private final AtomicIntegerArray runningOfKey;
    private final AtomicLongArray highestStartedIdOfKey;
    private final AtomicInteger peakRunningOfAKey = new AtomicInteger();
    private final LongAdder keyOverlaps = new LongAdder();
    private final LongAdder keyOutOfOrder = new LongAdder();

    /** Watches the keys {@code k0} to {@code k<keys-1>}; 0 for a run without ordering keys. */
    HandlerWatch(int keys) {
        if (keys < 0) {
            throw new IllegalArgumentException("keys must be 0 or more, got " + keys);
        }
        this.keys = keys;
        runningOfKey = new AtomicIntegerArray(keys);
        highestStartedIdOfKey = new AtomicLongArray(keys);
        for (int key = 0; key < keys; key++) {
            highestStartedIdOfKey.set(key, Long.MIN_VALUE);
        }
    }

    /** The number of the bench's key {@code k<number>}, or {@link #NO_KEY} for none or another form. */
    int keyNumber(String key) {
        if (key == null || key.length() < 2 || key.length() > 11 || key.charAt(0) != 'k') {
            return NO_KEY;
        }
        long number = 0;
        for (int i = 1; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c < '0' || c > '9') {
                return NO_KEY;
            }
            number = number * 10 + (c - '0');
        }
        return number < keys ? (int) number : NO_KEY;
    }

    /** A handler starts message {@code messageId} of the key numbered {@code key} ({@link #NO_KEY}: none). */
    void started(long messageId, int key) {
        int now = running.incrementAndGet();
        if (now > peakRunning.get()) {
            peakRunning.accumulateAndGet(now, Math::max);
        }
        if (key == NO_KEY) {
            return;
        }
        int ofKey = runningOfKey.incrementAndGet(key);
        if (ofKey > 1) {
            keyOverlaps.increment();
        }
        if (ofKey > peakRunningOfAKey.get()) {
            peakRunningOfAKey.accumulateAndGet(ofKey, Math::max);
        }
        long highestBefore = highestStartedIdOfKey.getAndAccumulate(key, messageId, Math::max);
        if (messageId < highestBefore) {
            keyOutOfOrder.increment();
        }
    }

    /** The handler that {@link #started} with this key has returned or thrown. */
    void finished(int key) {
        running.decrementAndGet();
        if (key != NO_KEY) {
            runningOfKey.decrementAndGet(key);
        }
    }

    /** The most handlers running at once, across every replica of this process. */
    int peakRunning() {
        return peakRunning.get();
    }

    /** The most handlers of one key running at once: 1 when the keys held, 0 before any keyed message ran. */
    int peakRunningOfAKey() {
        return peakRunningOfAKey.get();
    }

    /** Handler starts while another handler of the same key was running. */
    long keyOverlaps() {
        return keyOverlaps.sum();
    }

    /** Handler starts of a message with a lower id than one of its key that had already started. */
    long keyOutOfOrder() {
        return keyOutOfOrder.sum();
    }
}
