package dev.queue.micrometer;

import dev.queue.api.InvalidInputException;
import dev.queue.api.Message;
import dev.queue.api.Namespace;
import dev.queue.api.NamespaceStats;
import dev.queue.api.PublishResult;
import dev.queue.api.TopicStats;
import dev.queue.api.observation.HandleEnd;
import dev.queue.api.observation.HandleObservation;
import dev.queue.api.observation.HandleOutcome;
import dev.queue.api.observation.HandleStart;
import dev.queue.api.observation.MaintenanceEvent;
import dev.queue.api.observation.PublishEvent;
import dev.queue.api.observation.PublishObservation;
import dev.queue.api.observation.QueueInterceptor;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A queue's metrics in a Micrometer registry. Register it as an interceptor for the counters and timers of what this
 * process publishes and handles, and {@link #watch} namespaces for per-topic gauges of what the store holds:
 *
 * <pre>{@code
 * QueueMetrics metrics = new QueueMetrics(registry);
 * Queue queue = InMemoryQueue.create(QueueOptions.defaults().interceptor(metrics));
 * metrics.watch(queue.namespace("shop")).refreshStatsEvery(Duration.ofSeconds(15));
 * }</pre>
 *
 * The gauges read values cached by the last stats refresh: one stats query per watched namespace and refresh,
 * however many topics there are and however often the registry is scraped.
 */
public final class QueueMetrics implements QueueInterceptor, AutoCloseable {

    private static final System.Logger LOG = System.getLogger(QueueMetrics.class.getName());

    static final String PUBLISHED = "queue.messages.published";
    static final String DUPLICATES = "queue.messages.duplicates";
    static final String PUBLISH_FAILURES = "queue.publish.failures";
    static final String HANDLED = "queue.messages.handled";
    static final String HANDLER_DURATION = "queue.handler.duration";
    static final String PUBLISH_TO_START = "queue.publish.to.start";
    static final String IN_FLIGHT = "queue.messages.in.flight";
    static final String RESCUED = "queue.leases.rescued";
    static final String SCHEDULES_FIRED = "queue.schedules.fired";
    static final String PENDING = "queue.messages.pending";
    static final String RUNNING = "queue.messages.running";
    static final String DEAD = "queue.messages.dead";
    static final String OLDEST_DUE_AGE = "queue.messages.oldest.due.age";

    private static final HandleOutcome[] OUTCOMES = HandleOutcome.values();

    private final MeterRegistry registry;
    /** Per namespace, per topic: the meters this process updates, built on first use. */
    private final Map<String, Map<String, TopicMeters>> meters = new ConcurrentHashMap<>();
    /** Per namespace, per topic: the stats the gauges show, as last read. */
    private final Map<String, Map<String, TopicGauges>> gauges = new ConcurrentHashMap<>();
    private final List<Namespace> watched = new CopyOnWriteArrayList<>();
    private final PublishCounter publishCounter = new PublishCounter();
    private ScheduledExecutorService refresher;
    private ScheduledFuture<?> refresh;

    /**
     * Metrics registered in {@code registry}; meters are created on first use, per namespace and topic.
     *
     * @param registry where the meters go
     * @throws InvalidInputException when {@code registry} is null
     */
    public QueueMetrics(MeterRegistry registry) {
        this.registry = InvalidInputException.requireNonNull(registry, "registry", "a MeterRegistry");
    }

    // ------------------------------------------------------------------ interceptor

    @Override
    public PublishObservation onPublish(PublishEvent publish) {
        return publishCounter;
    }

    /** Counts what each publish stored and what was a duplicate, per topic; everything it needs comes with the call. */
    private final class PublishCounter implements PublishObservation {
        @Override
        public void published(PublishEvent event, List<PublishResult> results) {
            List<Message> messages = event.messages();
            for (int i = 0; i < results.size(); i++) {
                TopicMeters topic = meters(event.namespace(), messages.get(i).topic());
                if (results.get(i) instanceof PublishResult.Duplicate) {
                    topic.duplicates.increment();
                } else {
                    topic.published.increment();
                }
            }
        }

        @Override
        public void failed(PublishEvent event, RuntimeException error) {
            Counter.builder(PUBLISH_FAILURES)
                    .description("Publish calls that stored nothing: a message broke a rule or the store failed")
                    .tags("namespace", event.namespace(), "exception", error.getClass().getSimpleName())
                    .register(registry).increment();
        }
    }

    @Override
    public HandleObservation onHandle(HandleStart start) {
        TopicMeters topic = meters(start.namespace(), start.topic());
        (start.attempt() <= 1 ? topic.firstStart : topic.retryStart).record(start.sincePublished());
        topic.inFlight.incrementAndGet();
        return new HandlerRun(topic);
    }

    /** One handler run: leaves the in-flight count when the handler returns, counts its outcome once recorded. */
    private static final class HandlerRun implements HandleObservation {
        private final TopicMeters topic;

        HandlerRun(TopicMeters topic) {
            this.topic = topic;
        }

        @Override
        public void handlerFinished(Duration duration, Throwable failure) {
            topic.inFlight.decrementAndGet();
        }

        @Override
        public void ended(HandleEnd end) {
            int outcome = end.outcome().ordinal();
            topic.handled[outcome].increment();
            topic.handlerDuration[outcome].record(end.handlerDuration());
        }
    }

    @Override
    public void onMaintenance(MaintenanceEvent event) {
        if (event instanceof MaintenanceEvent.LeasesRescued rescued) {
            rescuedCounter(rescued.namespace(), "requeued").increment(rescued.requeued());
            rescuedCounter(rescued.namespace(), "dead_lettered").increment(rescued.deadLettered());
        } else if (event instanceof MaintenanceEvent.ScheduleFired fired) {
            Counter.builder(SCHEDULES_FIRED)
                    .description("Due times of schedules fired (each publishes one message unless its unique key is held)")
                    .tags("namespace", fired.namespace(), "schedule", fired.schedule())
                    .register(registry).increment();
        }
    }

    private Counter rescuedCounter(String namespace, String outcome) {
        return Counter.builder(RESCUED)
                .description("Expired leases given back: pending again (requeued) or out of attempts (dead_lettered)")
                .tags("namespace", namespace, "outcome", outcome)
                .register(registry);
    }

    private TopicMeters meters(String namespace, String topic) {
        return meters.computeIfAbsent(namespace, n -> new ConcurrentHashMap<>())
                .computeIfAbsent(topic, t -> new TopicMeters(registry, namespace, t));
    }

    /** The meters of one topic, looked up once so a message costs no tag building or registry lookup. */
    private static final class TopicMeters {
        final Counter published;
        final Counter duplicates;
        final Timer firstStart;
        final Timer retryStart;
        final AtomicInteger inFlight = new AtomicInteger();
        final Counter[] handled = new Counter[OUTCOMES.length];
        final Timer[] handlerDuration = new Timer[OUTCOMES.length];

        TopicMeters(MeterRegistry registry, String namespace, String topic) {
            Tags tags = Tags.of("namespace", namespace, "topic", topic);
            published = Counter.builder(PUBLISHED).description("Messages stored by publish calls of this process")
                    .tags(tags).register(registry);
            duplicates = Counter.builder(DUPLICATES)
                    .description("Messages not stored because a message with the same unique key was pending or running")
                    .tags(tags).register(registry);
            firstStart = publishToStart(registry, tags, "first");
            retryStart = publishToStart(registry, tags, "retry");
            Gauge.builder(IN_FLIGHT, inFlight, AtomicInteger::get).description("Handlers of this process running now")
                    .tags(tags).register(registry);
            for (HandleOutcome outcome : OUTCOMES) {
                Tags withOutcome = tags.and("outcome", outcome.name().toLowerCase(Locale.ROOT));
                handled[outcome.ordinal()] = Counter.builder(HANDLED)
                        .description("Handler runs of this process, by what became of the message")
                        .tags(withOutcome).register(registry);
                handlerDuration[outcome.ordinal()] = Timer.builder(HANDLER_DURATION)
                        .description("How long handlers ran, by what became of the message")
                        .tags(withOutcome).register(registry);
            }
        }

        private static Timer publishToStart(MeterRegistry registry, Tags tags, String attempt) {
            return Timer.builder(PUBLISH_TO_START)
                    .description("From a message's publish to the start of a handler run; retries include their backoff")
                    .tags(tags.and("attempt", attempt)).register(registry);
        }
    }

    // ------------------------------------------------------------------ stats gauges

    /**
     * Adds a namespace whose per-topic stats the gauges show, from the next refresh on.
     *
     * @param namespace the namespace to watch
     * @return this, for chaining
     * @throws InvalidInputException when {@code namespace} is null
     */
    public QueueMetrics watch(Namespace namespace) {
        watched.add(InvalidInputException.requireNonNull(namespace, "namespace", "a Namespace, for example queue.namespace(\"shop\")"));
        return this;
    }

    /**
     * Reads the stats of every watched namespace now, one query each, and updates the gauges. A namespace whose
     * stats cannot be read keeps its last values and is logged; the others are still read.
     */
    public void refreshStats() {
        for (Namespace namespace : watched) {
            NamespaceStats stats;
            try {
                stats = namespace.stats();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "could not read the stats of namespace " + namespace.name()
                        + " for its gauges; they keep their last values: " + e);
                continue;
            }
            Map<String, TopicGauges> topics = gauges.computeIfAbsent(stats.namespace(), n -> new ConcurrentHashMap<>());
            for (TopicStats topic : stats.topics().values()) {
                topics.computeIfAbsent(topic.topic(), t -> new TopicGauges(registry, stats.namespace(), t)).stats = topic;
            }
        }
    }

    /**
     * Refreshes the stats every {@code interval} on a daemon thread of its own, starting now; called again, the new
     * interval replaces the old.
     *
     * @param interval 1 s to 1 h
     * @return this, for chaining
     * @throws InvalidInputException when {@code interval} is null or out of range
     */
    public synchronized QueueMetrics refreshStatsEvery(Duration interval) {
        if (interval == null || interval.compareTo(Duration.ofSeconds(1)) < 0 || interval.compareTo(Duration.ofHours(1)) > 0) {
            throw new InvalidInputException("interval", interval, "1 s to 1 h");
        }
        if (refresher == null) {
            refresher = Executors.newSingleThreadScheduledExecutor(runnable -> {
                Thread thread = new Thread(runnable, "queue-metrics-stats");
                thread.setDaemon(true);
                return thread;
            });
        }
        if (refresh != null) {
            refresh.cancel(false);
        }
        refresh = refresher.scheduleWithFixedDelay(this::refreshQuietly, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
        return this;
    }

    /** A scheduled task that throws is never run again; this one logs and goes on. */
    private void refreshQuietly() {
        try {
            refreshStats();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "stats refresh for the queue's gauges failed: " + e);
        }
    }

    /** Stops the scheduled refresh; the meters stay registered. */
    @Override
    public synchronized void close() {
        if (refresher != null) {
            refresher.shutdownNow();
            refresher = null;
            refresh = null;
        }
    }

    /** The gauges of one topic, reading the stats it was last given. */
    private final class TopicGauges {
        volatile TopicStats stats;

        TopicGauges(MeterRegistry registry, String namespace, String topic) {
            Tags tags = Tags.of("namespace", namespace, "topic", topic);
            Gauge.builder(PENDING, this, g -> g.stats.pending())
                    .description("Messages waiting, due or not (delayed, or in a retry's backoff), at the last stats refresh")
                    .tags(tags).register(registry);
            Gauge.builder(RUNNING, this, g -> g.stats.running())
                    .description("Messages leased to a worker of any process, at the last stats refresh")
                    .tags(tags).register(registry);
            Gauge.builder(DEAD, this, g -> g.stats.dead()).description("Dead letters, at the last stats refresh")
                    .tags(tags).register(registry);
            TimeGauge.builder(OLDEST_DUE_AGE, this, TimeUnit.SECONDS, g -> g.oldestDueAgeSeconds())
                    .description("How long the longest-waiting due message has waited, now, by the registry's clock; 0 when none"
                            + " was due at the last stats refresh")
                    .tags(tags).register(registry);
        }

        private double oldestDueAgeSeconds() {
            Instant now = Instant.ofEpochMilli(registry.config().clock().wallTime());
            return stats.oldestDueAge(now).toNanos() / 1e9;
        }
    }
}
