package dev.queue.domain.engine;

import dev.queue.api.InvalidInputException;
import dev.queue.api.QueueOptions;
import dev.queue.api.observation.MaintenanceEvent;
import dev.queue.domain.port.Clock;
import dev.queue.domain.port.MessageStore;
import dev.queue.domain.port.RescueCommand;
import dev.queue.domain.port.RescueResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Gives expired leases back: a message whose worker died or stalled past its lease is pending again (due now), or a
 * dead letter when that was its last attempt. Every sweep interval it rescues the namespaces this queue has opened,
 * whether or not anyone is claiming in them; a pull rescues its own namespace first (at most once per sweep
 * interval), so a puller on a manual clock sees what expired when the clock moved.
 */
final class LeaseRescuer implements MaintenanceService<LeaseRescuer.Rescued> {

    private static final Logger log = LoggerFactory.getLogger(LeaseRescuer.class);

    /**
     * @param interval  how often it rescues: the queue's sweep interval
     * @param batchSize expired leases given back per pass at most, over all namespaces
     */
    record Config(Duration interval, int batchSize) {

        static final int DEFAULT_BATCH_SIZE = 1_000;

        Config {
            MaintenanceRunner.within("sweepInterval", interval, Duration.ofMillis(10), Duration.ofHours(1), "10 ms to 1 h");
            if (batchSize < 1 || batchSize > 100_000) {
                throw new InvalidInputException("rescuer batchSize", batchSize, "1 to 100000");
            }
        }

        static Config of(QueueOptions options) {
            return new Config(options.sweepInterval(), DEFAULT_BATCH_SIZE);
        }
    }

    /** What a pass did: leases given back as pending, and as dead letters. */
    record Rescued(int requeued, int deadLettered, boolean batchFull) implements MaintenanceService.Report {

        int total() {
            return requeued + deadLettered;
        }
    }

    /**
     * Every this many passes over a namespace, one looks at every expired lease again rather than only those that
     * ended since the last pass: a lease a pass skipped because another transaction had its row locked (an
     * acknowledgement that then failed) is older than that.
     */
    static final int FULL_PASS_EVERY = 30;

    private final Config config;
    private final MessageStore store;
    /** Per namespace: the time up to which the last pass that did not fill its batch looked at every lease. */
    private final Map<String, Instant> lookedUpTo = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> passes = new ConcurrentHashMap<>();
    private final Clock time;
    private final Supplier<Collection<String>> namespaces;
    private final Consumer<String> requeuedIn;
    /** Null when none are registered. */
    private final Interceptors interceptors;

    /**
     * @param namespaces   the namespaces the queue has opened, read at each pass
     * @param requeuedIn   told of each namespace where messages became pending again, so its idle subscribers claim
     *                     them now rather than at their next sweep
     * @param interceptors told of each namespace's rescue that gave leases back; null when none are registered
     */
    LeaseRescuer(Config config, MessageStore store, Clock time, Supplier<Collection<String>> namespaces,
                 Consumer<String> requeuedIn, Interceptors interceptors) {
        this.config = config;
        this.store = store;
        this.time = time;
        this.namespaces = namespaces;
        this.requeuedIn = requeuedIn;
        this.interceptors = interceptors;
    }

    @Override
    public String name() {
        return "lease rescuer";
    }

    @Override
    public Duration interval() {
        return config.interval();
    }

    /** One batch over every opened namespace, in turn, until the batch is used up. */
    @Override
    public Rescued runOnce() {
        int left = config.batchSize();
        int requeued = 0;
        int deadLettered = 0;
        for (String namespace : namespaces.get()) {
            if (left == 0) {
                break;
            }
            RescueResult result = rescue(namespace, left);
            requeued += result.requeued();
            deadLettered += result.deadLettered();
            left -= result.total();
        }
        return new Rescued(requeued, deadLettered, left == 0);
    }

    /** One batch of one namespace: a pull's rescue. */
    Rescued runOnce(String namespace) {
        RescueResult result = rescue(namespace, config.batchSize());
        return new Rescued(result.requeued(), result.deadLettered(), result.total() >= config.batchSize());
    }

    Duration sweepInterval() {
        return config.interval();
    }

    private RescueResult rescue(String namespace, int limit) {
        // Leases that ended before the last complete pass were all looked at then. Starting there keeps a pass
        // from stepping over the index entries of every lease acknowledged since, which vacuum cannot remove while
        // an old transaction is open.
        boolean full = passes.computeIfAbsent(namespace, n -> new AtomicInteger()).getAndIncrement() % FULL_PASS_EVERY == 0;
        Instant since = full ? null : lookedUpTo.get(namespace);
        RescueResult result = store.messageRescueExpired(new RescueCommand(namespace, limit, time.commandTime(), since));
        if (result.total() < limit && result.lookedUpTo() != null) {
            lookedUpTo.put(namespace, result.lookedUpTo());
        }
        if (result.total() > 0) {
            log.info("rescued expired leases in namespace {}: {} back to pending, {} dead-lettered", namespace, result.requeued(),
                    result.deadLettered());
            if (interceptors != null) {
                interceptors.maintenance(new MaintenanceEvent.LeasesRescued(namespace, result.requeued(), result.deadLettered()));
            }
        }
        if (result.requeued() > 0) {
            requeuedIn.accept(namespace);
        }
        return result;
    }
}
