package dev.queue.domain.port;

import dev.queue.api.InvalidInputException;

import java.time.Instant;
import java.util.function.Supplier;

/**
 * The time a store command acts at: the store's own clock (in production the database's, one clock for the whole
 * fleet), or an instant the domain gives (a test's manual clock, or a store without a clock of its own). A value,
 * never null, so no store has to guess what a missing time means.
 */
public sealed interface CommandTime {

    /** The store reads its own clock when it runs the command. */
    static CommandTime storeClock() {
        return StoreClock.INSTANCE;
    }

    /** The command acts at exactly this instant. */
    static CommandTime at(Instant instant) {
        return new Given(InvalidInputException.requireNonNull(instant, "instant", "an Instant"));
    }

    /** The instant this time stands for, reading {@code storeClock} when it is the store's own clock. */
    Instant resolve(Supplier<Instant> storeClock);

    /** The given instant, or null for the store's clock: for adapters binding it to a query that reads its own. */
    Instant givenOrNull();

    record Given(Instant instant) implements CommandTime {

        @Override
        public Instant resolve(Supplier<Instant> storeClock) {
            return instant;
        }

        @Override
        public Instant givenOrNull() {
            return instant;
        }
    }

    enum StoreClock implements CommandTime {
        INSTANCE;

        @Override
        public Instant resolve(Supplier<Instant> storeClock) {
            return storeClock.get();
        }

        @Override
        public Instant givenOrNull() {
            return null;
        }
    }
}
