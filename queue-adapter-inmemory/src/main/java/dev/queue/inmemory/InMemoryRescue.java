package dev.queue.inmemory;

import dev.queue.api.AttemptOutcome;
import dev.queue.domain.port.RescueCommand;
import dev.queue.domain.port.RescueResult;
import dev.queue.domain.rules.Lifecycle;
import dev.queue.inmemory.InMemoryWakeUps.TopicKey;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The rescue of {@link InMemoryMessageStore}: messages whose lease expired are pending again, or dead letters when the
 * expired attempt was their last. The running messages are ordered by lease end, so it visits only expired leases.
 */
final class InMemoryRescue {

    static final String LEASE_EXPIRED = "lease expired";
    static final String LEASE_EXPIRED_ON_LAST_ATTEMPT = "lease expired on its last attempt";

    private final InMemoryState state;
    private final InMemoryDeadLetters deadLetters;

    InMemoryRescue(InMemoryState state, InMemoryDeadLetters deadLetters) {
        this.state = state;
        this.deadLetters = deadLetters;
    }

    RescueResult messageRescueExpired(RescueCommand command) {
        Set<TopicKey> toWake = new LinkedHashSet<>();
        int requeued = 0;
        int deadLettered = 0;
        state.lock.lock();
        try {
            Instant now = state.now(command.time());
            List<Msg> expired = new ArrayList<>();
            for (Msg msg : state.leases) {
                if (expired.size() >= command.limit() || !msg.leaseUntil.isBefore(now)) {
                    break;
                }
                if (command.namespace() == null || command.namespace().equals(msg.namespace)) {
                    expired.add(msg);
                }
            }
            for (Msg msg : expired) {
                boolean left = Lifecycle.attemptsLeft(msg.attempts, msg.maxAttempts);
                msg.recordFailure(left ? LEASE_EXPIRED : LEASE_EXPIRED_ON_LAST_ATTEMPT, now,
                        left ? AttemptOutcome.LEASE_EXPIRED : AttemptOutcome.DEAD);
                state.stopRunning(msg);
                if (Lifecycle.attemptsLeft(msg.attempts, msg.maxAttempts)) {
                    msg.lastError = LEASE_EXPIRED;
                    msg.runAt = now;
                    msg.topic.addPending(msg);
                    toWake.add(new TopicKey(msg.namespace, msg.topic.name));
                    requeued++;
                } else {
                    msg.lastError = LEASE_EXPIRED_ON_LAST_ATTEMPT;
                    deadLetters.bury(msg, now, toWake);
                    deadLettered++;
                }
            }
        } finally {
            state.lock.unlock();
        }
        state.wakeUps.signal(toWake);
        return new RescueResult(requeued, deadLettered);
    }
}
