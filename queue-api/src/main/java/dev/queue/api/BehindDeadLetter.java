package dev.queue.api;

/**
 * What the later messages of an ordering key do while an earlier message of the key is a dead letter: a per-topic
 * choice ({@link FlowControl#setBehindDeadLetter(String, BehindDeadLetter)}), {@link #WAIT} unless set.
 */
public enum BehindDeadLetter {
    /**
     * They wait until the dead letter is redriven (it then runs again before them) or purged. The default: the order
     * of a key is kept, and a failure shows as a dead letter with its key's later messages waiting behind it.
     */
    WAIT,
    /** The next one goes on as if the dead letter had completed; a redriven dead letter runs when its key is free. */
    CONTINUE
}
