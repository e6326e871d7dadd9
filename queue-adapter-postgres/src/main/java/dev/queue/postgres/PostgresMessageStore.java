package dev.queue.postgres;

import dev.queue.api.DeadLetter;
import dev.queue.api.MessageId;
import dev.queue.api.AttemptFailure;
import dev.queue.api.MessageInfo;
import dev.queue.api.MessageState;
import dev.queue.api.NamespaceStats;
import dev.queue.api.Outcome;
import dev.queue.api.StoreUnavailableException;
import dev.queue.api.TopicStats;
import dev.queue.domain.port.AckCommand;
import dev.queue.domain.port.ClaimCommand;
import dev.queue.domain.port.ClaimPosition;
import dev.queue.domain.port.ClaimedMessage;
import dev.queue.domain.port.DeadLetterCommand;
import dev.queue.domain.port.DeadLetterQuery;
import dev.queue.domain.port.ExtendCommand;
import dev.queue.domain.port.LeaseRef;
import dev.queue.domain.port.MessageRef;
import dev.queue.domain.port.MessageStore;
import dev.queue.domain.port.NewMessage;
import dev.queue.domain.port.NextDueQuery;
import dev.queue.domain.port.PublishCommand;
import dev.queue.domain.port.PurgeCommand;
import dev.queue.domain.port.RedriveCommand;
import dev.queue.domain.port.RedriveResult;
import dev.queue.domain.port.ReleaseCommand;
import dev.queue.domain.port.RescueCommand;
import dev.queue.domain.port.RescueResult;
import dev.queue.domain.port.RetryCommand;
import dev.queue.domain.port.StatsQuery;
import dev.queue.domain.port.StoredOutcome;
import org.apache.ibatis.session.SqlSession;
import org.apache.ibatis.session.SqlSessionFactory;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * The {@link MessageStore} on PostgreSQL: every operation is one statement of {@code QueueMapper.xml} (publish
 * may need a second one to resolve a unique-key race), run through MyBatis on the pool. Commands carrying a
 * time use it; commands without one use the database clock. Failures leave as
 * {@link StoreUnavailableException} through {@link PostgresErrors}.
 */
final class PostgresMessageStore implements MessageStore {

    /**
     * How many times publish re-runs for messages whose unique key was held by a message that was gone (completed
     * or dead) by the time the store looked for it; each round needs another such race to lose again.
     */
    static final int MAX_PUBLISH_ROUNDS = 10;

    /** Instants beyond what timestamptz and a long of microseconds hold are clamped to these (years 0001..9999). */
    private static final Instant EARLIEST = Instant.parse("0001-01-01T00:00:00Z");
    private static final Instant LATEST = Instant.parse("9999-12-31T23:59:59.999999Z");

    private final SqlSessionFactory sessions;
    private final Sessions runner;
    private final HotStatements hot;
    private final boolean archive;
    /** Claims and acknowledgements commit without waiting for the flush (see PostgresQueueConfig.durableAcknowledgements). */
    private final boolean asyncBookkeeping;
    /** Topics this process saw registered: publishes to them may take the fast path. */
    private final Set<String> registeredTopics = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private volatile NotifyLimiter limiter = new NotifyLimiter(Duration.ZERO, key -> { });

    PostgresMessageStore(SqlSessionFactory sessions, CompletedRetention retention) {
        this(sessions, retention, false);
    }

    PostgresMessageStore(SqlSessionFactory sessions, CompletedRetention retention, boolean durableAcknowledgements) {
        this.sessions = Objects.requireNonNull(sessions, "sessions");
        this.runner = new Sessions(sessions);
        this.hot = new HotStatements(sessions);
        this.archive = retention == CompletedRetention.ARCHIVE;
        this.asyncBookkeeping = !durableAcknowledgements;
    }

    SqlSessionFactory sessions() {
        return sessions;
    }

    // ------------------------------------------------------------------ publish

    @Override
    public List<StoredOutcome> messageInsertMany(PublishCommand command) {
        List<NewMessage> messages = command.messages();
        if (messages.isEmpty()) {
            return List.of();
        }
        if (!canPublishFast(messages)) {
            List<StoredOutcome> outcomes = inTransaction("publish", session -> publishIn(session, command));
            for (NewMessage message : messages) {
                registeredTopics.add(wakeKey(message));
            }
            return outcomes;
        }
        return publishFast(messages, command.time().givenOrNull());
    }

    /**
     * Without unique keys and on topics already registered, a publish is a plain multi-row insert: no dedup
     * bookkeeping, and a wake-up only when the limiter allows one (a trailing one follows after commit otherwise).
     */
    private boolean canPublishFast(List<NewMessage> messages) {
        for (NewMessage message : messages) {
            if (message.uniqueKey() != null || !registeredTopics.contains(wakeKey(message))) {
                return false;
            }
        }
        return true;
    }

    private List<StoredOutcome> publishFast(List<NewMessage> messages, Instant now) {
        java.util.LinkedHashSet<String> keys = new java.util.LinkedHashSet<>();
        for (NewMessage message : messages) {
            keys.add(wakeKey(message));
        }
        List<String> notifyNow = new ArrayList<>(keys.size());
        List<String> heldBack = new ArrayList<>(keys.size());
        for (String key : keys) {
            (limiter.notifyNow(key) ? notifyNow : heldBack).add(key);
        }
        List<Long> ids;
        try {
            if (messages.size() == 1) {
                Map<String, Object> params = publishOneParams(messages.get(0), now);
                if (notifyNow.isEmpty()) {
                    ids = hot.autoCommitQuery("publish", "queue.publishOneQuiet", params, HotStatements::firstLong);
                } else {
                    params.put("notifyKey", notifyNow.get(0));
                    ids = hot.autoCommitQuery("publish", "queue.publishOne", params, HotStatements::firstLong);
                }
            } else {
                List<Integer> all = new ArrayList<>(messages.size());
                for (int i = 0; i < messages.size(); i++) {
                    all.add(i);
                }
                Map<String, Object> params = publishParams(messages, all, now);
                params.put("notifyKeys", notifyNow.toArray(new String[0]));
                ids = hot.autoCommitQuery("publish", "queue.publishFast", params, HotStatements::firstLong);
            }
        } finally {
            for (String key : notifyNow) {
                limiter.notifyFinished(key);
            }
        }
        if (ids.size() != messages.size()) {
            throw new IllegalStateException("publish returned " + ids.size() + " ids for " + messages.size() + " messages");
        }
        for (String key : heldBack) {
            limiter.committedWithout(key);
        }
        List<StoredOutcome> outcomes = new ArrayList<>(ids.size());
        for (Long id : ids) {
            outcomes.add(new StoredOutcome(id, false));
        }
        return outcomes;
    }

    private static String wakeKey(NewMessage message) {
        return message.namespace() + '/' + message.topic();
    }

    /** Wake-ups of fast publishes go through this limiter; by default none limits (a notify per publish). */
    void useNotifyLimiter(NotifyLimiter value) {
        this.limiter = Objects.requireNonNull(value, "limiter");
    }

    /** Publishes on the caller's connection, inside the caller's transaction: it commits or rolls back with it. */
    List<StoredOutcome> publishOn(Connection connection, PublishCommand command) {
        Objects.requireNonNull(connection, "connection");
        if (command.messages().isEmpty()) {
            return List.of();
        }
        try (SqlSession session = MyBatisSupport.sessionOn(sessions, connection)) {
            return publishIn(session, command);
        } catch (RuntimeException e) {
            throw PostgresErrors.translate("publish on the caller's connection", e);
        }
    }

    /** Publishes in the session's transaction; the schedule store fires schedules through it. */
    List<StoredOutcome> publishIn(SqlSession session, PublishCommand command) {
        List<NewMessage> messages = command.messages();
        int size = messages.size();
        long[] ids = new long[size];
        boolean[] duplicate = new boolean[size];
        List<Integer> open = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            open.add(i);
        }
        for (int round = 0; round < MAX_PUBLISH_ROUNDS && !open.isEmpty(); round++) {
            List<Rows.PublishRow> rows = session.selectList("queue.publish", publishParams(messages, open, command.time().givenOrNull()));
            if (rows.size() != open.size()) {
                throw new IllegalStateException("publish returned " + rows.size() + " rows for " + open.size() + " messages");
            }
            boolean[] resolved = new boolean[size];
            Map<String, Integer> firstByKey = new HashMap<>();
            for (Rows.PublishRow row : rows) {
                int index = open.get((int) row.ord - 1);
                NewMessage message = messages.get(index);
                if (row.firstOfKey && message.uniqueKey() != null) {
                    firstByKey.put(keyOf(message), index);
                }
                if (row.inserted) {
                    ids[index] = row.id;
                    resolved[index] = true;
                } else if (row.firstOfKey && row.holderId != null) {
                    ids[index] = row.holderId;
                    duplicate[index] = true;
                    resolved[index] = true;
                }
            }
            List<Integer> stillOpen = new ArrayList<>();
            for (Rows.PublishRow row : rows) {
                int index = open.get((int) row.ord - 1);
                if (!resolved[index] && !row.firstOfKey) {
                    Integer first = firstByKey.get(keyOf(messages.get(index)));
                    if (first != null && resolved[first]) {
                        ids[index] = ids[first];
                        duplicate[index] = true;
                        resolved[index] = true;
                    }
                }
                if (!resolved[index]) {
                    stillOpen.add(index);
                }
            }
            open = stillOpen;
        }
        if (!open.isEmpty()) {
            throw new StoreUnavailableException("publish gave up after " + MAX_PUBLISH_ROUNDS + " rounds: the unique keys"
                    + " of " + open.size() + " message(s) kept being held and freed concurrently", null);
        }
        List<StoredOutcome> outcomes = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            outcomes.add(new StoredOutcome(ids[i], duplicate[i]));
        }
        return outcomes;
    }

    private static String keyOf(NewMessage message) {
        return message.namespace() + '\u0000' + message.topic() + '\u0000' + message.uniqueKey();
    }

    /** The parameters of a multi-row publish of these messages (package-private for the commit-mode test). */
    static Map<String, Object> publishParams(List<NewMessage> messages, List<Integer> indexes, Instant now) {
        int n = indexes.size();
        String[] namespaces = new String[n];
        String[] topics = new String[n];
        String[] payloads = new String[n];
        String[] headers = new String[n];
        Integer[] priorities = new Integer[n];
        Integer[] maxAttempts = new Integer[n];
        String[] uniqueKeys = new String[n];
        Long[] runAtMicros = new Long[n];
        Long[] delayMicros = new Long[n];
        for (int i = 0; i < n; i++) {
            NewMessage message = messages.get(indexes.get(i));
            namespaces[i] = message.namespace();
            topics[i] = message.topic();
            payloads[i] = message.json();
            headers[i] = HeadersJson.write(message.headers());
            priorities[i] = message.priority();
            maxAttempts[i] = message.maxAttempts();
            uniqueKeys[i] = message.uniqueKey();
            runAtMicros[i] = message.runAt() == null ? null : epochMicros(message.runAt());
            delayMicros[i] = message.runAt() != null || message.delay() == null ? null : micros(message.delay());
        }
        Map<String, Object> params = new HashMap<>();
        params.put("namespaces", namespaces);
        params.put("topics", topics);
        params.put("payloads", payloads);
        params.put("headers", headers);
        params.put("priorities", priorities);
        params.put("maxAttempts", maxAttempts);
        params.put("uniqueKeys", uniqueKeys);
        params.put("runAtMicros", runAtMicros);
        params.put("delayMicros", delayMicros);
        params.put("now", now);
        return params;
    }

    /** The parameters of a one-message publish (package-private for the commit-mode test). */
    static Map<String, Object> publishOneParams(NewMessage message, Instant now) {
        Map<String, Object> params = new HashMap<>();
        params.put("namespace", message.namespace());
        params.put("topic", message.topic());
        params.put("payload", message.json());
        params.put("headers", HeadersJson.write(message.headers()));
        params.put("priority", message.priority());
        params.put("maxAttempts", message.maxAttempts());
        params.put("runAtMicros", message.runAt() == null ? null : epochMicros(message.runAt()));
        params.put("delayMicros", message.runAt() != null || message.delay() == null ? null : micros(message.delay()));
        params.put("now", now);
        return params;
    }

    // ------------------------------------------------------------------ claim

    @Override
    public List<ClaimedMessage> messageClaimDue(ClaimCommand command) {
        return hot.autoCommitQuery("claim", "queue.claim", claimParams(command), PostgresMessageStore::claimedMessage);
    }

    /** A row of {@code queue.claim}, by the position of its RETURNING columns. */
    private static ClaimedMessage claimedMessage(ResultSet row) throws SQLException {
        return new ClaimedMessage(row.getLong(1), row.getString(2), row.getString(3), row.getString(4),
                HeadersJson.read(row.getString(5)), row.getInt(6), row.getInt(7), row.getInt(8), row.getLong(9),
                row.getString(10), HotStatements.instant(row, 11), HotStatements.instant(row, 12),
                HotStatements.instant(row, 13));
    }

    /** The claim's parameters, as every claim of this store binds them. */
    Map<String, Object> claimParams(ClaimCommand command) {
        Map<String, Object> params = new HashMap<>();
        params.put("asyncCommit", asyncBookkeeping);
        params.put("namespace", command.namespace());
        String[] topics = new LinkedHashSet<>(command.topics()).toArray(new String[0]);
        Integer[] afterPriorities = new Integer[topics.length];
        Long[] afterRunAtMicros = new Long[topics.length];
        Long[] afterIds = new Long[topics.length];
        for (int i = 0; i < topics.length; i++) {
            ClaimPosition position = command.after().get(topics[i]);
            if (position != null) {
                afterPriorities[i] = position.priority();
                afterRunAtMicros[i] = epochMicros(position.runAt());
                afterIds[i] = position.id();
            }
        }
        params.put("topics", topics);
        params.put("afterPriorities", afterPriorities);
        params.put("afterRunAtMicros", afterRunAtMicros);
        params.put("afterIds", afterIds);
        params.put("worker", command.worker());
        params.put("limit", command.limit());
        params.put("leaseToken", command.leaseToken());
        params.put("leaseMicros", micros(command.lease()));
        params.put("now", command.time().givenOrNull());
        return params;
    }

    // ------------------------------------------------------------------ guarded changes

    @Override
    public Set<Long> messageAckIfLeased(AckCommand command) {
        if (command.leases().isEmpty()) {
            return Set.of();
        }
        return Set.copyOf(hot.autoCommitQuery("complete", "queue.complete", ackParams(command), HotStatements::firstLong));
    }

    /** The parameters of an acknowledgement in a transaction of its own, as messageAckIfLeased binds them. */
    Map<String, Object> ackParams(AckCommand command) {
        Map<String, Object> params = leaseParams(command.namespace(), command.leases(), command.time().givenOrNull());
        params.put("archive", archive);
        params.put("asyncCommit", asyncBookkeeping);
        return params;
    }

    /** Completes on the caller's connection, inside the caller's transaction (e.g. a handler's own). */
    Set<Long> ackOn(Connection connection, AckCommand command) {
        Objects.requireNonNull(connection, "connection");
        if (command.leases().isEmpty()) {
            return Set.of();
        }
        Map<String, Object> params = leaseParams(command.namespace(), command.leases(), command.time().givenOrNull());
        params.put("archive", archive);
        params.put("asyncCommit", false);
        try (SqlSession session = MyBatisSupport.sessionOn(sessions, connection)) {
            return Set.copyOf(session.<Long>selectList("queue.complete", params));
        } catch (RuntimeException e) {
            throw PostgresErrors.translate("complete on the caller's connection", e);
        }
    }

    @Override
    public Outcome messageRetryIfLeased(RetryCommand command) {
        Map<String, Object> params = leaseParams(command.namespace(), List.of(command.lease()), command.time().givenOrNull());
        params.put("delayMicros", micros(command.delay()));
        params.put("error", command.error());
        Rows.OutcomeRow row = autoCommit("retry", session -> session.selectOne("queue.retry", params));
        return Outcome.valueOf(row.outcome);
    }

    @Override
    public Outcome messageDeadLetterIfLeased(DeadLetterCommand command) {
        Map<String, Object> params = leaseParams(command.namespace(), List.of(command.lease()), command.time().givenOrNull());
        params.put("error", command.error());
        List<Long> buried = autoCommit("bury", session -> session.selectList("queue.bury", params));
        return buried.isEmpty() ? Outcome.LEASE_LOST : Outcome.DEAD_LETTERED;
    }

    @Override
    public Set<Long> messageExtendIfLeased(ExtendCommand command) {
        if (command.leases().isEmpty()) {
            return Set.of();
        }
        Map<String, Object> params = leaseParams(command.namespace(), command.leases(), command.time().givenOrNull());
        params.put("leaseMicros", micros(command.lease()));
        return Set.copyOf(autoCommit("extend", session -> session.<Long>selectList("queue.extend", params)));
    }

    @Override
    public Set<Long> messageReleaseIfLeased(ReleaseCommand command) {
        if (command.leases().isEmpty()) {
            return Set.of();
        }
        Map<String, Object> params = leaseParams(command.namespace(), command.leases(), command.time().givenOrNull());
        return Set.copyOf(autoCommit("release", session -> session.<Long>selectList("queue.release", params)));
    }

    private static Map<String, Object> leaseParams(String namespace, Collection<LeaseRef> leases, Instant now) {
        Long[] ids = new Long[leases.size()];
        Long[] tokens = new Long[leases.size()];
        int i = 0;
        for (LeaseRef lease : leases) {
            ids[i] = lease.id();
            tokens[i] = lease.leaseToken();
            i++;
        }
        Map<String, Object> params = new HashMap<>();
        params.put("namespace", namespace);
        params.put("ids", ids);
        params.put("tokens", tokens);
        params.put("now", now);
        return params;
    }

    @Override
    public RescueResult messageRescueExpired(RescueCommand command) {
        Map<String, Object> params = new HashMap<>();
        params.put("namespace", command.namespace());
        params.put("limit", command.limit());
        params.put("now", command.time().givenOrNull());
        params.put("expiredSince", command.expiredSince());
        Rows.RescueRow row = autoCommit("rescue of expired leases", session -> session.selectOne("queue.rescue", params));
        return new RescueResult(row.requeued, row.deadLettered, row.lookedUpTo);
    }

    // ------------------------------------------------------------------ dead letters

    @Override
    public List<DeadLetter> deadLetterList(DeadLetterQuery query) {
        Map<String, Object> params = new HashMap<>();
        params.put("namespace", query.namespace());
        params.put("topic", query.topic());
        params.put("afterId", query.afterId());
        params.put("limit", query.limit());
        List<Rows.DeadLetterRow> rows = autoCommit("dead letter listing", session -> session.selectList("queue.deadLetters", params));
        return rows.stream().map(PostgresMessageStore::toDeadLetter).toList();
    }

    @Override
    public Optional<DeadLetter> deadLetterFind(MessageRef message) {
        String namespace = message.namespace();
        long id = message.id();
        Map<String, Object> params = new HashMap<>();
        params.put("namespace", namespace);
        params.put("id", id);
        Rows.DeadLetterRow row = autoCommit("dead letter lookup", session -> session.selectOne("queue.deadLetter", params));
        return Optional.ofNullable(row).map(PostgresMessageStore::toDeadLetter);
    }

    private static DeadLetter toDeadLetter(Rows.DeadLetterRow row) {
        return new DeadLetter(MessageId.of(row.id), row.namespace, row.topic, row.payload, HeadersJson.read(row.headers),
                row.priority, row.attempts, row.maxAttempts, row.lastError, row.publishedAt, row.failedAt);
    }

    @Override
    public RedriveResult deadLetterRedrive(RedriveCommand command) {
        if (command.id() == null && command.topic() == null) {
            return new RedriveResult(0, 0, command.afterId());
        }
        Map<String, Object> params = new HashMap<>();
        params.put("namespace", command.namespace());
        params.put("id", command.id());
        params.put("topic", command.topic());
        params.put("afterId", command.afterId());
        params.put("limit", command.limit());
        params.put("now", command.time().givenOrNull());
        Rows.RedriveRow row = autoCommit("redrive", session -> session.selectOne("queue.redrive", params));
        return new RedriveResult(row.redriven, row.examined, row.lastId);
    }

    @Override
    public int deadLetterPurge(PurgeCommand command) {
        Map<String, Object> params = new HashMap<>();
        params.put("namespace", command.namespace());
        params.put("id", command.id());
        params.put("topic", command.topic());
        params.put("limit", command.limit());
        return autoCommit("purge of dead letters", session -> session.delete("queue.purgeDeadLetters", params));
    }

    // ------------------------------------------------------------------ reading

    @Override
    public NamespaceStats namespaceStats(StatsQuery query) {
        String namespace = query.namespace();
        Map<String, Object> params = new HashMap<>();
        params.put("namespace", namespace);
        params.put("now", query.time().givenOrNull());
        List<Rows.StatsRow> rows = autoCommit("stats", session -> session.selectList("queue.stats", params));
        Map<String, TopicStats> topics = new LinkedHashMap<>();
        long pending = 0;
        long running = 0;
        long completed = 0;
        long dead = 0;
        for (Rows.StatsRow row : rows) {
            topics.put(row.topic, new TopicStats(row.topic, row.pending, row.running, row.completed, row.dead, row.oldestDueAt));
            pending += row.pending;
            running += row.running;
            completed += row.completed;
            dead += row.dead;
        }
        return new NamespaceStats(namespace, pending, running, completed, dead, topics);
    }

    @Override
    public Optional<MessageInfo> messageFind(MessageRef message) {
        String namespace = message.namespace();
        long id = message.id();
        Map<String, Object> params = new HashMap<>();
        params.put("namespace", namespace);
        params.put("id", id);
        Rows.InfoRow row;
        List<Rows.AttemptRow> attempts;
        // one read-only transaction, so the history belongs to the row found
        Object[] found = inTransaction("find", session -> {
            Rows.InfoRow info = session.selectOne("queue.find", params);
            return new Object[] {info, info == null ? List.of() : session.selectList("queue.findAttempts", params)};
        });
        row = (Rows.InfoRow) found[0];
        if (row == null) {
            return Optional.empty();
        }
        @SuppressWarnings("unchecked")
        List<Rows.AttemptRow> history = (List<Rows.AttemptRow>) found[1];
        attempts = history;
        MessageState state = switch (row.state) {
            case "pending" -> MessageState.PENDING;
            case "running" -> MessageState.RUNNING;
            default -> MessageState.DEAD;
        };
        return Optional.of(new MessageInfo(MessageId.of(row.id), row.namespace, row.topic, state, row.payload,
                HeadersJson.read(row.headers), row.priority, row.attempts, row.maxAttempts, row.uniqueKey,
                row.publishedAt, row.runAt, row.leaseUntil, row.worker, row.lastError,
                attempts.stream().map(a -> new AttemptFailure(a.attempt, a.error, a.worker, a.failedAt)).toList()));
    }

    @Override
    public Optional<Instant> messageNextDueAt(NextDueQuery query) {
        String namespace = query.namespace();
        List<String> topics = query.topics();
        Instant now = query.time().givenOrNull();
        if (topics.isEmpty()) {
            return Optional.empty();
        }
        Map<String, Object> params = new HashMap<>();
        params.put("namespace", namespace);
        params.put("topics", new LinkedHashSet<>(topics).toArray(new String[0]));
        params.put("now", now);
        Instant next = autoCommit("next due time", session -> session.selectOne("queue.nextDueAt", params));
        return Optional.ofNullable(next);
    }

    // ------------------------------------------------------------------ wake-ups

    /** Sends a notification on the schema's channel through the pool (the listener's probe). */
    void notifyChannel(String payload) {
        autoCommit("notify", session -> session.selectOne("queue.notify", Map.of("payload", payload)));
    }

    // ------------------------------------------------------------------ plumbing

    private <T> T autoCommit(String operation, Function<SqlSession, T> work) {
        return runner.autoCommit(operation, work);
    }

    private <T> T inTransaction(String operation, Function<SqlSession, T> work) {
        return runner.inTransaction(operation, work);
    }

    static long micros(Duration duration) {
        if (duration == null) {
            return 0;
        }
        try {
            return Math.addExact(Math.multiplyExact(duration.getSeconds(), 1_000_000L), duration.getNano() / 1_000);
        } catch (ArithmeticException e) {
            return duration.isNegative() ? Long.MIN_VALUE / 2 : Long.MAX_VALUE / 2;
        }
    }

    static long epochMicros(Instant instant) {
        Instant clamped = instant.isBefore(EARLIEST) ? EARLIEST : instant.isAfter(LATEST) ? LATEST : instant;
        return clamped.getEpochSecond() * 1_000_000L + clamped.getNano() / 1_000;
    }
}
