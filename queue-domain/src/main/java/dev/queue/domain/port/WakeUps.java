package dev.queue.domain.port;

import java.util.Collection;

/**
 * "Something may be ready on one of these topics." Only a hint: a lost wake-up costs latency, never a
 * message, because subscribers also sweep. Publishing stores signal wake-ups themselves (for Postgres, a
 * NOTIFY inside the publishing transaction, so only on commit).
 */
public interface WakeUps {

    /** Calls {@code onWake} (on any thread, possibly spuriously) when topics of the namespace may have work. */
    Registration listen(String namespace, Collection<String> topics, Runnable onWake);

    /** Stops one listener. */
    interface Registration extends AutoCloseable {
        @Override
        void close();
    }
}
