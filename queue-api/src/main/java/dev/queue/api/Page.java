package dev.queue.api;

/** One page of a listing ordered by message id: at most {@code limit} entries after {@code after} (exclusive). */
public record Page(int limit, MessageId after) {

    public static Page first(int limit) {
        return new Page(limit, null);
    }

    /** The page that follows the entry with the given id. */
    public Page after(MessageId lastSeen) {
        return new Page(limit, lastSeen);
    }
}
