package dev.queue.domain.engine;

import dev.queue.domain.port.Clock;

import java.time.Instant;

/** The queue's clock, and the time its store commands carry. */
final class StoreTime {

    private final Clock clock;

    StoreTime(Clock clock) {
        this.clock = clock;
    }

    /** The clock's time when it is authoritative, else null: the store's own clock decides. */
    Instant forCommand() {
        return clock.isAuthoritative() ? clock.now() : null;
    }

    Clock clock() {
        return clock;
    }
}
