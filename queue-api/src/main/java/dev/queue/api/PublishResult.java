package dev.queue.api;

/**
 * What publishing one message did. A message with a unique key that matches a message still pending or
 * running is not stored; the caller learns that, and the id of the message that already holds the key.
 */
public sealed interface PublishResult permits PublishResult.Published, PublishResult.Duplicate {

    /**
     * The id of the stored message: the new one, or for a duplicate the one already holding the key.
     *
     * @return the message id
     */
    MessageId id();

    /**
     * Whether the message was a duplicate, so that nothing was stored.
     *
     * @return true for a {@link Duplicate}
     */
    default boolean isDuplicate() {
        return this instanceof Duplicate;
    }

    /**
     * A new message was stored.
     *
     * @param id the new message's id
     */
    record Published(MessageId id) implements PublishResult {
    }

    /**
     * Nothing was stored, because a pending or running message of the same topic holds the same unique key.
     *
     * @param id        the id of the message holding the key
     * @param uniqueKey the key
     */
    record Duplicate(MessageId id, String uniqueKey) implements PublishResult {
    }
}
