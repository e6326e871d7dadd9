package dev.queue.example.customadapter;

import dev.queue.api.Attempt;
import dev.queue.api.AttemptOutcome;
import dev.queue.api.DeadLetter;
import dev.queue.api.MessageId;
import dev.queue.api.MessageInfo;
import dev.queue.api.MessageState;
import dev.queue.api.NamespaceStats;
import dev.queue.api.Outcome;
import dev.queue.api.TopicStats;
import dev.queue.domain.port.AckCommand;
import dev.queue.domain.port.CancelCommand;
import dev.queue.domain.port.ClaimCommand;
import dev.queue.domain.port.ClaimedMessage;
import dev.queue.domain.port.Clock;
import dev.queue.domain.port.CommandTime;
import dev.queue.domain.port.DeadLetterCommand;
import dev.queue.domain.port.DeadLetterQuery;
import dev.queue.domain.port.ExtendCommand;
import dev.queue.domain.port.LeaseRef;
import dev.queue.domain.port.MessageRef;
import dev.queue.domain.port.MessageStore;
import dev.queue.domain.port.NewMessage;
import dev.queue.domain.port.NextDueQuery;
import dev.queue.domain.port.PausedTopicsQuery;
import dev.queue.domain.port.PublishCommand;
import dev.queue.domain.port.PurgeCommand;
import dev.queue.domain.port.RedriveCommand;
import dev.queue.domain.port.RedriveResult;
import dev.queue.domain.port.ReleaseCommand;
import dev.queue.domain.port.RescueCommand;
import dev.queue.domain.port.RescueResult;
import dev.queue.domain.port.RetryCommand;
import dev.queue.domain.port.SnoozeCommand;
import dev.queue.domain.port.StatsQuery;
import dev.queue.domain.port.StoredOutcome;
import dev.queue.domain.port.TopicPauseCommand;
import dev.queue.domain.rules.Lifecycle;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The message store of the example: plain collections behind one lock. Every method takes the lock, looks at
 * every message it needs to (a claim scans and sorts all of them), changes what it decided and lets go, so no two
 * calls ever see each other half done. That makes it easy to check against the port's rules, and slow: fine for
 * an example, not for a production queue.
 *
 * <p>Time comes from each command's {@link CommandTime}, reading {@code clock} only when the command says the
 * store's own clock; times are kept to the microsecond. Wake-ups are signalled after the lock is released.
 */
final class OneLockMessageStore implements MessageStore {

    static final String LEASE_EXPIRED = "lease expired";
    static final String LEASE_EXPIRED_ON_LAST_ATTEMPT = "lease expired on its last attempt";

    private final Clock clock;
    private final OneLockWakeUps wakeUps;
    private final ReentrantLock lock = new ReentrantLock();

    // Everything below is guarded by lock.
    private long lastId;
    /** Pending, running and dead messages by id; a completed message is removed. */
    private final TreeMap<Long, Row> rows = new TreeMap<>();
    /** Unique keys held by pending and running messages, with the holder's id. */
    private final Map<UniqueKeyRef, Long> uniqueKeys = new HashMap<>();
    /** Every topic that ever had a message, with how many of its messages completed. */
    private final TreeMap<TopicRef, Long> completed = new TreeMap<>();
    /** Paused topics: claims pass them over. */
    private final TreeSet<TopicRef> paused = new TreeSet<>();

    OneLockMessageStore(Clock clock, OneLockWakeUps wakeUps) {
        this.clock = Objects.requireNonNull(clock, "clock");
        this.wakeUps = Objects.requireNonNull(wakeUps, "wakeUps");
    }

    // ---------------------------------------------------------------------------------------------- the lock

    /** Runs {@code work} under the lock. */
    <T> T locked(Supplier<T> work) {
        lock.lock();
        try {
            return work.get();
        } finally {
            lock.unlock();
        }
    }

    /** Runs {@code work} under the lock, then wakes the topics it added to the set it was given. */
    private <T> T changing(Function<Set<TopicRef>, T> work) {
        Set<TopicRef> toWake = new LinkedHashSet<>();
        T result = locked(() -> work.apply(toWake));
        wakeUps.signal(toWake);
        return result;
    }

    /**
     * Runs {@code work} under the lock at the command's time with a way to store messages, then wakes their
     * topics: the schedule store fires through this, so a schedule's messages and its next run change together.
     */
    <T> T storing(CommandTime time, StoringWork<T> work) {
        return changing(toWake -> {
            Instant now = now(time);
            return work.run(now, message -> insert(message, now, toWake));
        });
    }

    /** Work that stores messages at one time, under the lock. */
    interface StoringWork<T> {
        T run(Instant now, Function<NewMessage, StoredOutcome> store);
    }

    // ---------------------------------------------------------------------------------------------- publish

    @Override
    public List<StoredOutcome> messageInsertMany(PublishCommand command) {
        // inputs arrive validated and nothing below can fail, so a batch is stored whole or (on an error before
        // the lock) not at all
        List<NewMessage> messages = List.copyOf(command.messages());
        return storing(command.time(), (now, store) -> messages.stream().map(store).toList());
    }

    /** Stores one message, or answers the pending or running message that holds its unique key. */
    private StoredOutcome insert(NewMessage message, Instant now, Set<TopicRef> toWake) {
        UniqueKeyRef key = message.uniqueKey() == null ? null
                : new UniqueKeyRef(message.namespace(), message.topic(), message.uniqueKey());
        if (key != null && uniqueKeys.containsKey(key)) {
            return new StoredOutcome(uniqueKeys.get(key), true);
        }
        Instant runAt = message.runAt() != null ? message.runAt()
                : now.plus(message.delay() == null ? Duration.ZERO : message.delay());
        Row row = new Row(++lastId, message, micros(runAt), now);
        rows.put(row.id, row);
        if (key != null) {
            uniqueKeys.put(key, row.id);
        }
        completed.putIfAbsent(row.topicRef(), 0L);
        toWake.add(row.topicRef());
        return new StoredOutcome(row.id, false);
    }

    // ---------------------------------------------------------------------------------------------- claim

    @Override
    public List<ClaimedMessage> messageClaimDue(ClaimCommand command) {
        return locked(() -> {
            Instant now = now(command.time());
            Instant leaseUntil = micros(now.plus(command.lease()));
            List<String> topics = command.topics();
            // topics in the order the command gives them, then priority, due time and id
            Comparator<Row> claimOrder = Comparator.<Row>comparingInt(row -> topics.indexOf(row.topic))
                    .thenComparingInt(row -> row.priority)
                    .thenComparing(row -> row.runAt)
                    .thenComparingLong(row -> row.id);
            List<Row> due = rows.values().stream()
                    .filter(row -> row.state == MessageState.PENDING && row.namespace.equals(command.namespace())
                            && topics.contains(row.topic) && !row.runAt.isAfter(now) && !paused.contains(row.topicRef()))
                    .sorted(claimOrder)
                    .limit(Math.max(0, command.limit()))
                    .toList();
            List<ClaimedMessage> claimed = new ArrayList<>(due.size());
            for (Row row : due) {
                row.state = MessageState.RUNNING;
                row.attempts++;
                row.worker = command.worker();
                row.attemptStartedAt = micros(now);
                row.leaseToken = command.leaseToken();
                row.leaseUntil = leaseUntil;
                claimed.add(new ClaimedMessage(row.id, row.namespace, row.topic, row.json, row.headers, row.priority,
                        row.attempts, row.maxAttempts, row.leaseToken, row.worker, row.leaseUntil, row.publishedAt,
                        row.runAt));
            }
            return claimed;
        });
    }

    // ---------------------------------------------------------------------------------------------- guarded changes

    /**
     * The message when it is running under exactly this lease in this namespace, else null. Every guarded change
     * starts here: a former holder's token no longer matches once the message was rescued and claimed again.
     */
    private Row held(String namespace, LeaseRef lease) {
        Row row = rows.get(lease.id());
        boolean held = row != null && row.state == MessageState.RUNNING && row.leaseToken == lease.leaseToken()
                && row.namespace.equals(namespace);
        return held ? row : null;
    }

    @Override
    public Set<Long> messageAckIfLeased(AckCommand command) {
        return locked(() -> {
            Set<Long> acked = new LinkedHashSet<>();
            for (LeaseRef lease : command.leases()) {
                Row row = held(command.namespace(), lease);
                if (row != null) {
                    remove(row);
                    completed.merge(row.topicRef(), 1L, Long::sum);
                    acked.add(row.id);
                }
            }
            return acked;
        });
    }

    @Override
    public Outcome messageRetryIfLeased(RetryCommand command) {
        return changing(toWake -> {
            Row row = held(command.namespace(), command.lease());
            if (row == null) {
                return Outcome.LEASE_LOST;
            }
            Instant now = now(command.time());
            recordFailure(row, command.error(), now, AttemptOutcome.RETRY);
            Duration delay = command.delay() == null || command.delay().isNegative() ? Duration.ZERO : command.delay();
            makePending(row, micros(now.plus(delay)));
            toWake.add(row.topicRef());
            return Outcome.RETRY_SCHEDULED;
        });
    }

    @Override
    public Outcome messageDeadLetterIfLeased(DeadLetterCommand command) {
        return locked(() -> {
            Row row = held(command.namespace(), command.lease());
            if (row == null) {
                return Outcome.LEASE_LOST;
            }
            Instant now = now(command.time());
            recordFailure(row, command.error(), now, AttemptOutcome.DEAD);
            bury(row, now);
            return Outcome.DEAD_LETTERED;
        });
    }

    @Override
    public Set<Long> messageExtendIfLeased(ExtendCommand command) {
        return locked(() -> {
            Instant leaseUntil = micros(now(command.time()).plus(command.lease()));
            Set<Long> extended = new LinkedHashSet<>();
            for (LeaseRef lease : command.leases()) {
                Row row = held(command.namespace(), lease);
                if (row != null) {
                    row.leaseUntil = leaseUntil;
                    extended.add(row.id);
                }
            }
            return extended;
        });
    }

    @Override
    public Set<Long> messageReleaseIfLeased(ReleaseCommand command) {
        return changing(toWake -> {
            Set<Long> released = new LinkedHashSet<>();
            for (LeaseRef lease : command.leases()) {
                Row row = held(command.namespace(), lease);
                if (row != null) {
                    // the handler never started: the claim's attempt is taken back and the due time kept
                    row.attempts = Math.max(0, row.attempts - 1);
                    makePending(row, row.runAt);
                    released.add(row.id);
                    toWake.add(row.topicRef());
                }
            }
            return released;
        });
    }

    // ---------------------------------------------------------------------------------------------- flow control

    @Override
    public boolean topicSetPaused(TopicPauseCommand command) {
        TopicRef topic = new TopicRef(command.namespace(), command.topic());
        return changing(toWake -> {
            // under the lock claims take, so no claim starts a message of the topic once a pause returned
            boolean changed = command.paused() ? paused.add(topic) : paused.remove(topic);
            if (changed && !command.paused()) {
                toWake.add(topic);
            }
            return changed;
        });
    }

    @Override
    public List<String> topicListPaused(PausedTopicsQuery query) {
        return locked(() -> paused.stream().filter(t -> t.namespace().equals(query.namespace())).map(TopicRef::topic).toList());
    }

    @Override
    public Optional<MessageState> messageCancel(CancelCommand command) {
        return locked(() -> {
            Row row = rows.get(command.id());
            if (row == null || !row.namespace.equals(command.namespace()) || row.state == MessageState.DEAD) {
                return Optional.empty();
            }
            MessageState was = row.state;
            remove(row);
            return Optional.of(was);
        });
    }

    @Override
    public Outcome messageSnoozeIfLeased(SnoozeCommand command) {
        return changing(toWake -> {
            Row row = held(command.namespace(), command.lease());
            if (row == null) {
                return Outcome.LEASE_LOST;
            }
            Instant now = now(command.time());
            Instant runAt = command.runAt() != null ? command.runAt()
                    : now.plus(command.delay() == null ? Duration.ZERO : command.delay());
            // not a failure: the claim's attempt is taken back and no error recorded
            row.attempts = Math.max(0, row.attempts - 1);
            makePending(row, runAt.isBefore(now) ? now : micros(runAt));
            toWake.add(row.topicRef());
            return Outcome.SNOOZED;
        });
    }

    @Override
    public RescueResult messageRescueExpired(RescueCommand command) {
        return changing(toWake -> {
            Instant now = now(command.time());
            List<Row> expired = rows.values().stream()
                    .filter(row -> row.state == MessageState.RUNNING && row.leaseUntil.isBefore(now)
                            && (command.namespace() == null || command.namespace().equals(row.namespace)))
                    .sorted(Comparator.<Row, Instant>comparing(row -> row.leaseUntil).thenComparingLong(row -> row.id))
                    .limit(Math.max(0, command.limit()))
                    .toList();
            int requeued = 0;
            for (Row row : expired) {
                if (Lifecycle.attemptsLeft(row.attempts, row.maxAttempts)) {
                    recordFailure(row, LEASE_EXPIRED, now, AttemptOutcome.LEASE_EXPIRED);
                    makePending(row, now);
                    toWake.add(row.topicRef());
                    requeued++;
                } else {
                    recordFailure(row, LEASE_EXPIRED_ON_LAST_ATTEMPT, now, AttemptOutcome.DEAD);
                    bury(row, now);
                }
            }
            return new RescueResult(requeued, expired.size() - requeued, now);
        });
    }

    // ---------------------------------------------------------------------------------------------- dead letters

    @Override
    public List<DeadLetter> deadLetterList(DeadLetterQuery query) {
        return locked(() -> deadLetters(query.namespace(), null, query.topic(), query.afterId(), query.limit()).stream()
                .map(Row::toDeadLetter).toList());
    }

    @Override
    public Optional<DeadLetter> deadLetterFind(MessageRef message) {
        return locked(() -> deadLetters(message.namespace(), message.id(), null, 0, 1).stream()
                .map(Row::toDeadLetter).findFirst());
    }

    @Override
    public RedriveResult deadLetterRedrive(RedriveCommand command) {
        return changing(toWake -> {
            if (command.id() == null && command.topic() == null) {
                return new RedriveResult(0, 0, command.afterId());
            }
            Instant now = now(command.time());
            List<Row> examined = deadLetters(command.namespace(), command.id(), command.topic(), command.afterId(),
                    command.limit());
            int redriven = 0;
            for (Row row : examined) {
                UniqueKeyRef key = row.uniqueKeyRef();
                if (key != null && uniqueKeys.containsKey(key)) {
                    continue; // a live message holds the key and already does the work
                }
                if (key != null) {
                    uniqueKeys.put(key, row.id);
                }
                row.attempts = 0;
                row.failedAt = null;
                makePending(row, now);
                toWake.add(row.topicRef());
                redriven++;
            }
            long lastId = examined.isEmpty() ? command.afterId() : examined.get(examined.size() - 1).id;
            return new RedriveResult(redriven, examined.size(), lastId);
        });
    }

    @Override
    public int deadLetterPurge(PurgeCommand command) {
        return locked(() -> {
            List<Row> purged = deadLetters(command.namespace(), command.id(), command.topic(), 0, command.limit());
            purged.forEach(row -> rows.remove(row.id));
            return purged.size();
        });
    }

    /**
     * Dead letters of the namespace: the one with {@code id} when not null, else those of {@code topic} when not
     * null, else all; by id, above {@code afterId}, at most {@code limit}.
     */
    private List<Row> deadLetters(String namespace, Long id, String topic, long afterId, int limit) {
        return rows.tailMap(afterId, false).values().stream()
                .filter(row -> row.state == MessageState.DEAD && row.namespace.equals(namespace)
                        && (id == null || id == row.id) && (id != null || topic == null || topic.equals(row.topic)))
                .limit(Math.max(0, limit))
                .toList();
    }

    // ---------------------------------------------------------------------------------------------- inspection

    @Override
    public Optional<MessageInfo> messageFind(MessageRef message) {
        return locked(() -> Optional.ofNullable(rows.get(message.id()))
                .filter(row -> row.namespace.equals(message.namespace()))
                .map(Row::toInfo));
    }

    @Override
    public Optional<Instant> messageNextDueAt(NextDueQuery query) {
        return locked(() -> {
            Instant now = now(query.time());
            return rows.values().stream()
                    .filter(row -> row.state == MessageState.PENDING && row.namespace.equals(query.namespace())
                            && query.topics().contains(row.topic) && row.runAt.isAfter(now))
                    .map(row -> row.runAt)
                    .min(Comparator.naturalOrder());
        });
    }

    @Override
    public NamespaceStats namespaceStats(StatsQuery query) {
        return locked(() -> {
            Instant now = now(query.time());
            Map<String, TopicStats> topics = new LinkedHashMap<>();
            for (Map.Entry<TopicRef, Long> known : completed.entrySet()) {
                if (known.getKey().namespace().equals(query.namespace())) {
                    topics.put(known.getKey().topic(), topicStats(known.getKey(), known.getValue(), now));
                }
            }
            long pending = topics.values().stream().mapToLong(TopicStats::pending).sum();
            long running = topics.values().stream().mapToLong(TopicStats::running).sum();
            long done = topics.values().stream().mapToLong(TopicStats::completed).sum();
            long dead = topics.values().stream().mapToLong(TopicStats::dead).sum();
            return new NamespaceStats(query.namespace(), pending, running, done, dead, topics);
        });
    }

    private TopicStats topicStats(TopicRef topic, long completedCount, Instant now) {
        long pending = 0;
        long running = 0;
        long dead = 0;
        Instant oldestDue = null;
        for (Row row : rows.values()) {
            if (!row.topicRef().equals(topic)) {
                continue;
            }
            switch (row.state) {
                case PENDING -> {
                    pending++;
                    if (!row.runAt.isAfter(now) && (oldestDue == null || row.runAt.isBefore(oldestDue))) {
                        oldestDue = row.runAt;
                    }
                }
                case RUNNING -> running++;
                case DEAD -> dead++;
                default -> throw new IllegalStateException("message " + row.id + " is stored in state " + row.state);
            }
        }
        return new TopicStats(topic.topic(), pending, running, completedCount, dead, oldestDue);
    }

    // ---------------------------------------------------------------------------------------------- internals

    private Instant now(CommandTime time) {
        return micros(time.resolve(clock::now));
    }

    private static Instant micros(Instant instant) {
        return instant.truncatedTo(ChronoUnit.MICROS);
    }

    /** Pending again, due at {@code runAt}, without a lease. */
    private static void makePending(Row row, Instant runAt) {
        row.state = MessageState.PENDING;
        row.runAt = runAt;
        row.clearLease();
    }

    /** A dead letter now: its unique key is free for a new message. */
    private void bury(Row row, Instant now) {
        row.state = MessageState.DEAD;
        row.failedAt = now;
        row.clearLease();
        freeUniqueKey(row);
    }

    /** Completed: gone, with its unique key. */
    private void remove(Row row) {
        rows.remove(row.id);
        freeUniqueKey(row);
    }

    private void freeUniqueKey(Row row) {
        UniqueKeyRef key = row.uniqueKeyRef();
        if (key != null) {
            uniqueKeys.remove(key, row.id);
        }
    }

    /** The running attempt failed: the last error, and the attempt in the bounded history (the rest counted). */
    private static void recordFailure(Row row, String error, Instant now, AttemptOutcome outcome) {
        row.lastError = error;
        row.ended.addLast(new Attempt(row.attempts, outcome, row.worker, row.attemptStartedAt, now, error));
        while (row.ended.size() > MessageInfo.HISTORY_LIMIT) {
            row.ended.removeFirst();
            row.attemptsNotKept++;
        }
    }

    private record UniqueKeyRef(String namespace, String topic, String key) {
    }

    /** One stored message; its mutable fields change only under the store's lock. */
    private static final class Row {
        final long id;
        final String namespace;
        final String topic;
        final String json;
        final Map<String, String> headers;
        final int priority;
        final int maxAttempts;
        final String uniqueKey;
        final Instant publishedAt;
        final ArrayDeque<Attempt> ended = new ArrayDeque<>();
        int attemptsNotKept;
        Instant attemptStartedAt;

        MessageState state = MessageState.PENDING;
        Instant runAt;
        int attempts;
        String worker;
        long leaseToken;
        Instant leaseUntil;
        String lastError;
        Instant failedAt;

        Row(long id, NewMessage message, Instant runAt, Instant publishedAt) {
            this.id = id;
            this.namespace = message.namespace();
            this.topic = message.topic();
            this.json = message.json();
            this.headers = message.headers() == null ? Map.of() : Map.copyOf(message.headers());
            this.priority = message.priority();
            this.maxAttempts = message.maxAttempts();
            this.uniqueKey = message.uniqueKey();
            this.runAt = runAt;
            this.publishedAt = publishedAt;
        }

        TopicRef topicRef() {
            return new TopicRef(namespace, topic);
        }

        UniqueKeyRef uniqueKeyRef() {
            return uniqueKey == null ? null : new UniqueKeyRef(namespace, topic, uniqueKey);
        }

        void clearLease() {
            worker = null;
            leaseToken = 0;
            leaseUntil = null;
        }

        MessageInfo toInfo() {
            return new MessageInfo(MessageId.of(id), namespace, topic, state, json, headers, priority, attempts,
                    maxAttempts, uniqueKey, publishedAt, runAt, leaseUntil, worker, lastError, history(),
                    attemptsNotKept);
        }

        /** The ended attempts kept, then the running one. */
        private List<Attempt> history() {
            List<Attempt> list = new ArrayList<>(ended);
            if (state == MessageState.RUNNING) {
                list.add(new Attempt(attempts, AttemptOutcome.RUNNING, worker, attemptStartedAt, null, null));
            }
            return list;
        }

        DeadLetter toDeadLetter() {
            return new DeadLetter(MessageId.of(id), namespace, topic, json, headers, priority, attempts, maxAttempts,
                    lastError, publishedAt, failedAt);
        }
    }
}
