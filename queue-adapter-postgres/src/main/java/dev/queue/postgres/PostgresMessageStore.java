package dev.queue.postgres;

import dev.queue.api.Attempt;
import dev.queue.api.AttemptOutcome;
import dev.queue.api.BehindDeadLetter;
import dev.queue.api.DeadLetter;
import dev.queue.api.MessageId;
import dev.queue.api.MessageInfo;
import dev.queue.api.MessageState;
import dev.queue.api.NamespaceStats;
import dev.queue.api.Outcome;
import dev.queue.api.StoreUnavailableException;
import dev.queue.api.TopicLimits;
import dev.queue.api.TopicStats;
import dev.queue.domain.port.AckCommand;
import dev.queue.domain.port.CancelCommand;
import dev.queue.domain.port.ClaimCommand;
import dev.queue.domain.port.ClaimPosition;
import dev.queue.domain.port.ClaimedMessage;
import dev.queue.domain.port.DeadLetterCommand;
import dev.queue.domain.port.DeadLetterQuery;
import dev.queue.domain.port.ExtendCommand;
import dev.queue.domain.port.HeadSweepCommand;
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
import dev.queue.domain.port.TopicLimitsCommand;
import dev.queue.domain.port.TopicLimitsQuery;
import dev.queue.domain.port.TopicOrderingCommand;
import dev.queue.domain.port.TopicOrderingQuery;
import dev.queue.domain.port.TopicPauseCommand;
import org.apache.ibatis.session.SqlSession;
import org.apache.ibatis.session.SqlSessionFactory;

import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * The {@link MessageStore} on PostgreSQL: a typed caller of the engine functions (the function files of
 * {@code db/queue/}: {@code R__publish.sql}, {@code R__claim.sql}, {@code R__settle.sql}, ...) through
 * {@link MessageMapper} and {@link DeadLetterMapper}. Every operation is one statement calling one function, which
 * enforces the lease guards, dedup and the state machine; what the domain decided (the time of a manual clock,
 * retry delays, dead-lettering, archiving, wake-ups) is passed in. Commands carrying a time use it; commands
 * without one use the database clock. Failures leave as {@link StoreUnavailableException} through
 * {@link PostgresErrors}.
 */
final class PostgresMessageStore implements MessageStore {

    /**
     * Instants outside the range the engine's gates accept (1970 to 9999, docs/sql.md) are clamped to it: the input
     * rules refuse such due times before they get here, and a snooze until a time in the past means now anyway.
     */
    private static final Instant EARLIEST = Instant.EPOCH;
    private static final Instant LATEST = Instant.parse("9999-12-31T23:59:59Z");

    private final SqlSessionFactory sessions;
    private final Sessions runner;
    private final boolean archive;
    /** Claims and acknowledgements commit without waiting for the flush (see PostgresQueueConfig.durableAcknowledgements). */
    private final boolean asyncBookkeeping;
    /** Topics this process saw registered: publishes to them may take the fast path. */
    private final Set<String> registeredTopics = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private volatile NotifyLimiter limiter = new NotifyLimiter(Duration.ZERO, key -> { });
    /** Where stored publishes are counted for the overview's rates (R__stats.sql); null: not counted. */
    private volatile PublishRates rates;

    PostgresMessageStore(SqlSessionFactory sessions, CompletedRetention retention) {
        this(sessions, retention, false);
    }

    PostgresMessageStore(SqlSessionFactory sessions, CompletedRetention retention, boolean durableAcknowledgements) {
        this.sessions = Objects.requireNonNull(sessions, "sessions");
        this.runner = new Sessions(sessions);
        this.archive = retention == CompletedRetention.ARCHIVE;
        this.asyncBookkeeping = !durableAcknowledgements;
    }

    SqlSessionFactory sessions() {
        return sessions;
    }

    /** Counts the messages this store publishes from now on. */
    void usePublishRates(PublishRates value) {
        this.rates = value;
    }

    /** Counts the stored (not duplicate) messages of a publish: in memory, flushed later by {@link PublishRates}. */
    private void countStored(List<NewMessage> messages, List<StoredOutcome> outcomes) {
        PublishRates counter = rates;
        if (counter == null) {
            return;
        }
        String key = null;
        long run = 0;
        for (int i = 0; i < messages.size(); i++) {
            if (outcomes.get(i).duplicate()) {
                continue;
            }
            String next = wakeKey(messages.get(i));
            if (!next.equals(key)) {
                counter.count(key, run);
                key = next;
                run = 0;
            }
            run++;
        }
        counter.count(key, run);
    }

    // ------------------------------------------------------------------ publish

    @Override
    public List<StoredOutcome> messageInsertMany(PublishCommand command) {
        List<NewMessage> messages = command.messages();
        if (messages.isEmpty()) {
            return List.of();
        }
        if (!canPublishFast(messages)) {
            List<StoredOutcome> outcomes = runner.autoCommit("publish", MessageMapper.class,
                    mapper -> publishWith(mapper, command));
            for (NewMessage message : messages) {
                registeredTopics.add(wakeKey(message));
            }
            countStored(messages, outcomes);
            return outcomes;
        }
        List<StoredOutcome> outcomes = publishFast(messages, command.time().givenOrNull());
        countStored(messages, outcomes);
        return outcomes;
    }

    /**
     * Without unique keys and on topics already registered, a publish is a plain multi-row insert: no dedup
     * bookkeeping, and a wake-up only when the limiter allows one (a trailing one follows after commit otherwise).
     */
    private boolean canPublishFast(List<NewMessage> messages) {
        for (NewMessage message : messages) {
            if (message.uniqueKey() != null || message.orderingKey() != null
                    || !registeredTopics.contains(wakeKey(message))) {
                return false;
            }
        }
        return true;
    }

    private List<StoredOutcome> publishFast(List<NewMessage> messages, Instant now) {
        LinkedHashSet<String> keys = new LinkedHashSet<>();
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
                MessageMapper.One one = publishOneParams(messages.get(0), notifyNow.isEmpty() ? null : notifyNow.get(0), now);
                Long id = runner.autoCommit("publish", MessageMapper.class, mapper -> mapper.publishOne(one));
                ids = List.of(id);
            } else {
                MessageMapper.Batch batch = publishParams(messages, notifyNow.toArray(new String[0]), now);
                ids = runner.autoCommit("publish", MessageMapper.class, mapper -> mapper.publishFast(batch));
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
            List<StoredOutcome> outcomes = publishWith(session.getMapper(MessageMapper.class), command);
            countStored(command.messages(), outcomes);
            return outcomes;
        } catch (RuntimeException e) {
            throw PostgresErrors.translate("publish on the caller's connection", e);
        }
    }

    /** Publishes in the session's transaction; the schedule store fires schedules through it. */
    List<StoredOutcome> publishIn(SqlSession session, PublishCommand command) {
        List<StoredOutcome> outcomes = publishWith(session.getMapper(MessageMapper.class), command);
        countStored(command.messages(), outcomes);
        return outcomes;
    }

    /**
     * The publish with dedup: one call of {@code _engine_publish}, which inserts, finds the holders of unique keys
     * and goes round again for holders that raced it. A row per message, by its 1-based position.
     */
    private static List<StoredOutcome> publishWith(MessageMapper mapper, PublishCommand command) {
        List<NewMessage> messages = command.messages();
        int size = messages.size();
        MessageMapper.Batch batch = publishParams(messages, null, command.time().givenOrNull());
        List<MessageMapper.Published> rows = batch.orderingKeys() == null ? mapper.publish(batch) : mapper.publishKeyed(batch);
        StoredOutcome[] outcomes = new StoredOutcome[size];
        for (MessageMapper.Published row : rows) {
            outcomes[row.ord() - 1] = new StoredOutcome(row.id(), row.duplicate());
        }
        for (int i = 0; i < size; i++) {
            if (outcomes[i] == null) {
                throw new IllegalStateException("publish returned no id for message " + (i + 1) + " of " + size
                        + " (" + rows.size() + " rows)");
            }
        }
        return List.of(outcomes);
    }

    /** The columns of a multi-row publish of these messages (package-private for the commit-mode test). */
    static MessageMapper.Batch publishParams(List<NewMessage> messages, String[] notifyKeys, Instant now) {
        int n = messages.size();
        String[] namespaces = new String[n];
        String[] topics = new String[n];
        String[] payloads = new String[n];
        String[] headers = new String[n];
        Integer[] priorities = new Integer[n];
        Integer[] maxAttempts = new Integer[n];
        String[] uniqueKeys = new String[n];
        Long[] runAtMicros = new Long[n];
        Long[] delayMicros = new Long[n];
        String[] orderingKeys = null;
        for (int i = 0; i < n; i++) {
            NewMessage message = messages.get(i);
            namespaces[i] = message.namespace();
            topics[i] = message.topic();
            payloads[i] = message.json();
            headers[i] = HeadersJson.write(message.headers());
            priorities[i] = message.priority();
            maxAttempts[i] = message.maxAttempts();
            uniqueKeys[i] = message.uniqueKey();
            runAtMicros[i] = message.runAt() == null ? null : epochMicros(message.runAt());
            delayMicros[i] = message.runAt() != null || message.delay() == null ? null : micros(message.delay());
            if (message.orderingKey() != null) {
                if (orderingKeys == null) {
                    orderingKeys = new String[n];
                }
                orderingKeys[i] = message.orderingKey();
            }
        }
        return new MessageMapper.Batch(namespaces, topics, payloads, headers, priorities, maxAttempts, uniqueKeys,
                runAtMicros, delayMicros, notifyKeys == null ? new String[0] : notifyKeys, now, orderingKeys);
    }

    /** A one-message publish (package-private for the commit-mode test); {@code notifyKey} null: held back. */
    static MessageMapper.One publishOneParams(NewMessage message, String notifyKey, Instant now) {
        return new MessageMapper.One(message.namespace(), message.topic(), message.json(),
                HeadersJson.write(message.headers()), message.priority(), message.maxAttempts(),
                message.runAt() == null ? null : epochMicros(message.runAt()),
                message.runAt() != null || message.delay() == null ? null : micros(message.delay()), notifyKey, now);
    }

    // ------------------------------------------------------------------ claim

    @Override
    public List<ClaimedMessage> messageClaimDue(ClaimCommand command) {
        MessageMapper.Claim claim = claimParams(command);
        return runner.autoCommit("claim", MessageMapper.class, mapper -> mapper.claim(claim));
    }

    /** The claim's parameters, as every claim of this store binds them. */
    MessageMapper.Claim claimParams(ClaimCommand command) {
        String[] topics = new LinkedHashSet<>(command.topics()).toArray(new String[0]);
        Integer[] afterPriorities = new Integer[topics.length];
        Long[] afterRunAtMicros = new Long[topics.length];
        Long[] afterIds = new Long[topics.length];
        Boolean[] behind = new Boolean[topics.length];
        for (int i = 0; i < topics.length; i++) {
            ClaimPosition position = command.after().get(topics[i]);
            if (position != null) {
                afterPriorities[i] = position.priority();
                afterRunAtMicros[i] = epochMicros(position.runAt());
                afterIds[i] = position.id();
                behind[i] = command.behind().contains(topics[i]);
            }
        }
        return new MessageMapper.Claim(command.namespace(), topics, command.worker(), command.limit(), command.leaseToken(),
                micros(command.lease()), command.time().givenOrNull(), asyncBookkeeping, afterPriorities, afterRunAtMicros,
                afterIds, behind);
    }

    @Override
    public Set<String> topicTakeHeadSweeps(HeadSweepCommand command) {
        String[] topics = new LinkedHashSet<>(command.topics()).toArray(new String[0]);
        if (topics.length == 0) {
            return Set.copyOf(command.topics());
        }
        return Set.copyOf(runner.autoCommit("take head sweeps", MessageMapper.class, mapper -> mapper.takeHeadSweeps(
                command.namespace(), topics, micros(command.minGap()), command.time().givenOrNull())));
    }

    // ------------------------------------------------------------------ changes under a lease

    @Override
    public Set<Long> messageAckIfLeased(AckCommand command) {
        if (command.leases().isEmpty()) {
            return Set.of();
        }
        return runner.autoCommit("complete", MessageMapper.class, mapper -> ackWith(mapper, command, asyncBookkeeping));
    }

    /**
     * Completes with the given mapper; {@code async} only in a transaction of the store's own (a caller's
     * transaction commits as its caller wants). Package-private for the commit-mode test.
     */
    Set<Long> ackWith(MessageMapper mapper, AckCommand command, boolean async) {
        Leases leases = Leases.of(command.leases());
        return Set.copyOf(mapper.complete(command.namespace(), leases.ids, leases.tokens, archive,
                command.time().givenOrNull(), async));
    }

    /** Whether claims and acknowledgements in the store's own transactions skip waiting for the flush. */
    boolean asyncBookkeeping() {
        return asyncBookkeeping;
    }

    /** Completes on the caller's connection, inside the caller's transaction (e.g. a handler's own). */
    Set<Long> ackOn(Connection connection, AckCommand command) {
        Objects.requireNonNull(connection, "connection");
        if (command.leases().isEmpty()) {
            return Set.of();
        }
        try (SqlSession session = MyBatisSupport.sessionOn(sessions, connection)) {
            return ackWith(session.getMapper(MessageMapper.class), command, false);
        } catch (RuntimeException e) {
            throw PostgresErrors.translate("complete on the caller's connection", e);
        }
    }

    @Override
    public Outcome messageRetryIfLeased(RetryCommand command) {
        Leases leases = Leases.of(List.of(command.lease()));
        // as the actor: the trigger that keeps the attempt's history records it
        List<Long> retried = runner.asActor("retry", MessageMapper.class, mapper -> mapper.retry(command.namespace(),
                leases.ids, leases.tokens, micros(command.delay()), command.error(), command.time().givenOrNull()));
        return retried.isEmpty() ? Outcome.LEASE_LOST : Outcome.RETRY_SCHEDULED;
    }

    @Override
    public Outcome messageDeadLetterIfLeased(DeadLetterCommand command) {
        Leases leases = Leases.of(List.of(command.lease()));
        List<Long> buried = runner.autoCommit("bury", MessageMapper.class, mapper -> mapper.bury(command.namespace(),
                leases.ids, leases.tokens, command.error(), command.time().givenOrNull()));
        return buried.isEmpty() ? Outcome.LEASE_LOST : Outcome.DEAD_LETTERED;
    }

    @Override
    public Set<Long> messageExtendIfLeased(ExtendCommand command) {
        if (command.leases().isEmpty()) {
            return Set.of();
        }
        Leases leases = Leases.of(command.leases());
        return Set.copyOf(runner.autoCommit("extend", MessageMapper.class, mapper -> mapper.extend(command.namespace(),
                leases.ids, leases.tokens, micros(command.lease()), command.time().givenOrNull())));
    }

    @Override
    public Set<Long> messageReleaseIfLeased(ReleaseCommand command) {
        if (command.leases().isEmpty()) {
            return Set.of();
        }
        Leases leases = Leases.of(command.leases());
        return Set.copyOf(runner.autoCommit("release", MessageMapper.class,
                mapper -> mapper.release(command.namespace(), leases.ids, leases.tokens)));
    }

    // ------------------------------------------------------------------ flow control (R__flow_control.sql)

    @Override
    public boolean topicSetPaused(TopicPauseCommand command) {
        return runner.autoCommit(command.paused() ? "pause" : "resume", FlowControlMapper.class, mapper -> mapper.setPaused(
                command.namespace(), command.topic(), command.paused(), command.time().givenOrNull()));
    }

    @Override
    public boolean topicSetLimits(TopicLimitsCommand command) {
        FlowControlMapper.Limits row = limitsRow(command.topic(), command.limits());
        return runner.autoCommit(command.limits().isNone() ? "clear limits" : "set limits", FlowControlMapper.class,
                mapper -> mapper.setLimits(command.namespace(), row, command.time().givenOrNull()));
    }

    static FlowControlMapper.Limits limitsRow(String topic, TopicLimits limits) {
        TopicLimits.Partition partition = limits.partition().orElse(null);
        TopicLimits.Rate rate = limits.rate().orElse(null);
        TopicLimits.Rate partitionRate = limits.ratePerPartition().orElse(null);
        return new FlowControlMapper.Limits(topic,
                limits.maxRunning().isPresent() ? limits.maxRunning().getAsInt() : null,
                partition == null ? null : partition.kind().name().toLowerCase(Locale.ROOT),
                partition == null ? null : partition.name(),
                limits.maxRunningPerPartition().isPresent() ? limits.maxRunningPerPartition().getAsInt() : null,
                rate == null ? null : rate.starts(), rate == null ? null : micros(rate.period()),
                partitionRate == null ? null : partitionRate.starts(),
                partitionRate == null ? null : micros(partitionRate.period()));
    }

    @Override
    public Map<String, TopicLimits> topicListLimits(TopicLimitsQuery query) {
        Map<String, TopicLimits> all = new TreeMap<>();
        for (FlowControlMapper.Limits row : runner.autoCommit("limits", FlowControlMapper.class,
                mapper -> mapper.limits(query.namespace()))) {
            TopicLimits limits = TopicLimits.none();
            if (row.maxRunning() != null) {
                limits = limits.withMaxRunning(row.maxRunning());
            }
            if ("ordering_key".equals(row.partitionKind())) {
                limits = limits.partitionedBy(TopicLimits.Partition.orderingKey());
            } else if (row.partitionName() != null) {
                limits = limits.partitionedBy(TopicLimits.Partition.header(row.partitionName()));
            }
            if (row.maxRunningPerPartition() != null) {
                limits = limits.withMaxRunningPerPartition(row.maxRunningPerPartition());
            }
            if (row.rateStarts() != null) {
                limits = limits.withRate(row.rateStarts(), Duration.ofNanos(row.ratePeriodMicros() * 1_000));
            }
            if (row.partitionRateStarts() != null) {
                limits = limits.withRatePerPartition(row.partitionRateStarts(),
                        Duration.ofNanos(row.partitionRatePeriodMicros() * 1_000));
            }
            all.put(row.topic(), limits);
        }
        return Collections.unmodifiableMap(all);
    }

    @Override
    public List<String> topicListPaused(PausedTopicsQuery query) {
        return List.copyOf(runner.autoCommit("paused topics", FlowControlMapper.class,
                mapper -> mapper.pausedTopics(query.namespace())));
    }

    @Override
    public Optional<MessageState> messageCancel(CancelCommand command) {
        String state = runner.autoCommit("cancel", FlowControlMapper.class,
                mapper -> mapper.cancel(command.namespace(), command.id(), command.time().givenOrNull()));
        return state == null ? Optional.empty() : Optional.of(MessageState.valueOf(state.toUpperCase(Locale.ROOT)));
    }

    @Override
    public boolean supportsOrderingKeys() {
        return true;
    }

    @Override
    public boolean topicSetBehindDeadLetter(TopicOrderingCommand command) {
        return runner.autoCommit("choice behind dead letters", FlowControlMapper.class, mapper -> mapper.setOrdering(
                command.namespace(), command.topic(), command.behindDeadLetter().name().toLowerCase(Locale.ROOT),
                command.time().givenOrNull()));
    }

    @Override
    public BehindDeadLetter topicBehindDeadLetter(TopicOrderingQuery query) {
        String choice = runner.autoCommit("choice behind dead letters", FlowControlMapper.class,
                mapper -> mapper.ordering(query.namespace(), query.topic()));
        return BehindDeadLetter.valueOf(choice.toUpperCase(Locale.ROOT));
    }

    @Override
    public Outcome messageSnoozeIfLeased(SnoozeCommand command) {
        Leases leases = Leases.of(List.of(command.lease()));
        Long delayMicros = command.runAt() != null ? null : micros(command.delay() == null ? Duration.ZERO : command.delay());
        Instant runAt = command.runAt() == null ? null
                : command.runAt().isBefore(EARLIEST) ? EARLIEST : command.runAt().isAfter(LATEST) ? LATEST : command.runAt();
        List<Long> snoozed = runner.autoCommit("snooze", FlowControlMapper.class, mapper -> mapper.snooze(command.namespace(),
                leases.ids, leases.tokens, delayMicros, runAt, command.time().givenOrNull()));
        return snoozed.isEmpty() ? Outcome.LEASE_LOST : Outcome.SNOOZED;
    }

    /** Leases as the parallel arrays the engine functions take. */
    private record Leases(Long[] ids, Long[] tokens) {

        static Leases of(Collection<LeaseRef> leases) {
            Long[] ids = new Long[leases.size()];
            Long[] tokens = new Long[leases.size()];
            int i = 0;
            for (LeaseRef lease : leases) {
                ids[i] = lease.id();
                tokens[i] = lease.leaseToken();
                i++;
            }
            return new Leases(ids, tokens);
        }
    }

    @Override
    public RescueResult messageRescueExpired(RescueCommand command) {
        MessageMapper.Rescued row = runner.asActor("rescue of expired leases", MessageMapper.class,
                mapper -> mapper.rescue(command.namespace(), command.limit(), command.time().givenOrNull(),
                        command.expiredSince()));
        return new RescueResult(Math.toIntExact(row.requeued()), Math.toIntExact(row.deadLettered()), row.lookedUpTo());
    }

    // ------------------------------------------------------------------ dead letters

    @Override
    public List<DeadLetter> deadLetterList(DeadLetterQuery query) {
        List<DeadLetterMapper.Row> rows = runner.autoCommit("dead letter listing", DeadLetterMapper.class,
                mapper -> mapper.list(query.namespace(), query.topic(), null, query.afterId(), query.limit()));
        return rows.stream().map(PostgresMessageStore::toDeadLetter).toList();
    }

    @Override
    public Optional<DeadLetter> deadLetterFind(MessageRef message) {
        List<DeadLetterMapper.Row> rows = runner.autoCommit("dead letter lookup", DeadLetterMapper.class,
                mapper -> mapper.list(message.namespace(), null, message.id(), 0, 1));
        return rows.stream().findFirst().map(PostgresMessageStore::toDeadLetter);
    }

    private static DeadLetter toDeadLetter(DeadLetterMapper.Row row) {
        return new DeadLetter(MessageId.of(row.id()), row.namespace(), row.topic(), row.payload(), row.headers(),
                row.priority(), row.attempts(), row.maxAttempts(), row.lastError(), row.publishedAt(), row.failedAt());
    }

    @Override
    public RedriveResult deadLetterRedrive(RedriveCommand command) {
        if (command.id() == null && command.topic() == null) {
            return new RedriveResult(0, 0, command.afterId());
        }
        // one dead letter by id, or a page of a topic after afterId
        Long[] ids = command.id() == null ? null : new Long[] {command.id()};
        String topic = command.id() == null ? command.topic() : null;
        Long afterId = command.id() == null ? command.afterId() : null;
        DeadLetterMapper.Redriven row = runner.autoCommit("redrive", DeadLetterMapper.class,
                mapper -> mapper.redrive(command.namespace(), topic, ids, afterId, command.limit(), command.time().givenOrNull()));
        return new RedriveResult(row.redriven(), row.examined(), row.lastId());
    }

    @Override
    public int deadLetterPurge(PurgeCommand command) {
        Long[] ids = command.id() == null ? null : new Long[] {command.id()};
        String topic = command.id() == null ? command.topic() : null;
        return runner.autoCommit("purge of dead letters", DeadLetterMapper.class,
                mapper -> mapper.purge(command.namespace(), topic, ids, command.limit()));
    }

    // ------------------------------------------------------------------ reading

    @Override
    public NamespaceStats namespaceStats(StatsQuery query) {
        String namespace = query.namespace();
        List<TopicStats> rows = runner.autoCommit("stats", MessageMapper.class,
                mapper -> mapper.stats(namespace, query.time().givenOrNull()));
        Map<String, TopicStats> topics = new LinkedHashMap<>();
        long pending = 0;
        long running = 0;
        long completed = 0;
        long dead = 0;
        for (TopicStats row : rows) {
            topics.put(row.topic(), row);
            pending += row.pending();
            running += row.running();
            completed += row.completed();
            dead += row.dead();
        }
        return new NamespaceStats(namespace, pending, running, completed, dead, topics);
    }

    @Override
    public Optional<MessageInfo> messageFind(MessageRef message) {
        // one transaction, so the history belongs to the row found
        Object[] found = runner.inTransaction("find", session -> {
            MessageMapper mapper = session.getMapper(MessageMapper.class);
            MessageMapper.Info info = mapper.find(message.namespace(), message.id());
            return new Object[] {info, info == null ? List.of() : mapper.findAttempts(message.namespace(), message.id())};
        });
        MessageMapper.Info row = (MessageMapper.Info) found[0];
        if (row == null) {
            return Optional.empty();
        }
        @SuppressWarnings("unchecked")
        List<MessageMapper.Attempt> attempts = (List<MessageMapper.Attempt>) found[1];
        MessageState state = switch (row.state()) {
            case "pending", "waiting" -> MessageState.PENDING;
            case "running" -> MessageState.RUNNING;
            default -> MessageState.DEAD;
        };
        return Optional.of(new MessageInfo(MessageId.of(row.id()), row.namespace(), row.topic(), state, row.payload(),
                row.headers(), row.priority(), row.attempts(), row.maxAttempts(), row.uniqueKey(), row.publishedAt(),
                row.runAt(), row.leaseUntil(), row.worker(), row.lastError(),
                attempts.stream().map(PostgresMessageStore::attempt).toList(),
                attempts.stream().map(MessageMapper.Attempt::ordinal).filter(Objects::nonNull).findFirst()
                        .map(first -> first - 1).orElse(0),
                Optional.ofNullable(row.orderingKey()), "waiting".equals(row.state())));
    }

    private static Attempt attempt(MessageMapper.Attempt row) {
        AttemptOutcome outcome = row.outcome() == null ? null : switch (row.outcome()) {
            case "running" -> AttemptOutcome.RUNNING;
            case "retry" -> AttemptOutcome.RETRY;
            case "lease_expired" -> AttemptOutcome.LEASE_EXPIRED;
            case "dead" -> AttemptOutcome.DEAD;
            case "completed" -> AttemptOutcome.COMPLETED;
            default -> throw new IllegalStateException("attempt " + row.attempt() + " has an outcome this version "
                    + "does not know: " + row.outcome());
        };
        return new Attempt(row.attempt(), outcome, row.worker(), row.startedAt(), row.endedAt(), row.error());
    }

    @Override
    public Optional<Instant> messageNextDueAt(NextDueQuery query) {
        List<String> topics = query.topics();
        if (topics.isEmpty()) {
            return Optional.empty();
        }
        String[] distinct = new LinkedHashSet<>(topics).toArray(new String[0]);
        Instant next = runner.autoCommit("next due time", MessageMapper.class,
                mapper -> mapper.nextDueAt(query.namespace(), distinct, query.time().givenOrNull()));
        return Optional.ofNullable(next);
    }

    // ------------------------------------------------------------------ wake-ups

    /** Sends a notification on the schema's channel through the pool (the listener's probe). */
    void notifyChannel(String payload) {
        runner.autoCommit("notify", WakeUpMapper.class, mapper -> mapper.wake(payload));
    }

    /**
     * Sends the wake-up of a topic on its own, {@code key} being "namespace/topic" (names hold no '/'): the
     * notification and the namespace's wake mark, for the trailing wake-up of the notify window.
     */
    void wakeTopic(String key) {
        int slash = key.indexOf('/');
        if (slash <= 0) {
            throw new IllegalArgumentException("wake-up key " + key + " is not namespace/topic");
        }
        runner.autoCommit("notify", WakeUpMapper.class,
                mapper -> mapper.wakeTopic(key.substring(0, slash), key.substring(slash + 1)));
    }

    // ------------------------------------------------------------------ plumbing

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
