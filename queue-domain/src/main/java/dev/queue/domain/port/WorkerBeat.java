package dev.queue.domain.port;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * One heartbeat of a queue process.
 *
 * @param processId     unique per queue instance (several queues in one JVM are several processes here)
 * @param host          the host name, as operators know the machine
 * @param pid           the operating system's process id
 * @param startedAt     when the queue started
 * @param version       the library version, null when unknown (classes not from a jar)
 * @param interval      the time to the next beat: a registry shows the process gone when beats stop for longer
 * @param subscriptions what the process runs, one entry per subscription
 */
public record WorkerBeat(String processId, String host, long pid, Instant startedAt, String version, Duration interval,
                         List<SubscriptionBeat> subscriptions) {

    public WorkerBeat {
        Objects.requireNonNull(processId, "processId");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(startedAt, "startedAt");
        Objects.requireNonNull(interval, "interval");
        subscriptions = List.copyOf(subscriptions);
    }

    /** Sum of the subscriptions' concurrency. */
    public int concurrency() {
        return subscriptions.stream().mapToInt(SubscriptionBeat::concurrency).sum();
    }

    /** Sum of the handlers running now. */
    public int inFlight() {
        return subscriptions.stream().mapToInt(SubscriptionBeat::inFlight).sum();
    }

    /**
     * One subscription of the process.
     *
     * @param worker the worker name its claims carry (a message's lease holder)
     */
    public record SubscriptionBeat(String namespace, List<String> topics, String worker, int concurrency, int inFlight) {

        public SubscriptionBeat {
            Objects.requireNonNull(namespace, "namespace");
            topics = List.copyOf(topics);
            Objects.requireNonNull(worker, "worker");
        }
    }
}
