package dev.queue.api;

/**
 * The identity of a stored message, unique within one queue installation. Ids are assigned in increasing
 * order as messages are stored; ordered by id and compared numerically.
 *
 * @param value the store's number for the message
 */
public record MessageId(long value) implements Comparable<MessageId> {

    /**
     * The id with this number.
     *
     * @param value the store's number for the message
     * @return the id
     */
    public static MessageId of(long value) {
        return new MessageId(value);
    }

    @Override
    public int compareTo(MessageId other) {
        return Long.compare(value, other.value);
    }

    @Override
    public String toString() {
        return Long.toString(value);
    }
}
