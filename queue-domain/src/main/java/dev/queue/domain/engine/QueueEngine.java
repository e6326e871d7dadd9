package dev.queue.domain.engine;

import dev.queue.api.Delivery;
import dev.queue.api.InvalidInputException;
import dev.queue.api.Message;
import dev.queue.api.Namespace;
import dev.queue.api.Outcome;
import dev.queue.api.PayloadCodec;
import dev.queue.api.PublishResult;
import dev.queue.api.Queue;
import dev.queue.api.QueueOptions;
import dev.queue.api.UnsupportedCapabilityException;
import dev.queue.domain.port.AckCommand;
import dev.queue.domain.port.Clock;
import dev.queue.domain.port.LeaseRef;
import dev.queue.domain.port.MessageStore;
import dev.queue.domain.port.PublishCommand;
import dev.queue.domain.port.ScheduleStore;
import dev.queue.domain.port.StoredOutcome;
import dev.queue.domain.port.WakeUps;
import dev.queue.domain.port.WorkerRegistry;
import dev.queue.domain.rules.InputRules;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The {@link Queue} every adapter hands out, and the composition root of the domain: it builds the collaborators
 * from an adapter's ports, each given what it uses and nothing that leads back here. Adapters build it with their
 * store, wake-ups and clock; the namespaces, subscriptions and maintenance services it builds do the work.
 */
public final class QueueEngine implements Queue {

    private static final Logger log = LoggerFactory.getLogger(QueueEngine.class);

    private final MessageStore store;
    private final WakeUps wakeUps;
    private final QueueOptions options;
    private final Runnable onClose;
    private final InputRules rules;
    private final Clock time;
    private final MessageMapping mapping;
    /** Null when none are registered: the hot paths check for null and do nothing else. */
    private final Interceptors interceptors;
    private final Subscriptions subscriptions;
    private final ScheduleFiring schedules;
    private final LeaseRescuer rescuer;
    /** Null in manual dispatch: {@link #runDue()} rescues then. Started by the first subscription. */
    private final MaintenanceRunner rescuerRunner;
    /** Null in manual dispatch, without a schedule store, or with the tick interval at zero. */
    private final MaintenanceRunner tickerRunner;
    private final Runnable schedulesChanged;
    /** Null without a worker registry or in manual dispatch. Started by the first subscription. */
    private final WorkerHeartbeat heartbeat;
    private final MaintenanceRunner heartbeatRunner;
    private final CallGate calls = new CallGate();
    private final Tuning tuning = Tuning.DEFAULTS;
    private final ConcurrentHashMap<String, NamespaceService> namespaces = new ConcurrentHashMap<>();
    private final AtomicBoolean closeStarted = new AtomicBoolean();

    private QueueEngine(Builder builder) {
        this.store = Objects.requireNonNull(builder.store, "store");
        this.wakeUps = Objects.requireNonNull(builder.wakeUps, "wakeUps");
        Clock clock = Objects.requireNonNull(builder.clock, "clock");
        this.options = builder.options;
        PayloadCodec codec = Objects.requireNonNull(builder.codec, "codec");
        this.onClose = builder.onClose;
        checkOptions(options);
        this.rules = new InputRules(options);
        this.time = clock;
        this.mapping = new MessageMapping(rules, codec, options, time, store::supportsOrderingKeys);
        this.interceptors = Interceptors.of(options.interceptors());
        this.subscriptions = new Subscriptions(builder.manualDispatch);
        this.rescuer = new LeaseRescuer(LeaseRescuer.Config.of(options), store, time, namespaces::keySet, subscriptions::wake,
                interceptors);
        this.rescuerRunner = builder.manualDispatch ? null : new MaintenanceRunner(rescuer, MaintenanceRunner.Config.DEFAULTS, clock);
        ScheduleTicker.Config tick = ScheduleTicker.Config.of(options);
        this.schedules = new ScheduleFiring(builder.scheduleStore, time, tick.batchSize(), interceptors);
        if (schedules.available() && !builder.manualDispatch && !tick.off()) {
            tickerRunner = new MaintenanceRunner(new ScheduleTicker(schedules, tick), MaintenanceRunner.Config.DEFAULTS, clock);
            tickerRunner.start();
            schedulesChanged = tickerRunner::wake;
        } else {
            tickerRunner = null;
            schedulesChanged = () -> { };
        }
        if (builder.workerRegistry != null && !builder.manualDispatch) {
            heartbeat = new WorkerHeartbeat(builder.workerRegistry, builder.heartbeatInterval, subscriptions::snapshot);
            heartbeatRunner = new MaintenanceRunner(heartbeat, MaintenanceRunner.Config.DEFAULTS, null);
        } else {
            heartbeat = null;
            heartbeatRunner = null;
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * Fails with {@link InvalidInputException} on options no queue could honour. The engine checks them when built;
     * adapters call this first, so bad options are refused before any connection is opened.
     */
    public static void checkOptions(QueueOptions options) {
        InvalidInputException.requireNonNull(options, "options", "QueueOptions, for example QueueOptions.defaults()");
        new InputRules(options).checkOptions(options);
        ScheduleTicker.Config.of(options);
        Duration closeTimeout = options.closeTimeout();
        if (closeTimeout == null || closeTimeout.isNegative() || closeTimeout.compareTo(Duration.ofHours(1)) > 0) {
            throw new InvalidInputException("closeTimeout", closeTimeout, "0 to 1 h");
        }
    }

    @Override
    public Namespace namespace(String name) {
        calls.ensureOpen();
        rules.namespace(name);
        return namespaces.computeIfAbsent(name, this::newNamespace);
    }

    private NamespaceService newNamespace(String name) {
        DeadLettersService deadLetters = new DeadLettersService(name, store, rules, calls, time, tuning.deadLetterBatch());
        SchedulesService namespaceSchedules = new SchedulesService(name, schedules, rules, calls, time, mapping, schedulesChanged);
        Runnable startMaintenance = rescuerRunner == null ? () -> { } : () -> {
            rescuerRunner.start();
            if (heartbeatRunner != null) {
                heartbeatRunner.start();
                // a new subscription shows in the registry now, not at the next interval
                heartbeatRunner.wake();
            }
        };
        SubscriberRuntime.Environment environment = new SubscriberRuntime.Environment(wakeUps, time, options, subscriptions, tuning,
                startMaintenance, interceptors);
        return new NamespaceService(name, store, rules, calls, options, time, mapping, deadLetters, namespaceSchedules, environment,
                rescuer, interceptors);
    }

    @Override
    public QueueOptions options() {
        return options;
    }

    /**
     * Runs, on the calling thread, the maintenance a threaded queue runs by itself (one batch of expired leases
     * rescued, the due schedules fired), then every handler of every subscription for messages due now, until
     * nothing subscribed is due. Only for queues built with {@link Builder#manualDispatch(boolean)}; returns how
     * many messages were handled.
     */
    public int runDue() {
        calls.ensureOpen();
        if (!subscriptions.manualDispatch()) {
            throw new UnsupportedCapabilityException("runDue()", "it needs a queue built with manualDispatch(true); this one runs "
                    + "subscribers on their own threads");
        }
        int handled = 0;
        rescuer.runOnce();
        if (schedules.available()) {
            schedules.fireDue(null);
        }
        boolean progress = true;
        while (progress) {
            progress = false;
            for (SubscriberRuntime runtime : subscriptions.snapshot()) {
                int n = runtime.drainDue();
                handled += n;
                progress |= n > 0;
            }
        }
        return handled;
    }

    /**
     * Publishes through an adapter's own statement (on a caller's connection and transaction, say) with the rules,
     * defaults and gate of {@link Namespace#publishAll}: the statement gets the validated command and answers what
     * it stored.
     */
    public List<PublishResult> publishThrough(String namespace, List<Message> messages,
                                              Function<PublishCommand, List<StoredOutcome>> statement) {
        return calls.call(() -> {
            if (interceptors == null) {
                return publishThrough(namespace, messages, statement, null);
            }
            rules.namespace(namespace);
            Interceptors.PublishCall observed = interceptors.publishStarting(namespace, messages, true);
            return publishThrough(namespace, observed.messages(), statement, observed);
        });
    }

    private List<PublishResult> publishThrough(String namespace, List<Message> messages,
                                               Function<PublishCommand, List<StoredOutcome>> statement, Interceptors.PublishCall observed) {
        List<PublishResult> results;
        try {
            PublishCommand command = mapping.preparePublish(namespace, messages);
            results = command.messages().isEmpty() ? List.of() : MessageMapping.toResults(command, statement.apply(command));
        } catch (RuntimeException e) {
            if (observed != null) {
                observed.failed(e);
            }
            throw e;
        }
        if (observed != null) {
            observed.published(results);
        }
        return results;
    }

    /**
     * Completes a delivery through an adapter's own statement, guarded as {@link Namespace#ack} is: the statement
     * gets the command and answers the ids it completed. {@link Outcome#LEASE_LOST} when the delivery is not held
     * in that namespace (nothing is run then).
     */
    public Outcome ackThrough(String namespace, Delivery delivery, Function<AckCommand, Set<Long>> statement) {
        rules.namespace(namespace);
        InvalidInputException.requireNonNull(delivery, "delivery", "a delivery returned by pull or given to a handler");
        return calls.call(() -> {
            if (!namespace.equals(delivery.namespace())) {
                return Outcome.LEASE_LOST;
            }
            LeaseRef lease = NamespaceService.leaseOf(delivery);
            Set<Long> done = statement.apply(new AckCommand(namespace, List.of(lease), time.commandTime()));
            return done.contains(lease.id()) ? Outcome.ACKED : Outcome.LEASE_LOST;
        });
    }

    public boolean isClosed() {
        return calls.isClosed();
    }

    /**
     * Runs one call of an adapter's own public API through the same gate as the queue's: refused once the queue
     * is closed, waited for by {@link #close()} while it runs.
     */
    public <T> T call(Supplier<T> body) {
        return calls.call(body);
    }

    /**
     * Refuses new calls, waits up to {@link QueueOptions#closeTimeout()} for the calls already running, then
     * closes every subscription (each waits for its handlers) and lets the adapter release its resources.
     */
    @Override
    public void close() {
        if (!closeStarted.compareAndSet(false, true)) {
            return;
        }
        if (!calls.closeAndAwait(options.closeTimeout())) {
            log.warn("closing the queue with {} calls still running after {}; each fails with QueueClosedException if the"
                    + " store goes away under it", calls.callsInside(), options.closeTimeout());
        }
        if (tickerRunner != null) {
            tickerRunner.stop();
        }
        if (rescuerRunner != null) {
            rescuerRunner.stop();
        }
        boolean registered = heartbeatRunner != null && heartbeatRunner.isRunning();
        if (heartbeatRunner != null) {
            heartbeatRunner.stop();
        }
        subscriptions.snapshot().forEach(SubscriberRuntime::close);
        if (registered) {
            heartbeat.remove();
        }
        if (onClose != null) {
            onClose.run();
        }
    }

    /** Assembles an engine from an adapter's parts. */
    public static final class Builder {
        private MessageStore store;
        private WakeUps wakeUps;
        private Clock clock;
        private QueueOptions options = QueueOptions.defaults();
        private PayloadCodec codec;
        private boolean manualDispatch;
        private Runnable onClose;
        private ScheduleStore scheduleStore;
        private WorkerRegistry workerRegistry;
        private Duration heartbeatInterval = WorkerHeartbeat.DEFAULT_INTERVAL;

        private Builder() {
        }

        /**
         * Where the queue heartbeats while anything subscribes (not in manual dispatch); without one it does not
         * register itself.
         */
        public Builder workerRegistry(WorkerRegistry value) {
            this.workerRegistry = value;
            return this;
        }

        /** The pause between heartbeats, 100 ms to 1 h; 5 s by default. */
        public Builder heartbeatInterval(Duration value) {
            this.heartbeatInterval = WorkerHeartbeat.checkInterval(value);
            return this;
        }

        public Builder store(MessageStore value) {
            this.store = value;
            return this;
        }

        public Builder wakeUps(WakeUps value) {
            this.wakeUps = value;
            return this;
        }

        /** Durable schedules; without one, {@code schedules()} is unsupported. */
        public Builder scheduleStore(ScheduleStore value) {
            this.scheduleStore = value;
            return this;
        }

        public Builder clock(Clock value) {
            this.clock = value;
            return this;
        }

        public Builder options(QueueOptions value) {
            this.options = value;
            return this;
        }

        /** Used when the options name no codec. */
        public Builder defaultCodec(PayloadCodec value) {
            this.codec = value;
            return this;
        }

        /** True: subscriptions start no threads; {@link QueueEngine#runDue()} runs their handlers. */
        public Builder manualDispatch(boolean value) {
            this.manualDispatch = value;
            return this;
        }

        /** Runs once when the engine closes, after its subscriptions: the adapter releases its resources here. */
        public Builder onClose(Runnable value) {
            this.onClose = value;
            return this;
        }

        public QueueEngine build() {
            if (options != null && options.codec() != null) {
                codec = options.codec();
            }
            return new QueueEngine(this);
        }
    }
}
