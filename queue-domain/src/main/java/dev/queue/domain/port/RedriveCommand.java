package dev.queue.domain.port;


/**
 * Dead letters back to pending, due now, attempts reset to zero: the one with {@code id} when not null,
 * otherwise those of {@code topic} with an id above {@code afterId}, in id order, at most {@code limit} of them
 * looked at. A redriven message whose unique key is held by a pending or running message stays dead (the live
 * one already does its work).
 */
public record RedriveCommand(String namespace, Long id, String topic, long afterId, int limit, CommandTime time) {

    /** The one dead letter with this id. */
    public static RedriveCommand one(String namespace, long id, CommandTime time) {
        return new RedriveCommand(namespace, id, null, 0, 1, time);
    }

    /** The next batch of a topic's dead letters, after the given id. */
    public static RedriveCommand batch(String namespace, String topic, long afterId, int limit, CommandTime time) {
        return new RedriveCommand(namespace, null, topic, afterId, limit, time);
    }
}
