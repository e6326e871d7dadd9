package dev.queue.api;

import java.util.List;
import java.util.Optional;

/** The dead letters of one namespace: inspect them, send them back to pending, or delete them. */
public interface DeadLetters {

    /** Oldest first, by id. */
    List<DeadLetter> list(Page page);

    /** Oldest first, by id, of one topic. */
    List<DeadLetter> list(String topic, Page page);

    Optional<DeadLetter> get(MessageId id);

    /**
     * Makes a dead letter pending again, due now, with its attempts counted from zero and its last error kept
     * for inspection. False when no dead letter of this namespace has the id.
     */
    boolean redrive(MessageId id);

    /** Redrives every dead letter of a topic; returns how many. */
    int redriveAll(String topic);

    /** Deletes one dead letter for good. False when no dead letter of this namespace has the id. */
    boolean purge(MessageId id);

    /** Deletes every dead letter of a topic; returns how many. */
    int purgeAll(String topic);

    /** Deletes every dead letter of the namespace; returns how many. */
    int purgeAll();
}
