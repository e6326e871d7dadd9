package dev.queue.api;

/**
 * One page of a listing ordered by message id: at most {@code limit} entries after {@code after} (exclusive).
 * Listings check the limit: 1 to 1000, else {@link InvalidInputException}.
 *
 * @param limit how many entries at most, 1 to 1000
 * @param after the id of the last entry already seen; null to start from the first
 */
public record Page(int limit, MessageId after) {

    /**
     * The first page.
     *
     * @param limit how many entries at most, 1 to 1000
     * @return a page starting from the first entry
     */
    public static Page first(int limit) {
        return new Page(limit, null);
    }

    /**
     * The page that follows the entry with the given id, of the same size.
     *
     * @param lastSeen the id of the last entry of the previous page
     * @return the next page
     */
    public Page after(MessageId lastSeen) {
        return new Page(limit, lastSeen);
    }
}
