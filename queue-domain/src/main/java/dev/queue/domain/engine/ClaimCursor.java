package dev.queue.domain.engine;

import dev.queue.domain.port.ClaimPosition;
import dev.queue.domain.port.ClaimedMessage;
import dev.queue.domain.port.Clock;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Where a dispatcher's claims left off in each topic's claim order. Claims resume there rather than at the head:
 * while a long transaction holds back vacuum, the head of the claim order is a growing run of entries of messages
 * claimed long ago, which every claim from the head would step over again. Messages can still turn up behind a
 * position: concurrent publishes commit out of the order of their ids, a publish's transaction may commit late, a
 * due time may be set in the past, a row another claim had locked may be let go. So a claim resumes only right
 * after a claim that filled up (a backlog is being worked through, and the next claim comes at once); a claim that
 * came back short is followed by one from the head, which finds what turned up behind. Under a steady backlog, once
 * per interval (and whenever a manual clock moved by that much or back) a claim looks from the head too.
 * Dispatcher thread only.
 */
final class ClaimCursor {

    private final Duration headEvery;
    private final Clock clock;
    private final Map<String, ClaimPosition> positions = new HashMap<>();
    private long lastHeadNanos;
    private Instant lastHeadClock;
    private boolean lastClaimFull;

    ClaimCursor(Duration headEvery, Clock clock) {
        this.headEvery = headEvery;
        this.clock = clock;
    }

    /** The positions the next claim resumes after; empty when it is to look from the head (counted as done). */
    Map<String, ClaimPosition> next() {
        long nowNanos = System.nanoTime();
        Instant clockNow = clock.now();
        boolean headDue = lastHeadClock == null
                || nowNanos - lastHeadNanos >= headEvery.toNanos()
                || clockNow.isBefore(lastHeadClock)
                || !clockNow.isBefore(lastHeadClock.plus(headEvery));
        if (headDue || !lastClaimFull || positions.isEmpty()) {
            lastHeadNanos = nowNanos;
            lastHeadClock = clockNow;
            return Map.of();
        }
        return positions;
    }

    /**
     * Moves each topic's position to the furthest message claimed in it (a claim from the head never moves one back),
     * and notes whether the claim filled up: only then may the next one resume.
     */
    void advance(List<ClaimedMessage> claimed, int asked) {
        lastClaimFull = claimed.size() >= asked;
        for (ClaimedMessage message : claimed) {
            ClaimPosition position = message.position();
            if (position != null) {
                positions.merge(message.topic(), position, (old, now) -> now.compareTo(old) > 0 ? now : old);
            }
        }
    }
}
