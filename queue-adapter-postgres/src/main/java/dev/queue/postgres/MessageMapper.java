package dev.queue.postgres;

import dev.queue.api.TopicStats;
import dev.queue.domain.port.ClaimedMessage;
import org.apache.ibatis.annotations.Param;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The message area of {@code MessageMapper.xml}: each method calls one engine function (in {@code db/queue/}:
 * {@code R__publish.sql}, {@code R__claim.sql}, {@code R__settle.sql}, {@code R__rescue.sql}, ...), which enforces
 * the lease guards, dedup and the state machine. The Java side passes what the domain decided: the time
 * ({@code now}, null for the database clock), retry delays, the archive flag, the wake-ups to send.
 */
interface MessageMapper {

    /** The columns of a multi-row publish, one array element per message, in the caller's order. */
    record Batch(String[] namespaces, String[] topics, String[] payloads, String[] headers, Integer[] priorities,
                 Integer[] maxAttempts, String[] uniqueKeys, Long[] runAtMicros, Long[] delayMicros,
                 String[] notifyKeys, Instant now, String[] orderingKeys) {
    }

    /** One message of a publish without unique key; {@code notifyKey} null when its wake-up is held back. */
    record One(String namespace, String topic, String payload, String headers, int priority, int maxAttempts,
               Long runAtMicros, Long delayMicros, String notifyKey, Instant now) {
    }

    /** A claim as the store binds it; {@code async}: commit without waiting for the WAL flush. */
    record Claim(String namespace, String[] topics, String worker, int limit, long leaseToken, long leaseMicros,
                 Instant now, boolean async, Integer[] afterPriorities, Long[] afterRunAtMicros, Long[] afterIds,
                 Boolean[] behind) {
    }

    /** Leases to act on: {@code ids[i]} under {@code tokens[i]}, sorted by the engine. */
    record Leases(String namespace, Long[] ids, Long[] tokens, Instant now) {
    }

    /** One message of a publish with dedup: its 1-based position in the batch, its id or its holder's. */
    record Published(int ord, long id, boolean duplicate) {
    }

    /** {@code lookedUpTo}: the now the leases were compared with. */
    record Rescued(long requeued, long deadLettered, Instant lookedUpTo) {
    }

    /** A live or dead message as {@code _engine_find} returns it. */
    record Info(long id, String namespace, String topic, String state, String payload, Map<String, String> headers,
                int priority, int attempts, int maxAttempts, String uniqueKey, Instant publishedAt, Instant runAt,
                Instant leaseUntil, String worker, String lastError, String orderingKey) {
    }

    /** Unique keys, unregistered topics: one round-trip, the holder rounds run inside the function. */
    List<Published> publish(Batch batch);

    /** The same with ordering keys. */
    List<Published> publishKeyed(Batch batch);

    /** No unique keys, registered topics: a plain multi-row insert; ids in the caller's order. */
    List<Long> publishFast(Batch batch);

    Long publishOne(One message);

    List<ClaimedMessage> claim(Claim claim);

    /** The topics whose look behind the claim positions the caller takes ({@code take_head_sweeps}, R__claim.sql). */
    List<String> takeHeadSweeps(@Param("namespace") String namespace, @Param("topics") String[] topics,
                                @Param("gapMicros") long gapMicros, @Param("now") Instant now);

    List<Long> complete(@Param("namespace") String namespace, @Param("ids") Long[] ids, @Param("tokens") Long[] tokens,
                        @Param("archive") boolean archive, @Param("now") Instant now, @Param("async") boolean async);

    List<Long> retry(@Param("namespace") String namespace, @Param("ids") Long[] ids, @Param("tokens") Long[] tokens,
                     @Param("delayMicros") long delayMicros, @Param("error") String error, @Param("now") Instant now);

    List<Long> bury(@Param("namespace") String namespace, @Param("ids") Long[] ids, @Param("tokens") Long[] tokens,
                    @Param("error") String error, @Param("now") Instant now);

    List<Long> extend(@Param("namespace") String namespace, @Param("ids") Long[] ids, @Param("tokens") Long[] tokens,
                      @Param("leaseMicros") long leaseMicros, @Param("now") Instant now);

    List<Long> release(@Param("namespace") String namespace, @Param("ids") Long[] ids, @Param("tokens") Long[] tokens);

    Rescued rescue(@Param("namespace") String namespace, @Param("limit") int limit, @Param("now") Instant now,
                   @Param("expiredSince") Instant expiredSince);

    Instant nextDueAt(@Param("namespace") String namespace, @Param("topics") String[] topics, @Param("now") Instant now);

    List<TopicStats> stats(@Param("namespace") String namespace, @Param("now") Instant now);

    Info find(@Param("namespace") String namespace, @Param("id") long id);

    /**
     * An attempt of a message as {@code _engine_attempts} (R__operator.sql) lists them: outcome {@code retry},
     * {@code lease_expired}, {@code dead}, {@code running} or {@code completed}; ordinal, the place among the
     * message's ended attempts, null for the running or completed one.
     */
    record Attempt(int attempt, String outcome, String worker, Instant startedAt, Instant endedAt, String error,
                   Integer ordinal) {
    }

    /** The ended attempts kept for a message, oldest first, then the running one. */
    List<Attempt> findAttempts(@Param("namespace") String namespace, @Param("id") long id);
}
