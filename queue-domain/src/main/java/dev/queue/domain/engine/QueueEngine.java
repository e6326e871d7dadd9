package dev.queue.domain.engine;

import dev.queue.api.Delivery;
import dev.queue.api.InvalidInputException;
import dev.queue.api.InvalidPayloadException;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.Namespace;
import dev.queue.api.PublishResult;
import dev.queue.domain.port.ClaimedMessage;
import dev.queue.domain.port.NewMessage;
import dev.queue.domain.port.PublishCommand;
import dev.queue.domain.port.ScheduleStore;
import dev.queue.domain.port.StoredOutcome;
import dev.queue.api.PayloadCodec;
import dev.queue.api.Queue;
import dev.queue.api.QueueOptions;
import dev.queue.domain.port.Clock;
import dev.queue.domain.port.MessageStore;
import dev.queue.domain.port.WakeUps;
import dev.queue.domain.rules.InputRules;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Map;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * The {@link Queue} every adapter hands out: the application services over the ports. Adapters build it with
 * their store, wake-ups and clock; it does validation, backoff, dead-lettering decisions and runs subscribers.
 */
public final class QueueEngine implements Queue {

    private static final Logger log = LoggerFactory.getLogger(QueueEngine.class);

    private final MessageStore store;
    private final WakeUps wakeUps;
    private final Clock clock;
    private final QueueOptions options;
    private final PayloadCodec codec;
    private final boolean manualDispatch;
    private final Runnable onClose;
    private final ScheduleStore scheduleStore;
    private final ScheduleTicker ticker;
    private final InputRules rules;
    private final ConcurrentHashMap<String, NamespaceService> namespaces = new ConcurrentHashMap<>();
    private final CopyOnWriteArrayList<SubscriberRuntime> runtimes = new CopyOnWriteArrayList<>();
    private final AtomicBoolean closeStarted = new AtomicBoolean();
    private final CallGate calls = new CallGate();

    private QueueEngine(Builder builder) {
        this.store = Objects.requireNonNull(builder.store, "store");
        this.wakeUps = Objects.requireNonNull(builder.wakeUps, "wakeUps");
        this.clock = Objects.requireNonNull(builder.clock, "clock");
        this.options = builder.options;
        this.codec = Objects.requireNonNull(builder.codec, "codec");
        this.manualDispatch = builder.manualDispatch;
        this.onClose = builder.onClose;
        checkOptions(options);
        this.rules = new InputRules(options);
        this.scheduleStore = builder.scheduleStore;
        Duration tick = options.scheduleTickInterval();
        if (scheduleStore != null && !manualDispatch && !tick.isZero()) {
            ticker = new ScheduleTicker(this, tick);
            ticker.start();
        } else {
            ticker = null;
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
        Duration tick = options.scheduleTickInterval();
        if (tick == null || tick.isNegative() || tick.compareTo(Duration.ofHours(1)) > 0) {
            throw new InvalidInputException("scheduleTickInterval", tick, "0 (off) to 1 h");
        }
        Duration closeTimeout = options.closeTimeout();
        if (closeTimeout == null || closeTimeout.isNegative() || closeTimeout.compareTo(Duration.ofHours(1)) > 0) {
            throw new InvalidInputException("closeTimeout", closeTimeout, "0 to 1 h");
        }
    }

    @Override
    public Namespace namespace(String name) {
        ensureOpen();
        rules.namespace(name);
        return namespaces.computeIfAbsent(name, n -> new NamespaceService(n, this));
    }

    @Override
    public QueueOptions options() {
        return options;
    }

    /**
     * Runs, on the calling thread, every handler of every subscription for messages due now, until nothing
     * subscribed is due. Only for queues built with {@link Builder#manualDispatch(boolean)}; returns how many
     * messages were handled.
     */
    public int runDue() {
        ensureOpen();
        if (!manualDispatch) {
            throw new IllegalStateException("runDue() needs a queue built with manualDispatch(true); this one runs subscribers on their own threads");
        }
        int handled = 0;
        if (scheduleStore != null) {
            SchedulesService.fireDue(this, null);
        }
        boolean progress = true;
        while (progress) {
            progress = false;
            for (SubscriberRuntime runtime : runtimes) {
                int n = runtime.drainDue();
                handled += n;
                progress |= n > 0;
            }
        }
        return handled;
    }

    /**
     * Validates and encodes messages for a namespace into one store command, applying defaults. Throws
     * {@link InvalidInputException} for the first bad message, before anything is stored.
     * Public so adapters can publish on a caller's transaction with the same rules.
     */
    public PublishCommand preparePublish(String namespace, List<Message> messages) {
        rules.namespace(namespace);
        rules.publishBatch(messages);
        List<NewMessage> prepared = new ArrayList<>(messages.size());
        for (int index = 0; index < messages.size(); index++) {
            prepared.add(prepare(namespace, messages.get(index)));
        }
        return new PublishCommand(List.copyOf(prepared), commandTime());
    }

    private NewMessage prepare(String namespace, Message message) {
        if (message == null) {
            throw new InvalidInputException("message", null, "a Message, for example Message.to(\"topic\").payload(...)");
        }
        rules.topic(message.topic());
        String json;
        if (message.payloadIsJson()) {
            json = (String) message.payload();
        } else {
            try {
                json = codec.encode(message.payload());
            } catch (RuntimeException e) {
                throw new InvalidPayloadException(message.payload() == null ? null : message.payload().getClass().getName(),
                        "an object the codec can write as JSON (" + e.getMessage() + ")");
            }
        }
        rules.payloadJson(json);
        rules.headers(message.headers());
        int priority = message.priority() != null ? message.priority() : Message.DEFAULT_PRIORITY;
        rules.priority(priority);
        int maxAttempts = message.maxAttempts() != null ? message.maxAttempts() : options.defaultMaxAttempts();
        rules.maxAttempts(maxAttempts);
        rules.uniqueKey(message.uniqueKey());
        Duration delay = Duration.ZERO;
        if (message.delay() != null) {
            rules.delay("delay", message.delay());
            delay = message.delay();
        }
        Instant runAt = message.runAt();
        if (runAt != null) {
            rules.runAt(runAt);
            runAt = runAt.truncatedTo(ChronoUnit.MICROS);
        }
        delay = Duration.ofNanos(delay.toNanos() / 1000 * 1000);
        return new NewMessage(namespace, message.topic(), json, Map.copyOf(message.headers()), priority, maxAttempts,
                message.uniqueKey(), runAt, delay);
    }

    /** Pairs what the store did with what was asked, in order. */
    public static List<PublishResult> toResults(PublishCommand command, List<StoredOutcome> stored) {
        if (stored.size() != command.messages().size()) {
            throw new IllegalStateException("the store answered " + stored.size() + " outcomes for " + command.messages().size() + " messages");
        }
        List<PublishResult> results = new ArrayList<>(stored.size());
        for (int i = 0; i < stored.size(); i++) {
            StoredOutcome outcome = stored.get(i);
            MessageId id = MessageId.of(outcome.id());
            results.add(outcome.duplicate()
                    ? new PublishResult.Duplicate(id, command.messages().get(i).uniqueKey())
                    : new PublishResult.Published(id));
        }
        return results;
    }

    /** The API's view of a claimed message. */
    public Delivery toDelivery(ClaimedMessage m) {
        return new Delivery(MessageId.of(m.id()), m.namespace(), m.topic(), m.json(), m.headers(), m.priority(), m.attempt(),
                m.maxAttempts(), m.leaseToken(), m.worker(), m.leaseUntil(), m.publishedAt(), codec);
    }

    /** The time store commands carry: the clock's when it is authoritative, else null (the store decides). */
    Instant commandTime() {
        return clock.isAuthoritative() ? clock.now() : null;
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
        if (ticker != null) {
            ticker.stop();
        }
        List<SubscriberRuntime> toClose = new ArrayList<>(runtimes);
        toClose.forEach(SubscriberRuntime::close);
        if (onClose != null) {
            onClose.run();
        }
    }

    void ensureOpen() {
        calls.ensureOpen();
    }

    CallGate calls() {
        return calls;
    }

    MessageStore store() {
        return store;
    }

    WakeUps wakeUps() {
        return wakeUps;
    }

    Clock clock() {
        return clock;
    }

    PayloadCodec codec() {
        return codec;
    }

    /** The schedule store; fails clearly for an adapter built without one. */
    ScheduleStore scheduleStore() {
        if (scheduleStore == null) {
            throw new UnsupportedOperationException("this queue was built without a schedule store");
        }
        return scheduleStore;
    }

    void schedulesChanged() {
        if (ticker != null) {
            ticker.wake();
        }
    }

    InputRules rules() {
        return rules;
    }

    boolean manualDispatch() {
        return manualDispatch;
    }

    void register(SubscriberRuntime runtime) {
        runtimes.add(runtime);
    }

    void unregister(SubscriberRuntime runtime) {
        runtimes.remove(runtime);
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

        private Builder() {
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
