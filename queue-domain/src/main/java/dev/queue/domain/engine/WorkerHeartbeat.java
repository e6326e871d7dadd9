package dev.queue.domain.engine;

import dev.queue.domain.port.WorkerBeat;
import dev.queue.domain.port.WorkerRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Tells the {@link WorkerRegistry} every interval that this queue process is alive and what it subscribes, with
 * each subscription's concurrency and handlers in flight. One small write per pass; the registry's reader decides
 * when missing beats mean gone. {@link #remove()} runs when the queue closes.
 */
final class WorkerHeartbeat implements MaintenanceService<WorkerHeartbeat.Beat> {

    private static final Logger log = LoggerFactory.getLogger(WorkerHeartbeat.class);
    private static final AtomicInteger SEQUENCE = new AtomicInteger();

    /** The default pause between beats: a gone process shows within three of them. */
    static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(5);

    /** What a pass did: the number of subscriptions it reported. */
    record Beat(int subscriptions) implements MaintenanceService.Report {

        @Override
        public boolean batchFull() {
            return false;
        }
    }

    private final WorkerRegistry registry;
    private final Duration interval;
    private final Supplier<List<SubscriberRuntime>> subscriptions;
    private final int sequence = SEQUENCE.incrementAndGet();
    /** Looked up by the first pass, on the heartbeat's thread: a slow name lookup must not delay building a queue. */
    private volatile String host;
    private final long pid;
    private final Instant startedAt;
    private final String version;

    WorkerHeartbeat(WorkerRegistry registry, Duration interval, Supplier<List<SubscriberRuntime>> subscriptions) {
        this.registry = registry;
        this.interval = checkInterval(interval);
        this.subscriptions = subscriptions;
        this.pid = ProcessHandle.current().pid();
        this.startedAt = Instant.now();
        this.version = WorkerHeartbeat.class.getPackage().getImplementationVersion();
    }

    static Duration checkInterval(Duration interval) {
        return MaintenanceRunner.within("heartbeatInterval", interval, Duration.ofMillis(100), Duration.ofHours(1), "100 ms to 1 h");
    }

    /** host-pid-n: several queues in one JVM each heartbeat, and the sequence keeps their entries apart. */
    String processId() {
        return host() + "-" + pid + "-" + sequence;
    }

    private String host() {
        String known = host;
        if (known == null) {
            known = hostName();
            host = known;
        }
        return known;
    }

    @Override
    public String name() {
        return "worker heartbeat " + pid + "-" + sequence;
    }

    @Override
    public Duration interval() {
        return interval;
    }

    @Override
    public Beat runOnce() {
        List<WorkerBeat.SubscriptionBeat> beats = subscriptions.get().stream()
                .filter(SubscriberRuntime::isRunning)
                .map(s -> new WorkerBeat.SubscriptionBeat(s.namespaceName(), s.topics(), s.worker(), s.concurrency(), s.inFlight()))
                .toList();
        registry.heartbeat(new WorkerBeat(processId(), host(), pid, startedAt, version, interval, beats));
        return new Beat(beats.size());
    }

    /** The queue stopped: its entry goes now rather than showing as gone. A failure is logged, the entry ages out. */
    void remove() {
        try {
            registry.remove(processId());
        } catch (RuntimeException e) {
            log.warn("{}: could not remove the worker entry, it shows as gone until removed: {}", name(), e.toString());
        }
    }

    private static String hostName() {
        String host = System.getenv("HOSTNAME");
        if (host == null || host.isBlank()) {
            try {
                host = InetAddress.getLocalHost().getHostName();
            } catch (java.io.IOException | SecurityException e) {
                host = "host";
            }
        }
        StringBuilder clean = new StringBuilder();
        for (char c : host.strip().toCharArray()) {
            clean.append(Character.isISOControl(c) ? '_' : c);
        }
        return clean.length() > 100 ? clean.substring(0, 100) : clean.toString();
    }
}
