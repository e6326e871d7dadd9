package dev.queue.inmemory;

import dev.queue.api.AttemptOutcome;
import dev.queue.api.MessageState;
import dev.queue.api.Outcome;
import dev.queue.domain.port.AckCommand;
import dev.queue.domain.port.DeadLetterCommand;
import dev.queue.domain.port.ExtendCommand;
import dev.queue.domain.port.LeaseRef;
import dev.queue.domain.port.ReleaseCommand;
import dev.queue.domain.port.RetryCommand;
import dev.queue.domain.port.SnoozeCommand;
import dev.queue.inmemory.InMemoryWakeUps.TopicKey;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

import static dev.queue.inmemory.InMemoryState.micros;

/**
 * The guarded changes of {@link InMemoryMessageStore} to a running message, each only while it runs under the
 * caller's lease: complete (ack), retry, bury (dead letter), extend, release and snooze.
 */
final class InMemorySettle {

    private final InMemoryState state;
    private final InMemoryDeadLetters deadLetters;
    private final InMemoryFlowControl flowControl;

    InMemorySettle(InMemoryState state, InMemoryDeadLetters deadLetters, InMemoryFlowControl flowControl) {
        this.state = state;
        this.deadLetters = deadLetters;
        this.flowControl = flowControl;
    }

    Set<Long> messageAckIfLeased(AckCommand command) {
        Set<TopicKey> toWake = new LinkedHashSet<>();
        Set<Long> done = new LinkedHashSet<>();
        state.lock.lock();
        try {
            Instant now = null;
            for (LeaseRef ref : command.leases()) {
                Msg msg = held(command.namespace(), ref);
                if (msg == null) {
                    continue;
                }
                state.stopRunning(msg);
                state.forget(msg);
                msg.topic.completed++;
                done.add(msg.id);
                if (msg.orderingKey != null) {
                    now = now == null ? state.now(command.time()) : now;
                    flowControl.headLeft(msg, false, now, toWake);
                }
            }
        } finally {
            state.lock.unlock();
        }
        state.wakeUps.signal(toWake);
        return done;
    }

    Outcome messageRetryIfLeased(RetryCommand command) {
        TopicKey toWake;
        Outcome outcome;
        state.lock.lock();
        try {
            Msg msg = held(command.namespace(), command.lease());
            if (msg == null) {
                return Outcome.LEASE_LOST;
            }
            Instant now = state.now(command.time());
            msg.recordFailure(command.error(), now, AttemptOutcome.RETRY);
            state.stopRunning(msg);
            msg.lastError = command.error();
            Duration delay = command.delay() == null || command.delay().isNegative() ? Duration.ZERO : command.delay();
            msg.runAt = micros(now.plus(delay));
            msg.topic.addPending(msg);
            toWake = new TopicKey(msg.namespace, msg.topic.name);
            outcome = Outcome.RETRY_SCHEDULED;
        } finally {
            state.lock.unlock();
        }
        state.wakeUps.signal(List.of(toWake));
        return outcome;
    }

    Outcome messageDeadLetterIfLeased(DeadLetterCommand command) {
        Set<TopicKey> toWake = new LinkedHashSet<>();
        state.lock.lock();
        try {
            Msg msg = held(command.namespace(), command.lease());
            if (msg == null) {
                return Outcome.LEASE_LOST;
            }
            msg.recordFailure(command.error(), state.now(command.time()), AttemptOutcome.DEAD);
            state.stopRunning(msg);
            msg.lastError = command.error();
            deadLetters.bury(msg, state.now(command.time()), toWake);
        } finally {
            state.lock.unlock();
        }
        state.wakeUps.signal(toWake);
        return Outcome.DEAD_LETTERED;
    }

    Set<Long> messageExtendIfLeased(ExtendCommand command) {
        Duration lease = Objects.requireNonNull(command.lease(), "lease");
        state.lock.lock();
        try {
            Instant leaseUntil = micros(state.now(command.time()).plus(lease));
            Set<Long> extended = new LinkedHashSet<>();
            for (LeaseRef ref : command.leases()) {
                Msg msg = held(command.namespace(), ref);
                if (msg == null) {
                    continue;
                }
                state.leases.remove(msg);
                msg.leaseUntil = leaseUntil;
                state.leases.add(msg);
                extended.add(msg.id);
            }
            return extended;
        } finally {
            state.lock.unlock();
        }
    }

    Set<Long> messageReleaseIfLeased(ReleaseCommand command) {
        Set<TopicKey> toWake = new LinkedHashSet<>();
        Set<Long> released = new LinkedHashSet<>();
        state.lock.lock();
        try {
            for (LeaseRef ref : command.leases()) {
                Msg msg = held(command.namespace(), ref);
                if (msg == null) {
                    continue;
                }
                state.stopRunning(msg);
                msg.attempts = Math.max(0, msg.attempts - 1);
                msg.topic.addPending(msg);
                released.add(msg.id);
                toWake.add(new TopicKey(msg.namespace, msg.topic.name));
            }
        } finally {
            state.lock.unlock();
        }
        state.wakeUps.signal(toWake);
        return released;
    }

    Outcome messageSnoozeIfLeased(SnoozeCommand command) {
        TopicKey toWake;
        state.lock.lock();
        try {
            Msg msg = held(command.namespace(), command.lease());
            if (msg == null) {
                return Outcome.LEASE_LOST;
            }
            Instant now = state.now(command.time());
            Instant runAt = command.runAt() != null ? micros(command.runAt())
                    : micros(now.plus(command.delay() == null ? Duration.ZERO : command.delay()));
            state.stopRunning(msg);
            msg.attempts = Math.max(0, msg.attempts - 1);
            msg.runAt = runAt.isBefore(now) ? now : runAt;
            msg.topic.addPending(msg);
            toWake = new TopicKey(msg.namespace, msg.topic.name);
        } finally {
            state.lock.unlock();
        }
        state.wakeUps.signal(List.of(toWake));
        return Outcome.SNOOZED;
    }

    /** The message when it is running under this lease in this namespace, else null. */
    private Msg held(String namespace, LeaseRef ref) {
        if (ref == null) {
            return null;
        }
        Msg msg = state.live.get(ref.id());
        if (msg == null || msg.state != MessageState.RUNNING || msg.leaseToken != ref.leaseToken()
                || !msg.namespace.equals(namespace)) {
            return null;
        }
        return msg;
    }
}
