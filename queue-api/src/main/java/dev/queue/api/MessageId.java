package dev.queue.api;

/** The identity of a stored message, unique within one queue installation. */
public record MessageId(long value) implements Comparable<MessageId> {

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
