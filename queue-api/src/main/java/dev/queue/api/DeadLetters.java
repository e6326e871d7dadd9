package dev.queue.api;

import java.util.List;
import java.util.Optional;

/**
 * The dead letters of one namespace: inspect them, send them back to pending, or delete them. Nothing here sees or
 * changes the dead letters of another namespace. Every method throws {@link InvalidInputException} for a bad
 * argument (nothing changed), {@link QueueClosedException} once the queue is closed, and
 * {@link StoreUnavailableException} when the store fails.
 */
public interface DeadLetters {

    /**
     * One page of the namespace's dead letters, oldest first, by id.
     *
     * @param page how many (1 to 1000) and after which id; {@link Page#first(int)} to start
     * @return at most {@code page.limit()} dead letters; empty past the last
     * @throws InvalidInputException when the page is null or its limit is out of range
     */
    List<DeadLetter> list(Page page);

    /**
     * One page of the dead letters of one topic, oldest first, by id.
     *
     * @param topic the topic
     * @param page  how many (1 to 1000) and after which id; {@link Page#first(int)} to start
     * @return at most {@code page.limit()} dead letters; empty past the last
     * @throws InvalidInputException when the topic is not a valid name, or the page is null or out of range
     */
    List<DeadLetter> list(String topic, Page page);

    /**
     * One dead letter.
     *
     * @param id the message's id
     * @return the dead letter; empty when no dead letter of this namespace has the id
     * @throws InvalidInputException when the id is null
     */
    Optional<DeadLetter> get(MessageId id);

    /**
     * Makes a dead letter pending again, due now, with its attempts counted from zero and its last error kept
     * for inspection. It keeps its id.
     *
     * @param id the message's id
     * @return true when redriven; false when no dead letter of this namespace has the id
     * @throws InvalidInputException when the id is null
     */
    boolean redrive(MessageId id);

    /**
     * Redrives every dead letter of a topic, as {@link #redrive(MessageId)} does one. It works in batches, each
     * its own transaction: a failure part way leaves the batches before it redriven.
     *
     * @param topic the topic
     * @return how many were redriven
     * @throws InvalidInputException when the topic is not a valid name
     */
    int redriveAll(String topic);

    /**
     * Deletes one dead letter for good.
     *
     * @param id the message's id
     * @return true when deleted; false when no dead letter of this namespace has the id
     * @throws InvalidInputException when the id is null
     */
    boolean purge(MessageId id);

    /**
     * Deletes every dead letter of a topic, in batches, each its own transaction.
     *
     * @param topic the topic
     * @return how many were deleted
     * @throws InvalidInputException when the topic is not a valid name
     */
    int purgeAll(String topic);

    /**
     * Deletes every dead letter of the namespace, in batches, each its own transaction.
     *
     * @return how many were deleted
     */
    int purgeAll();
}
