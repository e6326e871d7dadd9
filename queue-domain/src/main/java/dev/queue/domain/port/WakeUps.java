package dev.queue.domain.port;

import java.util.Collection;
import java.util.function.BiConsumer;
import java.util.function.LongConsumer;

/**
 * "Something may be ready on one of these topics." Only a hint: a lost wake-up costs latency, never a
 * message, because subscribers also sweep. Publishing stores signal wake-ups themselves (for Postgres, a
 * NOTIFY inside the publishing transaction, so only on commit).
 */
public interface WakeUps {

    /** Calls {@code onWake} (on any thread, possibly spuriously) when topics of the namespace may have work. */
    Registration listen(String namespace, Collection<String> topics, Runnable onWake);

    /**
     * Calls {@code onCancel} with the id of a running message of the namespace that was cancelled elsewhere (another
     * process, SQL), so that its handler hears of it at once. Only a hint too: without it the handler hears of the
     * cancel at its next lease extension. Wake-ups that cannot carry it keep this default, which never calls.
     */
    default Registration listenForCancels(String namespace, LongConsumer onCancel) {
        return () -> { };
    }

    /**
     * Calls {@code onPromoted} with a topic of the namespace and the place in its claim order of the first message
     * an ordering key just made pending there. Such a message keeps its id and is due from its promotion, so it may
     * sort behind where claimers of the topic have already passed: they should look again from just before it.
     * Only a hint too: without it the sweep behind the positions finds the message. Wake-ups that cannot carry it
     * keep this default, which never calls.
     */
    default Registration listenForPromotions(String namespace, Collection<String> topics,
                                             BiConsumer<String, ClaimPosition> onPromoted) {
        return () -> { };
    }

    /** Stops one listener. */
    interface Registration extends AutoCloseable {
        @Override
        void close();
    }
}
