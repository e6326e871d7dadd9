package dev.queue.api.observation;

import dev.queue.api.Delivery;
import dev.queue.api.MessageId;

import java.time.Duration;
import java.time.Instant;

/**
 * A handler run whose result is recorded.
 *
 * @param delivery        the message as claimed
 * @param outcome         what became of it
 * @param startedAt       the queue's clock when the run started
 * @param handlerDuration how long the handler ran, by the queue's clock
 * @param retryAt         when it is due again, by the queue's clock; null unless {@link HandleOutcome#RETRY_SCHEDULED}
 *                        or {@link HandleOutcome#SNOOZED}
 * @param error           the recorded error (the handler's exception or the reason it gave); null on success
 * @param failure         what the handler threw; null when it returned
 */
public record HandleEnd(Delivery delivery, HandleOutcome outcome, Instant startedAt, Duration handlerDuration,
                        Instant retryAt, String error, Throwable failure) {

    /**
     * The message's id.
     *
     * @return the id
     */
    public MessageId messageId() {
        return delivery.id();
    }

    /**
     * The namespace the message belongs to.
     *
     * @return the namespace name
     */
    public String namespace() {
        return delivery.namespace();
    }

    /**
     * The topic the message was published to.
     *
     * @return the topic name
     */
    public String topic() {
        return delivery.topic();
    }

    /**
     * Which attempt the run was.
     *
     * @return 1 on the first run, 2 on the first retry, and so on
     */
    public int attempt() {
        return delivery.attempt();
    }
}
