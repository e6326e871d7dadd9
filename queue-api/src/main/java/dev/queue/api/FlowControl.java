package dev.queue.api;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Flow control of one namespace: pause and resume topics, limit them, cancel messages, and choose what the
 * messages of an ordering key ({@link Message#orderingKey(String)}) do behind a dead letter. All are durable and
 * hold for every process sharing the store (docs/flow-control.md). Every method throws {@link InvalidInputException} for a bad
 * argument (nothing changed), {@link QueueClosedException} once the queue is closed, and
 * {@link StoreUnavailableException} when the store fails. On a queue whose store lacks flow control they throw
 * {@link UnsupportedCapabilityException}.
 */
public interface FlowControl {

    /**
     * Stops claims from a topic, in every process: messages already running finish (and may be retried, snoozed or
     * dead-lettered as usual), but once this returns no claim starts a message of the topic until it is resumed.
     * Publishing to a paused topic goes on; its messages wait. Recorded with the queue's actor.
     *
     * @param topic the topic
     * @return true when the topic was running and is paused now; false when it was paused already
     * @throws InvalidInputException when the topic is not a valid name
     */
    boolean pause(String topic);

    /**
     * Lets claims from a paused topic go on, and wakes its subscribers. Recorded with the queue's actor.
     *
     * @param topic the topic
     * @return true when the topic was paused; false when it was not
     * @throws InvalidInputException when the topic is not a valid name
     */
    boolean resume(String topic);

    /**
     * The paused topics of this namespace.
     *
     * @return their names, sorted; empty when none is paused
     */
    List<String> pausedTopics();

    /**
     * Takes a pending or running message out of the queue for good. A pending one never runs; a running one keeps
     * running until its handler notices ({@link MessageContext#isCancelled()}), and whatever its holder then asks
     * ({@code ack}, {@code nack}, {@code fail}, {@code extend}, {@code snooze}) answers {@link Outcome#LEASE_LOST}
     * and changes nothing. Its unique key is free again. Where the store keeps an audit trail, the cancel is
     * recorded there with the queue's actor.
     *
     * @param id the message's id
     * @return the state the message was cancelled in ({@link MessageState#PENDING} or {@link MessageState#RUNNING});
     *         empty when no pending or running message of this namespace has the id (done, dead or unknown)
     * @throws InvalidInputException when the id is null
     */
    Optional<MessageState> cancel(MessageId id);

    /**
     * Sets the topic's limits for every process sharing the store, replacing any it had: at most so many of its
     * messages running at once, and at most so many starts per period, in the topic and per partition
     * (docs/flow-control.md, "Limits"). Claims that begin after this returns respect them; messages already running
     * count against them and finish. Recorded with the queue's actor; wakes the topic's subscribers.
     *
     * @param topic  the topic
     * @param limits the limits, at least one
     * @return true when the limits changed; false when the topic had exactly these
     * @throws InvalidInputException when the topic is not a valid name or a limit is out of range (see
     *                               {@link TopicLimits})
     */
    boolean setLimits(String topic, TopicLimits limits);

    /**
     * The topic's limits.
     *
     * @param topic the topic
     * @return its limits; empty when it has none
     * @throws InvalidInputException when the topic is not a valid name
     */
    Optional<TopicLimits> limits(String topic);

    /**
     * Removes the topic's limits, for every process, and wakes its subscribers. Recorded with the queue's actor.
     *
     * @param topic the topic
     * @return true when it had limits
     * @throws InvalidInputException when the topic is not a valid name
     */
    boolean clearLimits(String topic);

    /**
     * The limited topics of this namespace.
     *
     * @return each limited topic's limits, by name
     */
    Map<String, TopicLimits> allLimits();

    /**
     * Chooses what the later messages of an ordering key of a topic do while an earlier message of their key is a
     * dead letter: {@link BehindDeadLetter#WAIT} (the default) or {@link BehindDeadLetter#CONTINUE}. Going to
     * {@code CONTINUE} lets the keys waiting behind a dead letter go on at once, and wakes the topic's subscribers.
     * Durable, for every process sharing the store; recorded with the queue's actor. On a store without ordering keys
     * it throws {@link UnsupportedCapabilityException}.
     *
     * @param topic  the topic
     * @param choice {@code WAIT} or {@code CONTINUE}
     * @return true when the topic's choice changed; false when it was that already
     * @throws InvalidInputException when the topic is not a valid name or the choice is null
     */
    boolean setBehindDeadLetter(String topic, BehindDeadLetter choice);

    /**
     * The choice of a topic set with {@link #setBehindDeadLetter(String, BehindDeadLetter)}.
     *
     * @param topic the topic
     * @return the choice; {@link BehindDeadLetter#WAIT} when never set
     * @throws InvalidInputException when the topic is not a valid name
     */
    BehindDeadLetter behindDeadLetter(String topic);
}
