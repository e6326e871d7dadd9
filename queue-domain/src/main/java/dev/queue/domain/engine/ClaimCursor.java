package dev.queue.domain.engine;

import dev.queue.domain.port.ClaimPosition;
import dev.queue.domain.port.ClaimedMessage;
import dev.queue.domain.port.Clock;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Where a dispatcher's claims left off in each topic's claim order. Claims resume there rather than at the head:
 * while a long transaction holds back vacuum, the head of the claim order is a growing run of entries of messages
 * claimed long ago, which every claim from the head would step over again. Messages can still turn up behind a
 * position: concurrent publishes commit out of the order of their ids, a publish's transaction may commit late, a
 * due time may be set in the past, a row another claim had locked may be let go. Two rules find them:
 * <ul>
 *   <li>A claim that came back short is followed by one from the head, which finds what turned up behind, as long
 *   as claims from the head cost about what resumed ones do (or, before any claim resumed, at most a couple of
 *   milliseconds: a subscriber that is never behind only makes short claims). When one took far longer (the head is
 *   a run of old entries), short claims resume too, from a quarter of a sweep interval (in due time) before the
 *   position: that finds the publishes that committed a little out of order, which is what turns up behind most
 *   often, at the cost of a bounded stretch of the claim order rather than all of it since the horizon was
 *   pinned. That lasts until a later look from the head is cheap again.</li>
 *   <li>Every half sweep interval (and whenever a manual clock moved by that much or back) the dispatcher asks the
 *   store for the sweep behind its positions; the store hands it to one claimer of the fleet at a time, at least
 *   three quarters of an interval apart, and that claimer's next claim looks from the head up to its position
 *   and no further (claiming from the topics before it in the subscription's order as usual, and from none after) (one statement reading on past it, while a slow look behind lasted, found every row the others
 *   claimed meanwhile still pending and tried each); the claim after it resumes. So a message behind every position waits at most about one sweep interval, and the fleet
 *   pays for one such look per topic and interval rather than one per claimer. When looks behind are slow (a held
 *   horizon), the gap grows to {@link #SWEEP_SPACING} times the last one's duration.</li>
 * </ul>
 * One case is frequent enough for a rule of its own: an ordering key's next message is promoted with its old id and
 * the promotion's time as its due time, and another promotion that committed first, due later, may have been
 * claimed already. The store says where promotions landed ({@link #rewind}); the next claim resumes from just
 * before the earliest. A rewind to a due time older than a sweep interval is ignored: the sweep covers that, and a
 * forged notice (anyone who may notify can send one) must not turn every claim into a look from the head.
 * Dispatcher thread only, but for {@link #rewind} and {@link #limited}.
 */
final class ClaimCursor {

    /** A look from the head this much slower than resumed claims (and at least {@link #EXPENSIVE_FLOOR}) is expensive. */
    private static final int EXPENSIVE_FACTOR = 4;
    private static final long EXPENSIVE_FLOOR = Duration.ofMillis(2).toNanos();
    /**
     * The fleet's sweeps of a topic start at least this many times the duration of this claimer's last one apart.
     * While a held horizon makes a look behind step over every entry since it was pinned, a look lasts longer than
     * the interval, and the claimers took the next one as soon as the last ended: every claimer spent most of its
     * time looking behind, and throughput fell back towards what it was before positions.
     */
    private static final int SWEEP_SPACING = 5;

    /**
     * What the next claim resumes after, the topic where it looks behind the position instead, and the topics it
     * claims from: all of the subscription's, or when it looks behind one, those up to that one (a later topic's
     * messages must not come before those after the position of an earlier one, which this claim leaves out).
     * {@code after} is the cursor's own map, not a copy: the claim command copies it.
     */
    record Next(Map<String, ClaimPosition> after, Set<String> behind, List<String> topics) {

        static Next fromHead(List<String> topics) {
            return new Next(Map.of(), Set.of(), topics);
        }
    }

    private final Duration headEvery;
    private final Clock clock;
    private final Map<String, ClaimPosition> positions = new HashMap<>();
    private long lastAskNanos;
    private Instant lastAskClock;
    private boolean lastClaimFull;
    private boolean looksBehind;
    /** Whether the last claim looked behind a position only (the fleet's sweep): it said nothing of what lies after. */
    private boolean lookedBehindOnly;
    private long resumedNanos = -1;
    /** How long this claimer's last look behind a position (the fleet's sweep) took. */
    private long lastSweepNanos;
    private boolean headExpensive;
    private final Set<String> sweepsTaken = new LinkedHashSet<>();
    /** Where promotions landed since the last claim, per topic: the earliest; written by any thread. */
    private final Map<String, ClaimPosition> rewinds = new ConcurrentHashMap<>();
    /** Topics whose last claimed messages came from under limits; read by handler threads. */
    private volatile Set<String> limitedTopics = Set.of();

    ClaimCursor(Duration headEvery, Clock clock) {
        this.headEvery = headEvery;
        this.clock = clock;
    }

    /**
     * The minimum gap between two sweeps of a topic behind the positions, fleet-wide: three quarters of a sweep
     * interval, or {@link #SWEEP_SPACING} times as long as this claimer's last look behind took, whichever is longer.
     * Looks then take at most about a fifth of one claimer's time, and a message behind every position waits for
     * the longer gap.
     */
    Duration sweepGap() {
        Duration gap = headEvery.multipliedBy(3).dividedBy(4);
        Duration spaced = Duration.ofNanos(lastSweepNanos).multipliedBy(SWEEP_SPACING);
        return spaced.compareTo(gap) > 0 ? spaced : gap;
    }

    /**
     * The next claim over {@code topics} (in the subscription's order). {@code takeSweeps} asks the store which of the
     * given topics' looks behind this claimer takes; it is called at most once per half sweep interval. Looks taken
     * for several topics run one per claim.
     */
    Next next(List<String> topics, Function<Set<String>, Set<String>> takeSweeps) {
        if (!rewinds.isEmpty()) {
            applyRewinds();
        }
        lookedBehindOnly = false;
        if (positions.isEmpty() || (!lastClaimFull && !headExpensive)) {
            looksBehind = true;
            return Next.fromHead(topics);
        }
        long nowNanos = System.nanoTime();
        Instant clockNow = clock.now();
        Duration half = headEvery.dividedBy(2);
        boolean askDue = lastAskClock == null
                || nowNanos - lastAskNanos >= half.toNanos()
                || clockNow.isBefore(lastAskClock)
                || !clockNow.isBefore(lastAskClock.plus(half));
        if (askDue) {
            lastAskNanos = nowNanos;
            lastAskClock = clockNow;
            sweepsTaken.addAll(takeSweeps.apply(Set.copyOf(positions.keySet())));
        }
        for (int i = 0; i < topics.size(); i++) {
            String topic = topics.get(i);
            if (sweepsTaken.remove(topic) && positions.containsKey(topic)) {
                looksBehind = true;
                lookedBehindOnly = true;
                return new Next(positions, Set.of(topic), List.copyOf(topics.subList(0, i + 1)));
            }
        }
        sweepsTaken.clear();
        looksBehind = false;
        return new Next(lastClaimFull ? positions : lookingBack(), Set.of(), topics);
    }

    /** The positions moved back by the look-back: where a short claim resumes while the head is expensive. */
    private Map<String, ClaimPosition> lookingBack() {
        Duration lookBack = headEvery.dividedBy(4);
        Map<String, ClaimPosition> earlier = new HashMap<>(positions.size() * 2);
        positions.forEach((topic, position) -> earlier.put(topic,
                new ClaimPosition(position.priority(), position.runAt().minus(lookBack), 0)));
        return earlier;
    }

    /**
     * Notes that a message became pending at {@code position} of the topic's claim order (any thread): if the
     * topic's position is past it, the next claim resumes from just before it. False, and nothing noted, when it is
     * due longer than a sweep interval ago: that is the sweep's business.
     */
    boolean rewind(String topic, ClaimPosition position) {
        if (position.runAt().isBefore(clock.now().minus(headEvery))) {
            return false;
        }
        rewinds.merge(topic, position, (old, now) -> now.compareTo(old) < 0 ? now : old);
        return true;
    }

    private void applyRewinds() {
        for (String topic : Set.copyOf(rewinds.keySet())) {
            ClaimPosition earliest = rewinds.remove(topic);
            ClaimPosition current = positions.get(topic);
            if (earliest != null && current != null && earliest.compareTo(current) <= 0) {
                positions.put(topic, new ClaimPosition(earliest.priority(), earliest.runAt(), earliest.id() - 1));
            }
        }
    }

    /**
     * Moves each topic's position to the furthest message claimed in it (a look behind never moves one back), notes
     * whether the claim filled up, and, from how long the claim took against resumed ones, whether looking from the
     * head is expensive now.
     */
    void advance(List<ClaimedMessage> claimed, int asked, long tookNanos) {
        lastClaimFull = claimed.size() >= asked;
        if (lookedBehindOnly) {
            lastSweepNanos = tookNanos;
        }
        boolean anyLimited = false;
        Set<String> limited = null;
        for (ClaimedMessage message : claimed) {
            ClaimPosition position = message.position();
            if (position != null) {
                positions.merge(message.topic(), position, (old, now) -> now.compareTo(old) > 0 ? now : old);
            }
            if (message.limited() != limitedTopics.contains(message.topic())) {
                limited = limited == null ? new HashSet<>(limitedTopics) : limited;
                if (message.limited()) {
                    limited.add(message.topic());
                } else {
                    limited.remove(message.topic());
                }
            }
            anyLimited |= message.limited();
        }
        if (limited != null) {
            limitedTopics = Set.copyOf(limited);
        }
        if (anyLimited || !limitedTopics.isEmpty()) {
            // A claim of a topic with a running limit may wait for the topic's other claims (they run one at a time
            // unless the limit is alone and uses slots) and stops short at the limit rather than at the end of the
            // pending messages: neither says what a look
            // from the head costs. (Its topic is read from the head anyway: the store ignores positions under such
            // limits.) A rate's claims are not told apart: one that waited for the bucket can at worst make the head
            // look expensive, which costs a short claim a look a little behind its position instead.
            return;
        }
        if (looksBehind) {
            headExpensive = tookNanos > Math.max(EXPENSIVE_FLOOR, resumedNanos < 0 ? 0 : EXPENSIVE_FACTOR * resumedNanos);
        } else {
            resumedNanos = resumedNanos < 0 ? tookNanos : (resumedNanos * 7 + tookNanos) / 8;
        }
    }

    /**
     * Whether the topic's messages came from under limits at the last claim that returned any: settling one frees
     * room, so the subscription's claimers (held back, perhaps) should look again. Any thread.
     */
    boolean limited(String topic) {
        return limitedTopics.contains(topic);
    }

    /**
     * Whether the last claim was the fleet's look behind a position, which reads no further than the position (and
     * no topic after it): coming back short, it does not mean that nothing else is due, and the next claim should
     * follow at once rather than after a sleep.
     */
    boolean lookedBehindOnly() {
        return lookedBehindOnly;
    }

    /** Whether short claims resume rather than look from the head (the last look from the head was expensive). */
    boolean headExpensive() {
        return headExpensive;
    }
}
