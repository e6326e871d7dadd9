package dev.queue.domain.engine;

import dev.queue.api.Backoff;
import dev.queue.api.DeadLetters;
import dev.queue.api.Delivery;
import dev.queue.api.FlowControl;
import dev.queue.api.InvalidInputException;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.MessageInfo;
import dev.queue.api.Namespace;
import dev.queue.api.NamespaceStats;
import dev.queue.api.Outcome;
import dev.queue.api.PayloadCodec;
import dev.queue.api.PublishResult;
import dev.queue.api.Pull;
import dev.queue.api.QueueOptions;
import dev.queue.api.Schedules;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import dev.queue.domain.port.AckCommand;
import dev.queue.domain.port.ClaimCommand;
import dev.queue.domain.port.ClaimedMessage;
import dev.queue.domain.port.Clock;
import dev.queue.domain.port.CommandTime;
import dev.queue.domain.port.DeadLetterCommand;
import dev.queue.domain.port.ExtendCommand;
import dev.queue.domain.port.HeadSweepCommand;
import dev.queue.domain.port.LeaseRef;
import dev.queue.domain.port.MessageRef;
import dev.queue.domain.port.MessageStore;
import dev.queue.domain.port.NextDueQuery;
import dev.queue.domain.port.PublishCommand;
import dev.queue.domain.port.ReleaseCommand;
import dev.queue.domain.port.RetryCommand;
import dev.queue.domain.port.SnoozeCommand;
import dev.queue.domain.port.StatsQuery;
import dev.queue.domain.rules.InputRules;
import dev.queue.domain.rules.Lifecycle;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/** One namespace's operations: validation first, then one store call. */
final class NamespaceService implements Namespace {

    private final String name;
    private final MessageStore store;
    private final InputRules rules;
    private final CallGate calls;
    private final QueueOptions options;
    private final Clock time;
    private final MessageMapping mapping;
    private final DeadLettersService deadLetters;
    private final SchedulesService schedules;
    private final FlowControlService flowControl;
    private final SubscriberRuntime.Environment subscriberEnvironment;
    private final LeaseRescuer rescuer;
    /** Null when none are registered. */
    private final Interceptors interceptors;
    /** Wall-clock nanos of the last rescue by a pull, so pulls rescue at most once per sweep interval. */
    private final AtomicLong lastRescueNanos = new AtomicLong(Long.MIN_VALUE);
    private volatile Instant lastRescueClock;

    NamespaceService(String name, MessageStore store, InputRules rules, CallGate calls, QueueOptions options, Clock time,
                     MessageMapping mapping, DeadLettersService deadLetters, SchedulesService schedules,
                     SubscriberRuntime.Environment subscriberEnvironment, LeaseRescuer rescuer, Interceptors interceptors) {
        this.name = name;
        this.store = store;
        this.rules = rules;
        this.calls = calls;
        this.options = options;
        this.time = time;
        this.mapping = mapping;
        this.deadLetters = deadLetters;
        this.schedules = schedules;
        this.flowControl = new FlowControlService(name, store, rules, calls, time, subscriberEnvironment.subscriptions());
        this.subscriberEnvironment = subscriberEnvironment;
        this.rescuer = rescuer;
        this.interceptors = interceptors;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public MessageId publish(String topic, Object payload) {
        return publish(Message.to(topic).payload(payload)).id();
    }

    @Override
    public PublishResult publish(Message message) {
        return publishAll(java.util.Collections.singletonList(message)).get(0);
    }

    @Override
    public List<PublishResult> publishAll(List<Message> messages) {
        return calls.call(() -> interceptors == null ? store(messages) : storeObserved(messages));
    }

    private List<PublishResult> store(List<Message> messages) {
        PublishCommand command = mapping.preparePublish(name, messages);
        if (command.messages().isEmpty()) {
            return List.of();
        }
        return MessageMapping.toResults(command, store.messageInsertMany(command));
    }

    private List<PublishResult> storeObserved(List<Message> messages) {
        Interceptors.PublishCall observed = interceptors.publishStarting(name, messages, false);
        List<PublishResult> results;
        try {
            results = store(observed.messages());
        } catch (RuntimeException e) {
            observed.failed(e);
            throw e;
        }
        observed.published(results);
        return results;
    }

    @Override
    public List<Delivery> pull(Pull pull) {
        return calls.call(() -> {
            if (pull == null) {
                throw new InvalidInputException("pull", null, "a Pull");
            }
            rules.topics(pull.topics());
            String worker = pull.worker() != null ? pull.worker() : WorkerNames.defaultWorker();
            rules.worker(worker);
            rules.limit(pull.limit());
            rules.lease("visibility", pull.visibility());
            rescueIfDue();
            return claim(pull.topics(), worker, pull.limit(), pull.visibility());
        });
    }

    List<Delivery> claim(List<String> topics, String worker, int limit, Duration lease) {
        return claim(topics, worker, limit, lease, null);
    }

    /** A claim that resumes where the cursor left off (from the head when it says so, or when it is null). */
    List<Delivery> claim(List<String> topics, String worker, int limit, Duration lease, ClaimCursor cursor) {
        long token = newLeaseToken();
        ClaimCursor.Next next = cursor == null ? ClaimCursor.Next.fromHead(topics)
                : cursor.next(topics, sweepTopics -> store.topicTakeHeadSweeps(new HeadSweepCommand(name,
                        List.copyOf(sweepTopics), cursor.sweepGap(), time.commandTime())));
        long started = System.nanoTime();
        List<ClaimedMessage> claimed = store.messageClaimDue(new ClaimCommand(name, next.topics(), worker, limit, lease,
                token, time.commandTime(), next.after(), next.behind()));
        if (cursor != null) {
            cursor.advance(claimed, limit, System.nanoTime() - started);
        }
        List<Delivery> deliveries = new ArrayList<>(claimed.size());
        for (ClaimedMessage message : claimed) {
            deliveries.add(mapping.toDelivery(message));
        }
        return deliveries;
    }

    /**
     * Rescues expired leases of this namespace before a pull if no pull did within the sweep interval (of both
     * clocks): the rescuer's own passes run on the machine's time, and a test that moves a manual clock past a lease
     * expects its next pull to see the message again.
     */
    private void rescueIfDue() {
        long nowNanos = System.nanoTime();
        long last = lastRescueNanos.get();
        Duration sweep = options.sweepInterval();
        Instant clockNow = time.now();
        Instant lastClock = lastRescueClock;
        boolean wallDue = last == Long.MIN_VALUE || nowNanos - last >= sweep.toNanos();
        boolean clockDue = lastClock == null || !clockNow.isBefore(lastClock.plus(sweep));
        if (!(wallDue || clockDue) || !lastRescueNanos.compareAndSet(last, nowNanos)) {
            return;
        }
        lastRescueClock = clockNow;
        rescuer.runOnce(name);
    }

    @Override
    public Outcome ack(Delivery delivery) {
        requireDelivery(delivery);
        return calls.call(() -> settle(delivery, new Lifecycle.Succeeded(), options.backoffFor(delivery.topic())));
    }

    @Override
    public Map<MessageId, Outcome> ackAll(Collection<Delivery> deliveries) {
        return calls.call(() -> ackEach(deliveries));
    }

    private Map<MessageId, Outcome> ackEach(Collection<Delivery> deliveries) {
        if (deliveries == null) {
            throw new InvalidInputException("deliveries", null, "a collection of deliveries");
        }
        if (deliveries.size() > InputRules.MAX_PUBLISH_BATCH) {
            throw new InvalidInputException("deliveries", deliveries.size() + " deliveries",
                    "at most " + InputRules.MAX_PUBLISH_BATCH + " per call");
        }
        List<LeaseRef> leases = new ArrayList<>(deliveries.size());
        Map<MessageId, Outcome> outcomes = new LinkedHashMap<>();
        for (Delivery delivery : deliveries) {
            requireDelivery(delivery);
            outcomes.put(delivery.id(), Outcome.LEASE_LOST);
            if (isOurs(delivery)) {
                leases.add(leaseOf(delivery));
            }
        }
        if (!leases.isEmpty()) {
            for (Long id : ackLeases(leases)) {
                outcomes.put(MessageId.of(id), Outcome.ACKED);
            }
        }
        return outcomes;
    }

    @Override
    public Outcome nack(Delivery delivery, String error) {
        requireDelivery(delivery);
        return calls.call(() -> settle(delivery, new Lifecycle.RetryAsked(error, null), options.backoffFor(delivery.topic())));
    }

    @Override
    public Outcome nack(Delivery delivery, String error, Duration delay) {
        requireDelivery(delivery);
        rules.delay("delay", delay);
        return calls.call(() -> settle(delivery, new Lifecycle.RetryAsked(error, delay), options.backoffFor(delivery.topic())));
    }

    @Override
    public Outcome snooze(Delivery delivery, Duration delay) {
        requireDelivery(delivery);
        rules.delay("delay", delay);
        return calls.call(() -> carryOut(delivery, Lifecycle.decide(new Lifecycle.SnoozeAsked(delay, null), delivery.attempt(),
                delivery.maxAttempts(), options.backoffFor(delivery.topic()), ThreadLocalRandom.current()::nextDouble)));
    }

    @Override
    public Outcome fail(Delivery delivery, String error) {
        requireDelivery(delivery);
        return calls.call(() -> settle(delivery, new Lifecycle.DeadLetterAsked(error), options.backoffFor(delivery.topic())));
    }

    private Outcome settle(Delivery delivery, Lifecycle.Result result, Backoff backoff) {
        return carryOut(delivery, Lifecycle.decide(result, delivery.attempt(), delivery.maxAttempts(), backoff,
                ThreadLocalRandom.current()::nextDouble));
    }

    /**
     * Has the store carry out a decision under the delivery's lease; the subscriber runtime's path too, open while
     * the queue closes. LEASE_LOST when the delivery is not held (any more) under that lease in this namespace.
     */
    Outcome carryOut(Delivery delivery, Lifecycle.Decision decision) {
        if (!isOurs(delivery)) {
            return Outcome.LEASE_LOST;
        }
        LeaseRef lease = leaseOf(delivery);
        CommandTime now = time.commandTime();
        if (decision instanceof Lifecycle.Ack) {
            return ackLeases(List.of(lease)).contains(lease.id()) ? Outcome.ACKED : Outcome.LEASE_LOST;
        }
        if (decision instanceof Lifecycle.Retry retry) {
            return store.messageRetryIfLeased(new RetryCommand(name, lease, retry.delay(), InputRules.errorText(retry.error()), now));
        }
        if (decision instanceof Lifecycle.DeadLetter deadLetter) {
            return store.messageDeadLetterIfLeased(new DeadLetterCommand(name, lease, InputRules.errorText(deadLetter.error()), now));
        }
        if (decision instanceof Lifecycle.Snooze snooze) {
            return store.messageSnoozeIfLeased(new SnoozeCommand(name, lease, snooze.delay(), snooze.until(), now));
        }
        return releaseLeases(List.of(lease)).contains(lease.id()) ? Outcome.RELEASED : Outcome.LEASE_LOST;
    }

    @Override
    public Outcome extend(Delivery delivery, Duration duration) {
        requireDelivery(delivery);
        rules.lease("duration", duration);
        if (!isOurs(delivery)) {
            return Outcome.LEASE_LOST;
        }
        return calls.call(() -> extendLeases(List.of(leaseOf(delivery)), duration).contains(delivery.id().value())
                ? Outcome.EXTENDED : Outcome.LEASE_LOST);
    }

    /** The leases of these running handlers extended by {@code lease}: the ids still held. The runtime's path. */
    Set<Long> extendLeases(List<LeaseRef> leases, Duration lease) {
        return store.messageExtendIfLeased(new ExtendCommand(name, leases, lease, time.commandTime()));
    }

    /** Messages claimed but never started, given back: the ids released. The runtime's path. */
    Set<Long> releaseLeases(List<LeaseRef> leases) {
        return store.messageReleaseIfLeased(new ReleaseCommand(name, leases, time.commandTime()));
    }

    /** Acknowledgements recorded in one call: the ids completed. The acknowledgement batcher's path. */
    Set<Long> ackLeases(List<LeaseRef> leases) {
        return store.messageAckIfLeased(new AckCommand(name, leases, time.commandTime()));
    }

    /** The earliest due time among pending messages of these topics not due yet, so an idle subscriber sleeps until then. */
    Optional<Instant> nextDueAt(List<String> topics) {
        return store.messageNextDueAt(new NextDueQuery(name, topics, time.commandTime()));
    }

    @Override
    public Subscription subscribe(Subscriber<?> subscriber) {
        return calls.call(() -> start(subscriber));
    }

    private Subscription start(Subscriber<?> subscriber) {
        String worker = subscriber == null || subscriber.worker() == null ? WorkerNames.defaultWorker() : subscriber.worker();
        rules.subscriber(subscriber, worker);
        SubscriberRuntime runtime = new SubscriberRuntime(this, subscriberEnvironment, subscriber, worker);
        runtime.start();
        return runtime;
    }

    @Override
    public DeadLetters deadLetters() {
        return deadLetters;
    }

    @Override
    public FlowControl flowControl() {
        return flowControl;
    }

    @Override
    public Schedules schedules() {
        return schedules;
    }

    @Override
    public NamespaceStats stats() {
        return calls.call(() -> store.namespaceStats(new StatsQuery(name, time.commandTime())));
    }

    @Override
    public Optional<MessageInfo> inspect(MessageId id) {
        if (id == null) {
            throw new InvalidInputException("id", null, "a message id");
        }
        return calls.call(() -> store.messageFind(new MessageRef(name, id.value())));
    }

    @Override
    public PayloadCodec codec() {
        return mapping.codec();
    }

    private void requireDelivery(Delivery delivery) {
        calls.ensureOpen();
        if (delivery == null) {
            throw new InvalidInputException("delivery", null, "a delivery returned by pull or given to a handler");
        }
    }

    private boolean isOurs(Delivery delivery) {
        return name.equals(delivery.namespace());
    }

    static LeaseRef leaseOf(Delivery delivery) {
        return new LeaseRef(delivery.id().value(), delivery.leaseToken());
    }

    /** Random, never zero, so a forgotten token can never match a real lease by accident. */
    private static long newLeaseToken() {
        long token;
        do {
            token = ThreadLocalRandom.current().nextLong();
        } while (token == 0L);
        return token;
    }

    @Override
    public String toString() {
        return "Namespace[" + name + "]";
    }
}
