package dev.queue.inmemory;

import dev.queue.api.Attempt;
import dev.queue.api.BehindDeadLetter;
import dev.queue.api.AttemptOutcome;
import dev.queue.api.DeadLetter;
import dev.queue.api.InvalidInputException;
import dev.queue.api.MessageId;
import dev.queue.api.MessageInfo;
import dev.queue.api.MessageState;
import dev.queue.api.NamespaceStats;
import dev.queue.api.Outcome;
import dev.queue.api.TopicLimits;
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
import dev.queue.domain.port.TopicLimitsCommand;
import dev.queue.domain.port.TopicLimitsQuery;

import dev.queue.domain.port.TopicOrderingCommand;
import dev.queue.domain.port.TopicOrderingQuery;
import dev.queue.domain.port.TopicPauseCommand;
import dev.queue.domain.rules.Lifecycle;
import dev.queue.domain.time.SystemClock;
import dev.queue.inmemory.InMemoryWakeUps.TopicKey;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * The message store of {@link InMemoryQueue}: the semantics every adapter implements, in the heap of one
 * process. Thread-safe: one lock guards all state, and every operation is cheap under it. Pending messages of
 * each topic sit in one sorted set per priority ordered by due time and id, so a claim takes the heads instead
 * of scanning; running messages sit in one set ordered by lease end, so a rescue visits only expired leases.
 *
 * <p>Time comes from each command's {@link CommandTime}, reading the clock given at construction when it is the
 * store's own. Timestamps are kept at microsecond precision. Wake-ups are signalled after the lock is
 * released. Besides the messages, the store records every stored publish ({@link #published()}) for tests.
 */
public final class InMemoryMessageStore implements MessageStore {

    static final int PRIORITIES = 10;
    static final String LEASE_EXPIRED = "lease expired";
    static final String LEASE_EXPIRED_ON_LAST_ATTEMPT = "lease expired on its last attempt";

    private static final Comparator<Msg> BY_DUE = Comparator.<Msg, Instant>comparing(m -> m.runAt)
            .thenComparingLong(m -> m.id);
    private static final Comparator<Msg> BY_LEASE_END = Comparator.<Msg, Instant>comparing(m -> m.leaseUntil)
            .thenComparingLong(m -> m.id);

    private final Clock clock;
    private final InMemoryWakeUps wakeUps;
    private final AtomicLong ids = new AtomicLong();
    private final ReentrantLock lock = new ReentrantLock();

    // Everything below is guarded by lock.
    private final Map<String, NamespaceState> namespaces = new HashMap<>();
    /** Pending and running messages by id. */
    private final Map<Long, Msg> live = new HashMap<>();
    /** Running messages by lease end. */
    private final TreeSet<Msg> leases = new TreeSet<>(BY_LEASE_END);
    /** Unique keys held by pending and running messages. */
    private final Map<UniqueKey, Long> uniqueKeys = new HashMap<>();
    /** The messages of each ordering key that are live or dead; a key without any has no entry. */
    private final Map<OrderingKey, KeyLine> keyLines = new HashMap<>();
    private final List<PublishedMessage> published = new ArrayList<>();

    /** A store on the machine's clock with wake-ups of its own. */
    public InMemoryMessageStore() {
        this(SystemClock.authoritative(), new InMemoryWakeUps());
    }

    /**
     * @param clock   used when a command carries no time
     * @param wakeUps signalled when messages become pending
     */
    public InMemoryMessageStore(Clock clock, InMemoryWakeUps wakeUps) {
        this.clock = Objects.requireNonNull(clock, "clock");
        this.wakeUps = Objects.requireNonNull(wakeUps, "wakeUps");
    }

    public InMemoryWakeUps wakeUps() {
        return wakeUps;
    }

    // ------------------------------------------------------------------------------------------ publish

    @Override
    public List<StoredOutcome> messageInsertMany(PublishCommand command) {
        List<NewMessage> messages = command.messages();
        for (int i = 0; i < messages.size(); i++) {
            check(messages.get(i), i);
        }
        return storeUnderLock(command.time(), (now, store) -> {
            List<StoredOutcome> outcomes = new ArrayList<>(messages.size());
            for (NewMessage message : messages) {
                outcomes.add(store.apply(message));
            }
            return outcomes;
        });
    }

    /** Work that stores messages at one resolved time while the store's lock is held. */
    interface StoringWork<T> {
        T run(Instant now, Function<NewMessage, StoredOutcome> store);
    }

    /**
     * Runs {@code work} under the lock at the command's time; listeners of the topics it stored into are woken once
     * the lock is released.
     */
    <T> T storeUnderLock(CommandTime time, StoringWork<T> work) {
        Set<TopicKey> toWake = new LinkedHashSet<>();
        T result;
        lock.lock();
        try {
            Instant now = now(time);
            result = work.run(now, message -> storeLocked(message, now, toWake));
        } finally {
            lock.unlock();
        }
        wakeUps.signal(toWake);
        return result;
    }

    /** Stores one message (or finds the holder of its key); the caller holds the lock. */
    private StoredOutcome storeLocked(NewMessage message, Instant now, Set<TopicKey> toWake) {
        UniqueKey key = message.uniqueKey() == null ? null
                : new UniqueKey(message.namespace(), message.topic(), message.uniqueKey());
        Long holder = key == null ? null : uniqueKeys.get(key);
        if (holder != null) {
            return new StoredOutcome(holder, true);
        }
        Instant runAt = message.runAt() != null ? micros(message.runAt())
                : micros(now.plus(message.delay() == null ? Duration.ZERO : message.delay()));
        NamespaceState ns = namespace(message.namespace());
        TopicState topic = ns.topic(message.topic());
        Msg msg = new Msg(ids.incrementAndGet(), message, topic, runAt, now);
        live.put(msg.id, msg);
        if (key != null) {
            uniqueKeys.put(key, msg.id);
        }
        if (msg.orderingKey == null) {
            topic.addPending(msg);
        } else {
            KeyLine line = keyLines.computeIfAbsent(msg.orderingKeyRef(), k -> new KeyLine());
            if (line.head == null && line.waiting.isEmpty() && (!ns.waitsBehindDead(topic.name) || line.dead.isEmpty())) {
                line.head = msg;
                topic.addPending(msg);
            } else {
                msg.waiting = true;
                msg.state = MessageState.PENDING;
                line.waiting.put(msg.id, msg);
                topic.waitingCount++;
            }
        }
        published.add(new PublishedMessage(MessageId.of(msg.id), msg.namespace, msg.topic.name, msg.json,
                msg.headers, now));
        toWake.add(new TopicKey(msg.namespace, msg.topic.name));
        return new StoredOutcome(msg.id, false);
    }


    /** Inputs arrive validated; this only keeps a broken caller from storing half a batch. */
    private static void check(NewMessage message, int index) {
        String at = "messages[" + index + "].";
        if (message == null) {
            throw new InvalidInputException("messages[" + index + "]", null, "a message");
        }
        if (message.namespace() == null) {
            throw new InvalidInputException(at + "namespace", null, "a namespace");
        }
        if (message.topic() == null) {
            throw new InvalidInputException(at + "topic", null, "a topic");
        }
        if (message.json() == null) {
            throw new InvalidInputException(at + "json", null, "JSON text");
        }
        if (message.priority() < 0 || message.priority() >= PRIORITIES) {
            throw new InvalidInputException(at + "priority", message.priority(), "0 to " + (PRIORITIES - 1));
        }
        if (message.maxAttempts() < 1) {
            throw new InvalidInputException(at + "maxAttempts", message.maxAttempts(), "at least 1");
        }
    }

    // ------------------------------------------------------------------------------------------ claim

    @Override
    public List<ClaimedMessage> messageClaimDue(ClaimCommand command) {
        Duration lease = Objects.requireNonNull(command.lease(), "lease");
        if (command.limit() <= 0 || command.topics() == null || command.topics().isEmpty()) {
            return List.of();
        }
        lock.lock();
        try {
            NamespaceState ns = namespaces.get(command.namespace());
            if (ns == null) {
                return List.of();
            }
            Instant now = now(command.time());
            Instant leaseUntil = micros(now.plus(lease));
            List<ClaimedMessage> claimed = new ArrayList<>(Math.min(command.limit(), 64));
            for (String topicName : command.topics()) {
                TopicState topic = ns.topics.get(topicName);
                if (topic == null || ns.paused.contains(topicName)) {
                    continue;
                }
                TopicLimits limits = ns.limits.get(topicName);
                if (limits != null) {
                    claimLimited(ns, topic, limits, command, now, leaseUntil, claimed);
                    continue;
                }
                for (int priority = 0; priority < PRIORITIES && claimed.size() < command.limit(); priority++) {
                    TreeSet<Msg> bucket = topic.pending[priority];
                    while (claimed.size() < command.limit() && !bucket.isEmpty() && !bucket.first().runAt.isAfter(now)) {
                        Msg msg = bucket.first();
                        topic.removePending(msg);
                        msg.attempts++;
                        msg.worker = command.worker();
                        msg.attemptStartedAt = micros(now);
                        msg.leaseToken = command.leaseToken();
                        msg.leaseUntil = leaseUntil;
                        startRunning(msg);
                        claimed.add(new ClaimedMessage(msg.id, msg.namespace, topic.name, msg.json, msg.headers,
                                msg.priority, msg.attempts, msg.maxAttempts, msg.leaseToken, msg.worker, msg.leaseUntil,
                                msg.publishedAt, msg.runAt, msg.orderingKey));
                    }
                }
                if (claimed.size() >= command.limit()) {
                    break;
                }
            }
            return claimed;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Claims from a limited topic, the caller holding the lock: at most the room its running limit and its rate
     * leave, stepping over candidates of full partitions (at most {@link #scanBound} of them), in claim order.
     */
    private void claimLimited(NamespaceState ns, TopicState topic, TopicLimits limits, ClaimCommand command, Instant now,
                              Instant leaseUntil, List<ClaimedMessage> claimed) {
        int room = command.limit() - claimed.size();
        if (limits.maxRunning().isPresent()) {
            room = Math.min(room, limits.maxRunning().getAsInt() - topic.running);
        }
        Bucket topicBucket = null;
        double topicTokens = 0;
        if (limits.rate().isPresent()) {
            topicBucket = ns.buckets.computeIfAbsent(bucketKey(topic.name, null), k -> new Bucket());
            topicTokens = topicBucket.tokensAt(now, limits.rate().get());
            room = Math.min(room, (int) Math.floor(topicTokens));
        }
        TopicLimits.Partition partitionBy = limits.partition().orElse(null);
        if (limits.ratePerPartition().isPresent()) {
            Duration period = limits.ratePerPartition().get().period();
            ns.buckets.entrySet().removeIf(e -> e.getKey().startsWith(topic.name + "\u0000p")
                    && !e.getValue().refilledAt.isAfter(now.minus(period)));
        }
        if (room <= 0) {
            return;
        }
        Map<String, Integer> runningByPartition = new HashMap<>();
        if (limits.maxRunningPerPartition().isPresent()) {
            for (Msg msg : leases) {
                if (msg.topic == topic) {
                    runningByPartition.merge(partition(msg, partitionBy), 1, Integer::sum);
                }
            }
        }
        Map<String, Double> partitionTokens = new HashMap<>();
        Map<String, Integer> takenByPartition = new HashMap<>();
        int scan = partitionBy == null ? room : scanBound(room);
        List<Msg> picked = new ArrayList<>();
        List<Msg> candidates = new ArrayList<>();
        for (int priority = 0; priority < PRIORITIES && candidates.size() < scan; priority++) {
            for (Msg msg : topic.pending[priority]) {
                if (msg.runAt.isAfter(now) || candidates.size() >= scan) {
                    break;
                }
                candidates.add(msg);
            }
        }
        for (Msg msg : candidates) {
            if (picked.size() >= room) {
                break;
            }
            String part = partition(msg, partitionBy);
            int taken = takenByPartition.getOrDefault(part, 0);
            if (limits.maxRunningPerPartition().isPresent()
                    && runningByPartition.getOrDefault(part, 0) + taken >= limits.maxRunningPerPartition().getAsInt()) {
                continue;
            }
            if (limits.ratePerPartition().isPresent()) {
                double tokens = partitionTokens.computeIfAbsent(part, p -> ns.buckets.getOrDefault(bucketKey(topic.name, p),
                        new Bucket()).tokensAt(now, limits.ratePerPartition().get()));
                if (taken + 1 > Math.floor(tokens)) {
                    continue;
                }
            }
            takenByPartition.put(part, taken + 1);
            picked.add(msg);
        }
        // only a running limit's room comes back when a message settles; a rate's comes back with time
        boolean freesRoom = limits.maxRunning().isPresent() || limits.maxRunningPerPartition().isPresent();
        for (Msg msg : picked) {
            topic.removePending(msg);
            msg.attempts++;
            msg.worker = command.worker();
            msg.attemptStartedAt = micros(now);
            msg.leaseToken = command.leaseToken();
            msg.leaseUntil = leaseUntil;
            startRunning(msg);
            claimed.add(new ClaimedMessage(msg.id, msg.namespace, topic.name, msg.json, msg.headers, msg.priority,
                    msg.attempts, msg.maxAttempts, msg.leaseToken, msg.worker, msg.leaseUntil, msg.publishedAt, msg.runAt,
                    msg.orderingKey, freesRoom));
        }
        if (topicBucket != null) {
            topicBucket.spend(now, topicTokens, picked.size());
        }
        if (limits.ratePerPartition().isPresent()) {
            takenByPartition.forEach((part, taken) -> ns.buckets.computeIfAbsent(bucketKey(topic.name, part),
                    k -> new Bucket()).spend(now, partitionTokens.get(part), taken));
        }
    }

    /** How many candidates a claim under per-partition limits looks at, at most: the same bound as PostgreSQL's. */
    static int scanBound(int room) {
        return Math.max(1000, 20 * room);
    }

    /** The message's partition: its header's value or its ordering key, the empty value without one. */
    private static String partition(Msg msg, TopicLimits.Partition by) {
        if (by == null) {
            return "";
        }
        String value = by.kind() == TopicLimits.Partition.Kind.ORDERING_KEY ? msg.orderingKey : msg.headers.get(by.name());
        return value == null ? "" : value;
    }

    /** The topic's bucket (partition null) or a partition's, in {@link NamespaceState#buckets}. */
    private static String bucketKey(String topic, String partition) {
        return partition == null ? topic + "\u0000t" : topic + "\u0000p" + partition;
    }

    /** A token bucket: {@code tokens} at {@code refilledAt}; without a spend yet, full. */
    private static final class Bucket {
        double tokens = -1;
        Instant refilledAt;

        double tokensAt(Instant now, TopicLimits.Rate rate) {
            if (refilledAt == null) {
                return rate.starts();
            }
            long elapsed = Math.max(0, ChronoUnit.MICROS.between(refilledAt, now));
            long periodMicros = rate.period().toNanos() / 1_000;
            return Math.min(rate.starts(), tokens + (double) elapsed * rate.starts() / periodMicros);
        }

        /** A claim's time older than the last refill (read before it waited) leaves the bucket's time where it is. */
        void spend(Instant now, double available, int spent) {
            tokens = available - spent;
            if (refilledAt == null || now.isAfter(refilledAt)) {
                refilledAt = now;
            }
        }

        /** When the bucket holds a whole token again, if it holds none now. */
        Instant nextTokenAt(TopicLimits.Rate rate) {
            if (refilledAt == null || tokens >= 1) {
                return null;
            }
            long periodMicros = rate.period().toNanos() / 1_000;
            long micros = (long) Math.ceil((1 - tokens) * periodMicros / rate.starts());
            return refilledAt.plus(micros, ChronoUnit.MICROS);
        }
    }

    // ------------------------------------------------------------------------------------------ guarded changes

    @Override
    public Set<Long> messageAckIfLeased(AckCommand command) {
        Set<TopicKey> toWake = new LinkedHashSet<>();
        Set<Long> done = new LinkedHashSet<>();
        lock.lock();
        try {
            Instant now = null;
            for (LeaseRef ref : command.leases()) {
                Msg msg = held(command.namespace(), ref);
                if (msg == null) {
                    continue;
                }
                stopRunning(msg);
                forget(msg);
                msg.topic.completed++;
                done.add(msg.id);
                if (msg.orderingKey != null) {
                    now = now == null ? now(command.time()) : now;
                    headLeft(msg, false, now, toWake);
                }
            }
        } finally {
            lock.unlock();
        }
        wakeUps.signal(toWake);
        return done;
    }

    @Override
    public Outcome messageRetryIfLeased(RetryCommand command) {
        TopicKey toWake;
        Outcome outcome;
        lock.lock();
        try {
            Msg msg = held(command.namespace(), command.lease());
            if (msg == null) {
                return Outcome.LEASE_LOST;
            }
            Instant now = now(command.time());
            recordFailure(msg, command.error(), now, AttemptOutcome.RETRY);
            stopRunning(msg);
            msg.lastError = command.error();
            Duration delay = command.delay() == null || command.delay().isNegative() ? Duration.ZERO : command.delay();
            msg.runAt = micros(now.plus(delay));
            msg.topic.addPending(msg);
            toWake = new TopicKey(msg.namespace, msg.topic.name);
            outcome = Outcome.RETRY_SCHEDULED;
        } finally {
            lock.unlock();
        }
        wakeUps.signal(List.of(toWake));
        return outcome;
    }

    @Override
    public Outcome messageDeadLetterIfLeased(DeadLetterCommand command) {
        Set<TopicKey> toWake = new LinkedHashSet<>();
        lock.lock();
        try {
            Msg msg = held(command.namespace(), command.lease());
            if (msg == null) {
                return Outcome.LEASE_LOST;
            }
            recordFailure(msg, command.error(), now(command.time()), AttemptOutcome.DEAD);
            stopRunning(msg);
            msg.lastError = command.error();
            bury(msg, now(command.time()), toWake);
        } finally {
            lock.unlock();
        }
        wakeUps.signal(toWake);
        return Outcome.DEAD_LETTERED;
    }

    @Override
    public Set<Long> messageExtendIfLeased(ExtendCommand command) {
        Duration lease = Objects.requireNonNull(command.lease(), "lease");
        lock.lock();
        try {
            Instant leaseUntil = micros(now(command.time()).plus(lease));
            Set<Long> extended = new LinkedHashSet<>();
            for (LeaseRef ref : command.leases()) {
                Msg msg = held(command.namespace(), ref);
                if (msg == null) {
                    continue;
                }
                leases.remove(msg);
                msg.leaseUntil = leaseUntil;
                leases.add(msg);
                extended.add(msg.id);
            }
            return extended;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public Set<Long> messageReleaseIfLeased(ReleaseCommand command) {
        Set<TopicKey> toWake = new LinkedHashSet<>();
        Set<Long> released = new LinkedHashSet<>();
        lock.lock();
        try {
            for (LeaseRef ref : command.leases()) {
                Msg msg = held(command.namespace(), ref);
                if (msg == null) {
                    continue;
                }
                stopRunning(msg);
                msg.attempts = Math.max(0, msg.attempts - 1);
                msg.topic.addPending(msg);
                released.add(msg.id);
                toWake.add(new TopicKey(msg.namespace, msg.topic.name));
            }
        } finally {
            lock.unlock();
        }
        wakeUps.signal(toWake);
        return released;
    }

    @Override
    public RescueResult messageRescueExpired(RescueCommand command) {
        Set<TopicKey> toWake = new LinkedHashSet<>();
        int requeued = 0;
        int deadLettered = 0;
        lock.lock();
        try {
            Instant now = now(command.time());
            List<Msg> expired = new ArrayList<>();
            for (Msg msg : leases) {
                if (expired.size() >= command.limit() || !msg.leaseUntil.isBefore(now)) {
                    break;
                }
                if (command.namespace() == null || command.namespace().equals(msg.namespace)) {
                    expired.add(msg);
                }
            }
            for (Msg msg : expired) {
                boolean left = Lifecycle.attemptsLeft(msg.attempts, msg.maxAttempts);
                recordFailure(msg, left ? LEASE_EXPIRED : LEASE_EXPIRED_ON_LAST_ATTEMPT, now,
                        left ? AttemptOutcome.LEASE_EXPIRED : AttemptOutcome.DEAD);
                stopRunning(msg);
                if (Lifecycle.attemptsLeft(msg.attempts, msg.maxAttempts)) {
                    msg.lastError = LEASE_EXPIRED;
                    msg.runAt = now;
                    msg.topic.addPending(msg);
                    toWake.add(new TopicKey(msg.namespace, msg.topic.name));
                    requeued++;
                } else {
                    msg.lastError = LEASE_EXPIRED_ON_LAST_ATTEMPT;
                    bury(msg, now, toWake);
                    deadLettered++;
                }
            }
        } finally {
            lock.unlock();
        }
        wakeUps.signal(toWake);
        return new RescueResult(requeued, deadLettered);
    }

    // ------------------------------------------------------------------------------------------ dead letters

    @Override
    public List<DeadLetter> deadLetterList(DeadLetterQuery query) {
        if (query.limit() <= 0) {
            return List.of();
        }
        lock.lock();
        try {
            NamespaceState ns = namespaces.get(query.namespace());
            if (ns == null) {
                return List.of();
            }
            List<DeadLetter> page = new ArrayList<>(Math.min(query.limit(), 64));
            for (Msg msg : ns.dead.tailMap(query.afterId(), false).values()) {
                if (query.topic() == null || query.topic().equals(msg.topic.name)) {
                    page.add(msg.toDeadLetter());
                    if (page.size() >= query.limit()) {
                        break;
                    }
                }
            }
            return page;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public Optional<DeadLetter> deadLetterFind(MessageRef message) {
        String namespace = message.namespace();
        long id = message.id();
        lock.lock();
        try {
            NamespaceState ns = namespaces.get(namespace);
            Msg msg = ns == null ? null : ns.dead.get(id);
            return msg == null ? Optional.empty() : Optional.of(msg.toDeadLetter());
        } finally {
            lock.unlock();
        }
    }

    @Override
    public RedriveResult deadLetterRedrive(RedriveCommand command) {
        Set<TopicKey> toWake = new LinkedHashSet<>();
        int redriven = 0;
        List<Msg> candidates;
        lock.lock();
        try {
            NamespaceState ns = namespaces.get(command.namespace());
            if (ns == null || (command.id() == null && command.topic() == null)) {
                return new RedriveResult(0, 0, command.afterId());
            }
            Instant now = now(command.time());
            candidates = deadLettersOf(ns, command.id(), command.topic(), command.afterId(), command.limit());
            for (Msg msg : candidates) {
                if (msg.uniqueKey != null && uniqueKeys.containsKey(msg.uniqueKeyRef())) {
                    continue; // a live message holds the key and already does the work
                }
                ns.dead.remove(msg.id);
                msg.topic.dead--;
                msg.attempts = 0;
                msg.runAt = now;
                msg.failedAt = null;
                live.put(msg.id, msg);
                if (msg.uniqueKey != null) {
                    uniqueKeys.put(msg.uniqueKeyRef(), msg.id);
                }
                if (msg.orderingKey == null) {
                    msg.topic.addPending(msg);
                    toWake.add(new TopicKey(msg.namespace, msg.topic.name));
                } else {
                    // back in line by its id: the head again unless something of its key is pending or running
                    KeyLine line = keyLines.computeIfAbsent(msg.orderingKeyRef(), k -> new KeyLine());
                    line.dead.remove(msg.id);
                    msg.waiting = true;
                    msg.state = MessageState.PENDING;
                    line.waiting.put(msg.id, msg);
                    msg.topic.waitingCount++;
                    advance(msg.orderingKeyRef(), now, toWake);
                }
                redriven++;
            }
        } finally {
            lock.unlock();
        }
        wakeUps.signal(toWake);
        long lastId = candidates.isEmpty() ? command.afterId() : candidates.get(candidates.size() - 1).id;
        return new RedriveResult(redriven, candidates.size(), lastId);
    }

    @Override
    public int deadLetterPurge(PurgeCommand command) {
        Set<TopicKey> toWake = new LinkedHashSet<>();
        int purged;
        lock.lock();
        try {
            NamespaceState ns = namespaces.get(command.namespace());
            if (ns == null) {
                return 0;
            }
            List<Msg> victims = deadLettersOf(ns, command.id(), command.topic(), 0, command.limit());
            Instant now = now(CommandTime.storeClock());
            for (Msg msg : victims) {
                ns.dead.remove(msg.id);
                msg.topic.dead--;
                if (msg.orderingKey != null) {
                    KeyLine line = keyLines.get(msg.orderingKeyRef());
                    if (line != null) {
                        line.dead.remove(msg.id);
                    }
                    advance(msg.orderingKeyRef(), now, toWake);
                }
            }
            purged = victims.size();
        } finally {
            lock.unlock();
        }
        wakeUps.signal(toWake);
        return purged;
    }

    /**
     * The dead letter with {@code id} when not null, else those of {@code topic} when not null, else all; by id,
     * above {@code afterId}, at most {@code limit}.
     */
    private static List<Msg> deadLettersOf(NamespaceState ns, Long id, String topic, long afterId, int limit) {
        if (id != null) {
            Msg msg = ns.dead.get(id);
            return msg == null ? List.of() : List.of(msg);
        }
        List<Msg> found = new ArrayList<>();
        for (Msg msg : ns.dead.tailMap(afterId, false).values()) {
            if (found.size() >= limit) {
                break;
            }
            if (topic == null || topic.equals(msg.topic.name)) {
                found.add(msg);
            }
        }
        return found;
    }

    // ------------------------------------------------------------------------------------------ flow control

    /** Under the lock every claim takes, so once a pause returns no claim starts a message of the topic. */
    @Override
    public boolean topicSetPaused(TopicPauseCommand command) {
        boolean changed;
        lock.lock();
        try {
            NamespaceState ns = namespace(command.namespace());
            changed = command.paused() ? ns.paused.add(command.topic()) : ns.paused.remove(command.topic());
        } finally {
            lock.unlock();
        }
        if (changed && !command.paused()) {
            wakeUps.signal(List.of(new TopicKey(command.namespace(), command.topic())));
        }
        return changed;
    }

    /** Under the lock every claim takes, so once limits are stored every claim counts against them. */
    @Override
    public boolean topicSetLimits(TopicLimitsCommand command) {
        boolean changed;
        lock.lock();
        try {
            NamespaceState ns = namespace(command.namespace());
            String topic = command.topic();
            TopicLimits old = ns.limits.get(topic);
            TopicLimits limits = command.limits();
            if (limits.isNone()) {
                changed = ns.limits.remove(topic) != null;
                ns.buckets.keySet().removeIf(key -> key.startsWith(topic + "\u0000"));
            } else {
                changed = !limits.equals(old);
                ns.limits.put(topic, limits);
                if (old != null && !old.partition().equals(limits.partition()) || limits.ratePerPartition().isEmpty()) {
                    ns.buckets.keySet().removeIf(key -> key.startsWith(topic + "\u0000p"));
                }
                if (limits.rate().isEmpty()) {
                    ns.buckets.remove(bucketKey(topic, null));
                }
            }
        } finally {
            lock.unlock();
        }
        if (changed) {
            wakeUps.signal(List.of(new TopicKey(command.namespace(), command.topic())));
        }
        return changed;
    }

    @Override
    public Map<String, TopicLimits> topicListLimits(TopicLimitsQuery query) {
        lock.lock();
        try {
            NamespaceState ns = namespaces.get(query.namespace());
            return ns == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(ns.limits));
        } finally {
            lock.unlock();
        }
    }

    @Override
    public List<String> topicListPaused(PausedTopicsQuery query) {
        lock.lock();
        try {
            NamespaceState ns = namespaces.get(query.namespace());
            return ns == null ? List.of() : List.copyOf(ns.paused);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public Optional<MessageState> messageCancel(CancelCommand command) {
        Set<TopicKey> toWake = new LinkedHashSet<>();
        MessageState was;
        lock.lock();
        try {
            Msg msg = live.get(command.id());
            if (msg == null || !msg.namespace.equals(command.namespace())) {
                return Optional.empty();
            }
            was = msg.state;
            if (was == MessageState.RUNNING) {
                stopRunning(msg);
            } else if (msg.waiting) {
                KeyLine line = keyLines.get(msg.orderingKeyRef());
                line.waiting.remove(msg.id);
                msg.waiting = false;
                msg.topic.waitingCount--;
            } else {
                msg.topic.removePending(msg);
            }
            forget(msg);
            if (msg.orderingKey != null) {
                if (keyLines.get(msg.orderingKeyRef()).head == msg) {
                    headLeft(msg, false, now(command.time()), toWake);
                } else {
                    advance(msg.orderingKeyRef(), now(command.time()), toWake);
                }
            }
        } finally {
            lock.unlock();
        }
        wakeUps.signal(toWake);
        return Optional.of(was);
    }

    @Override
    public boolean supportsOrderingKeys() {
        return true;
    }

    /** Under the store's lock, like every promotion. */
    @Override
    public boolean topicSetBehindDeadLetter(TopicOrderingCommand command) {
        Set<TopicKey> toWake = new LinkedHashSet<>();
        boolean changed;
        lock.lock();
        try {
            NamespaceState ns = namespace(command.namespace());
            changed = command.behindDeadLetter() == BehindDeadLetter.CONTINUE
                    ? ns.continueTopics.add(command.topic()) : ns.continueTopics.remove(command.topic());
            if (changed && command.behindDeadLetter() == BehindDeadLetter.CONTINUE) {
                Instant now = now(command.time());
                for (OrderingKey key : List.copyOf(keyLines.keySet())) {
                    if (key.namespace().equals(command.namespace()) && key.topic().equals(command.topic())) {
                        advance(key, now, toWake);
                    }
                }
            }
        } finally {
            lock.unlock();
        }
        wakeUps.signal(toWake);
        return changed;
    }

    @Override
    public BehindDeadLetter topicBehindDeadLetter(TopicOrderingQuery query) {
        lock.lock();
        try {
            NamespaceState ns = namespaces.get(query.namespace());
            return ns != null && ns.continueTopics.contains(query.topic()) ? BehindDeadLetter.CONTINUE : BehindDeadLetter.WAIT;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public Outcome messageSnoozeIfLeased(SnoozeCommand command) {
        TopicKey toWake;
        lock.lock();
        try {
            Msg msg = held(command.namespace(), command.lease());
            if (msg == null) {
                return Outcome.LEASE_LOST;
            }
            Instant now = now(command.time());
            Instant runAt = command.runAt() != null ? micros(command.runAt())
                    : micros(now.plus(command.delay() == null ? Duration.ZERO : command.delay()));
            stopRunning(msg);
            msg.attempts = Math.max(0, msg.attempts - 1);
            msg.runAt = runAt.isBefore(now) ? now : runAt;
            msg.topic.addPending(msg);
            toWake = new TopicKey(msg.namespace, msg.topic.name);
        } finally {
            lock.unlock();
        }
        wakeUps.signal(List.of(toWake));
        return Outcome.SNOOZED;
    }

    // ------------------------------------------------------------------------------------------ inspection

    @Override
    public NamespaceStats namespaceStats(StatsQuery query) {
        String namespace = query.namespace();
        lock.lock();
        try {
            Instant now = now(query.time());
            NamespaceState ns = namespaces.get(namespace);
            if (ns == null) {
                return new NamespaceStats(namespace, 0, 0, 0, 0, Map.of());
            }
            long pending = 0;
            long running = 0;
            long completed = 0;
            long dead = 0;
            Map<String, TopicStats> topics = new LinkedHashMap<>();
            for (TopicState topic : ns.topics.values()) {
                // a message waiting behind its ordering key counts as pending: it has not run
                topics.put(topic.name, new TopicStats(topic.name, topic.pendingCount + topic.waitingCount, topic.running,
                        topic.completed, topic.dead, topic.oldestDueAt(now)));
                pending += topic.pendingCount + topic.waitingCount;
                running += topic.running;
                completed += topic.completed;
                dead += topic.dead;
            }
            return new NamespaceStats(namespace, pending, running, completed, dead, topics);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public Optional<MessageInfo> messageFind(MessageRef message) {
        String namespace = message.namespace();
        long id = message.id();
        lock.lock();
        try {
            Msg msg = live.get(id);
            if (msg == null) {
                NamespaceState ns = namespaces.get(namespace);
                msg = ns == null ? null : ns.dead.get(id);
            }
            if (msg == null || !msg.namespace.equals(namespace)) {
                return Optional.empty();
            }
            return Optional.of(new MessageInfo(MessageId.of(msg.id), msg.namespace, msg.topic.name, msg.state, msg.json,
                    msg.headers, msg.priority, msg.attempts, msg.maxAttempts, msg.uniqueKey, msg.publishedAt, msg.runAt,
                    msg.leaseUntil, msg.worker, msg.lastError, msg.history(), msg.attemptsNotKept,
                    Optional.ofNullable(msg.orderingKey), msg.waiting));
        } finally {
            lock.unlock();
        }
    }

    @Override
    public Optional<Instant> messageNextDueAt(NextDueQuery query) {
        String namespace = query.namespace();
        List<String> topics = query.topics();
        lock.lock();
        try {
            NamespaceState ns = namespaces.get(namespace);
            if (ns == null || topics == null) {
                return Optional.empty();
            }
            Msg probe = Msg.probe(now(query.time()));
            Instant earliest = null;
            for (String name : topics) {
                TopicState topic = ns.topics.get(name);
                if (topic == null) {
                    continue;
                }
                for (TreeSet<Msg> bucket : topic.pending) {
                    Msg next = bucket.higher(probe);
                    if (next != null && (earliest == null || next.runAt.isBefore(earliest))) {
                        earliest = next.runAt;
                    }
                }
                // a rate-limited topic with an empty bucket: its next start is allowed then
                TopicLimits limits = ns.limits.get(name);
                if (limits != null) {
                    Instant now = now(query.time());
                    for (Map.Entry<String, Bucket> entry : ns.buckets.entrySet()) {
                        TopicLimits.Rate rate = entry.getKey().equals(bucketKey(name, null)) ? limits.rate().orElse(null)
                                : entry.getKey().startsWith(name + "\u0000p") ? limits.ratePerPartition().orElse(null) : null;
                        Instant token = rate == null ? null : entry.getValue().nextTokenAt(rate);
                        if (token != null && token.isAfter(now) && (earliest == null || token.isBefore(earliest))) {
                            earliest = token;
                        }
                    }
                }
            }
            return Optional.ofNullable(earliest);
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------------------------------ recording

    /** Every message stored by a publish since the store was created or last cleared, in id order. */
    public List<PublishedMessage> published() {
        lock.lock();
        try {
            return List.copyOf(published);
        } finally {
            lock.unlock();
        }
    }

    /** The recorded publishes of one namespace, in id order. */
    public List<PublishedMessage> published(String namespace) {
        return published(namespace, null);
    }

    /** The recorded publishes of one topic of a namespace ({@code topic} null: every topic), in id order. */
    public List<PublishedMessage> published(String namespace, String topic) {
        Objects.requireNonNull(namespace, "namespace");
        lock.lock();
        try {
            List<PublishedMessage> found = new ArrayList<>();
            for (PublishedMessage message : published) {
                if (message.namespace().equals(namespace) && (topic == null || message.topic().equals(topic))) {
                    found.add(message);
                }
            }
            return Collections.unmodifiableList(found);
        } finally {
            lock.unlock();
        }
    }

    /** Forgets the recorded publishes; the messages themselves stay. */
    public void clearPublished() {
        lock.lock();
        try {
            published.clear();
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------------------------------ internals

    private Instant now(CommandTime time) {
        return micros(time.resolve(clock::now));
    }

    private static Instant micros(Instant instant) {
        return instant.truncatedTo(ChronoUnit.MICROS);
    }

    private NamespaceState namespace(String name) {
        return namespaces.computeIfAbsent(name, NamespaceState::new);
    }

    /** The message when it is running under this lease in this namespace, else null. */
    private Msg held(String namespace, LeaseRef ref) {
        if (ref == null) {
            return null;
        }
        Msg msg = live.get(ref.id());
        if (msg == null || msg.state != MessageState.RUNNING || msg.leaseToken != ref.leaseToken()
                || !msg.namespace.equals(namespace)) {
            return null;
        }
        return msg;
    }

    private void startRunning(Msg msg) {
        msg.state = MessageState.RUNNING;
        msg.topic.running++;
        leases.add(msg);
    }

    /** Ends the lease of a running message: state undecided until the caller moves it on. */
    private void stopRunning(Msg msg) {
        leases.remove(msg);
        msg.topic.running--;
        msg.worker = null;
        msg.leaseToken = 0;
        msg.leaseUntil = null;
    }

    /** Takes a message out of the live set and frees its unique key. */
    private void forget(Msg msg) {
        live.remove(msg.id);
        if (msg.uniqueKey != null) {
            uniqueKeys.remove(msg.uniqueKeyRef(), msg.id);
        }
    }

    /** The attempt of a running message ended in a failure: kept in its history (the last few only, the rest counted). */
    private static void recordFailure(Msg msg, String error, Instant now, AttemptOutcome outcome) {
        msg.ended.addLast(new Attempt(msg.attempts, outcome, msg.worker, msg.attemptStartedAt, now, error));
        while (msg.ended.size() > MessageInfo.HISTORY_LIMIT) {
            msg.ended.removeFirst();
            msg.attemptsNotKept++;
        }
    }

    /** A message whose lease was stopped becomes a dead letter; its ordering key goes on unless its topic waits. */
    private void bury(Msg msg, Instant now, Set<TopicKey> toWake) {
        forget(msg);
        msg.state = MessageState.DEAD;
        msg.failedAt = now;
        msg.topic.dead++;
        namespaces.get(msg.namespace).dead.put(msg.id, msg);
        if (msg.orderingKey != null) {
            headLeft(msg, true, now, toWake);
        }
    }

    /** The head of an ordering key left (completed, cancelled or, {@code dead}, dead-lettered): the key advances. */
    private void headLeft(Msg msg, boolean dead, Instant now, Set<TopicKey> toWake) {
        OrderingKey ref = msg.orderingKeyRef();
        KeyLine line = keyLines.get(ref);
        if (line.head == msg) {
            line.head = null;
        }
        if (dead) {
            line.dead.add(msg.id);
        }
        advance(ref, now, toWake);
    }

    /**
     * When the key has no pending or running message, its first waiting one becomes pending (due now if its due time
     * passed), unless its topic waits behind dead letters and a dead letter of the key came before it.
     */
    private void advance(OrderingKey ref, Instant now, Set<TopicKey> toWake) {
        KeyLine line = keyLines.get(ref);
        if (line == null) {
            return;
        }
        if (line.head == null && !line.waiting.isEmpty()) {
            Msg next = line.waiting.firstEntry().getValue();
            boolean blocked = namespaces.get(ref.namespace()).waitsBehindDead(ref.topic())
                    && !line.dead.isEmpty() && line.dead.first() < next.id;
            if (!blocked) {
                line.waiting.remove(next.id);
                next.waiting = false;
                next.topic.waitingCount--;
                if (next.runAt.isBefore(now)) {
                    next.runAt = now;
                }
                line.head = next;
                next.topic.addPending(next);
                toWake.add(new TopicKey(next.namespace, next.topic.name));
            }
        }
        if (line.head == null && line.waiting.isEmpty() && line.dead.isEmpty()) {
            keyLines.remove(ref);
        }
    }

    private record UniqueKey(String namespace, String topic, String key) {
    }

    private record OrderingKey(String namespace, String topic, String key) {
    }

    /** One ordering key: its head (pending or running), its waiting messages and its dead letters, by id. */
    private static final class KeyLine {
        Msg head;
        final TreeMap<Long, Msg> waiting = new TreeMap<>();
        final TreeSet<Long> dead = new TreeSet<>();
    }

    private static final class NamespaceState {
        final String name;
        final TreeMap<String, TopicState> topics = new TreeMap<>();
        /** Dead letters by id, oldest first. */
        final TreeMap<Long, Msg> dead = new TreeMap<>();
        /** Paused topics, by name: claims skip them. */
        final TreeSet<String> paused = new TreeSet<>();
        /** Limited topics, by name. */
        final TreeMap<String, TopicLimits> limits = new TreeMap<>();
        /** The token buckets of rate-limited topics and their partitions, by {@link #bucketKey}. */
        final Map<String, Bucket> buckets = new HashMap<>();

        /** Topics whose ordering keys go on behind a dead letter (the others wait). */
        final Set<String> continueTopics = new HashSet<>();

        boolean waitsBehindDead(String topic) {
            return !continueTopics.contains(topic);
        }

        NamespaceState(String name) {
            this.name = name;
        }

        TopicState topic(String topic) {
            return topics.computeIfAbsent(topic, t -> new TopicState(name, t));
        }
    }

    private static final class TopicState {
        final String namespace;
        final String name;
        /** Pending messages, one set per priority, by due time then id. */
        @SuppressWarnings({"unchecked", "rawtypes"})
        final TreeSet<Msg>[] pending = new TreeSet[PRIORITIES];
        int pendingCount;
        /** Messages waiting behind the head of their ordering key (not in the pending sets). */
        int waitingCount;
        int running;
        long completed;
        int dead;

        TopicState(String namespace, String name) {
            this.namespace = namespace;
            this.name = name;
            for (int i = 0; i < PRIORITIES; i++) {
                pending[i] = new TreeSet<>(BY_DUE);
            }
        }

        /** Each priority's pending set is ordered by due time, so its first element is its oldest candidate. */
        Instant oldestDueAt(Instant now) {
            Instant oldest = null;
            for (TreeSet<Msg> byDue : pending) {
                if (!byDue.isEmpty()) {
                    Instant runAt = byDue.first().runAt;
                    if (!runAt.isAfter(now) && (oldest == null || runAt.isBefore(oldest))) {
                        oldest = runAt;
                    }
                }
            }
            return oldest;
        }

        void addPending(Msg msg) {
            msg.state = MessageState.PENDING;
            pending[msg.priority].add(msg);
            pendingCount++;
        }

        void removePending(Msg msg) {
            if (pending[msg.priority].remove(msg)) {
                pendingCount--;
            }
        }

        @Override
        public String toString() {
            return namespace + "/" + name;
        }
    }

    /** One stored message. Its fields that order a sorted set change only while it is out of that set. */
    private static final class Msg {
        final long id;
        final String namespace;
        final TopicState topic;
        final String json;
        final Map<String, String> headers;
        final int priority;
        final int maxAttempts;
        final String uniqueKey;
        final String orderingKey;
        final Instant publishedAt;

        MessageState state;
        /** Pending behind the head of its ordering key, out of the pending sets. */
        boolean waiting;
        Instant runAt;
        int attempts;
        String worker;
        long leaseToken;
        Instant leaseUntil;
        String lastError;
        Instant failedAt;
        Instant attemptStartedAt;
        /** The ended attempts kept, oldest first; a success ends none here, the message leaves. */
        final java.util.ArrayDeque<Attempt> ended = new java.util.ArrayDeque<>();
        int attemptsNotKept;

        Msg(long id, NewMessage message, TopicState topic, Instant runAt, Instant publishedAt) {
            this.id = id;
            this.namespace = message.namespace();
            this.topic = topic;
            this.json = message.json();
            this.headers = message.headers() == null ? Map.of() : Map.copyOf(message.headers());
            this.priority = message.priority();
            this.maxAttempts = message.maxAttempts();
            this.uniqueKey = message.uniqueKey();
            this.orderingKey = message.orderingKey();
            this.publishedAt = publishedAt;
            this.runAt = runAt;
            this.state = MessageState.PENDING;
        }

        /** The ended attempts kept, then the running one. */
        List<Attempt> history() {
            List<Attempt> list = new ArrayList<>(ended);
            if (state == MessageState.RUNNING) {
                list.add(new Attempt(attempts, AttemptOutcome.RUNNING, worker, attemptStartedAt, null, null));
            }
            return list;
        }

        /** Sorts after every message due at or before {@code now}: {@code set.higher(probe)} is the first due later. */
        private Msg(Instant now) {
            this.id = Long.MAX_VALUE;
            this.namespace = null;
            this.topic = null;
            this.json = null;
            this.headers = Map.of();
            this.priority = 0;
            this.maxAttempts = 0;
            this.uniqueKey = null;
            this.orderingKey = null;
            this.publishedAt = null;
            this.runAt = now;
        }

        static Msg probe(Instant now) {
            return new Msg(now);
        }

        UniqueKey uniqueKeyRef() {
            return new UniqueKey(namespace, topic.name, uniqueKey);
        }

        OrderingKey orderingKeyRef() {
            return new OrderingKey(namespace, topic.name, orderingKey);
        }

        DeadLetter toDeadLetter() {
            return new DeadLetter(MessageId.of(id), namespace, topic.name, json, headers, priority, attempts, maxAttempts,
                    lastError, publishedAt, failedAt);
        }

        @Override
        public String toString() {
            return "Msg{id=" + id + ", " + topic + ", state=" + state + ", attempts=" + attempts + '}';
        }
    }
}
