package dev.queue.postgres;

import dev.queue.api.Backoff;
import dev.queue.api.QueueOptions;

import java.util.Map;

/**
 * Writes a queue's options as the policy the SQL functions apply to callers that pass no decision of their own
 * ({@code nack} without a delay, rescue, {@code push} without max attempts), so a message retried from psql waits
 * what a Java subscriber's failure would. The defaults become the policy of every queue of every namespace
 * ({@code '*'}, {@code '*'}), each per-topic backoff that of its topic in every namespace. Policies set for one
 * namespace from SQL take precedence and are left alone. Processes started with different options overwrite each
 * other's rows: the last one started wins.
 */
final class QueuePolicies {

    static final String EVERY = "*";

    private QueuePolicies() {
    }

    /** Returns how many policy rows were written. */
    static int write(Sessions sessions, QueueOptions options, CompletedRetention retention) {
        return sessions.inTransaction("writing the queue policies", session -> {
            MaintenanceMapper mapper = session.getMapper(MaintenanceMapper.class);
            // the audit trigger records who changed a policy
            sessions.actLocally(session);
            boolean archive = retention == CompletedRetention.ARCHIVE;
            mapper.writePolicy(row(EVERY, options, options.defaultBackoff(), archive));
            int written = 1;
            for (Map.Entry<String, Backoff> topic : options.topicBackoffs().entrySet()) {
                mapper.writePolicy(row(topic.getKey(), options, topic.getValue(), archive));
                written++;
            }
            return written;
        });
    }

    private static MaintenanceMapper.Policy row(String topic, QueueOptions options, Backoff backoff, boolean archive) {
        return new MaintenanceMapper.Policy(EVERY, topic, options.defaultMaxAttempts(), backoff.base().toNanos() / 1000,
                backoff.cap().toNanos() / 1000, backoff.multiplier(), backoff.jitter(), options.maxPayloadBytes(), archive);
    }
}
