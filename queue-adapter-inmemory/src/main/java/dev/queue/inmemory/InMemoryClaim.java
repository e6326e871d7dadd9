package dev.queue.inmemory;

import dev.queue.api.TopicLimits;
import dev.queue.domain.port.ClaimCommand;
import dev.queue.domain.port.ClaimedMessage;
import dev.queue.domain.port.NextDueQuery;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;

import static dev.queue.inmemory.InMemoryState.micros;
import static dev.queue.inmemory.NamespaceState.bucketKey;
import static dev.queue.inmemory.TopicState.PRIORITIES;

/**
 * The claim of {@link InMemoryMessageStore}: takes due messages in claim order, within the limits and rates of their
 * topic, and tells an idle subscriber when the next claim can take one (the next due time, or the next token of a
 * rate). The in-memory side of PostgreSQL's claim and next due time.
 */
final class InMemoryClaim {

    private final InMemoryState state;

    InMemoryClaim(InMemoryState state) {
        this.state = state;
    }

    List<ClaimedMessage> messageClaimDue(ClaimCommand command) {
        Duration lease = Objects.requireNonNull(command.lease(), "lease");
        if (command.limit() <= 0 || command.topics() == null || command.topics().isEmpty()) {
            return List.of();
        }
        state.lock.lock();
        try {
            NamespaceState ns = state.namespaces.get(command.namespace());
            if (ns == null) {
                return List.of();
            }
            Instant now = state.now(command.time());
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
                        state.startRunning(msg);
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
            state.lock.unlock();
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
        TokenBucket topicBucket = null;
        double topicTokens = 0;
        if (limits.rate().isPresent()) {
            topicBucket = ns.buckets.computeIfAbsent(bucketKey(topic.name, null), k -> new TokenBucket());
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
            for (Msg msg : state.leases) {
                if (msg.topic == topic) {
                    runningByPartition.merge(partition(msg, partitionBy), 1, Integer::sum);
                }
            }
        }
        Map<String, Double> partitionTokens = new HashMap<>();
        Map<String, Integer> takenByPartition = new HashMap<>();
        int scan = scanBound(partitionBy, room);
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
                        new TokenBucket()).tokensAt(now, limits.ratePerPartition().get()));
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
            state.startRunning(msg);
            claimed.add(new ClaimedMessage(msg.id, msg.namespace, topic.name, msg.json, msg.headers, msg.priority,
                    msg.attempts, msg.maxAttempts, msg.leaseToken, msg.worker, msg.leaseUntil, msg.publishedAt, msg.runAt,
                    msg.orderingKey, freesRoom));
        }
        if (topicBucket != null) {
            topicBucket.spend(now, topicTokens, picked.size());
        }
        if (limits.ratePerPartition().isPresent()) {
            takenByPartition.forEach((part, taken) -> ns.buckets.computeIfAbsent(bucketKey(topic.name, part),
                    k -> new TokenBucket()).spend(now, partitionTokens.get(part), taken));
        }
    }

    /**
     * How many due candidates a claim from a limited topic looks at, at most: its room when the topic has no
     * partitions; with partitions, a wider bound, so candidates of full partitions can be stepped over.
     *
     * <p>The same rule as PostgreSQL's claim: {@code v_scan} in {@code db/queue/R__claim.sql} of
     * queue-adapter-postgres. Change the two together.
     */
    static int scanBound(TopicLimits.Partition partitionBy, int room) {
        return partitionBy == null ? room : Math.max(1000, 20 * room);
    }

    /** The message's partition: its header's value or its ordering key, the empty value without one. */
    private static String partition(Msg msg, TopicLimits.Partition by) {
        if (by == null) {
            return "";
        }
        String value = by.kind() == TopicLimits.Partition.Kind.ORDERING_KEY ? msg.orderingKey : msg.headers.get(by.name());
        return value == null ? "" : value;
    }

    Optional<Instant> messageNextDueAt(NextDueQuery query) {
        String namespace = query.namespace();
        List<String> topics = query.topics();
        state.lock.lock();
        try {
            NamespaceState ns = state.namespaces.get(namespace);
            if (ns == null || topics == null) {
                return Optional.empty();
            }
            Msg probe = Msg.probe(state.now(query.time()));
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
                    Instant now = state.now(query.time());
                    for (Map.Entry<String, TokenBucket> entry : ns.buckets.entrySet()) {
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
            state.lock.unlock();
        }
    }
}
