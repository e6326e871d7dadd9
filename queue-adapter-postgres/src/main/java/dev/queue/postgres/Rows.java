package dev.queue.postgres;

import java.time.Instant;

/**
 * What the mapper's queries return, filled by MyBatis (columns to fields, snake case to camel case). Plain
 * holders, internal to the adapter: the store turns them into the port's records before anything leaves it.
 */
final class Rows {

    private Rows() {
    }

    /** One published message, in input order. */
    static final class PublishRow {
        long ord;
        long id;
        boolean inserted;
        boolean firstOfKey;
        Long holderId;
    }

    /** A live or dead message as it stands. */
    static final class InfoRow {
        long id;
        String namespace;
        String topic;
        String state;
        String payload;
        String headers;
        int priority;
        int attempts;
        int maxAttempts;
        String uniqueKey;
        Instant publishedAt;
        Instant runAt;
        Instant leaseUntil;
        String worker;
        String lastError;
    }

    /** One failed attempt of a message (table attempt_errors). */
    static final class AttemptRow {
        int attempt;
        String error;
        String worker;
        Instant failedAt;
    }

    static final class DeadLetterRow {
        long id;
        String namespace;
        String topic;
        String payload;
        String headers;
        int priority;
        int attempts;
        int maxAttempts;
        String uniqueKey;
        String lastError;
        Instant publishedAt;
        Instant failedAt;
    }

    static final class StatsRow {
        String topic;
        long pending;
        long running;
        long completed;
        long dead;
        Instant oldestDueAt;
    }

    static final class OutcomeRow {
        String outcome;
        long notified;
    }

    static final class RescueRow {
        int requeued;
        int deadLettered;
        long notified;
        Instant lookedUpTo;
    }

    static final class RedriveRow {
        int redriven;
        int examined;
        long lastId;
        long notified;
    }

    static final class VersionRow {
        int version;
        String description;
        long checksum;
    }

    static final class ScheduleRow {
        String namespace;
        String name;
        String cron;
        Long intervalMicros;
        String timeZone;
        String topic;
        String payload;
        String headers;
        int priority;
        int maxAttempts;
        Instant startAt;
        Instant endAt;
        String missedPolicy;
        int missedBound;
        long missedGraceMicros;
        boolean paused;
        Instant nextRunAt;
        Instant lastRunAt;
        Instant createdAt;
        Instant updatedAt;
        Instant dbNow;
    }
}
