package dev.queue.api;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The limits of one topic, for the whole fleet (docs/flow-control.md, "Limits"): how many of its messages may run at
 * once, in the topic and per partition, and how many may start per period, in the topic and per partition. A
 * partition is a group of the topic's messages named by a {@link Partition}: the value of a header, or the
 * message's ordering key.
 *
 * <p>Immutable; each {@code with...} method returns a copy, refusing a null with {@link InvalidInputException}. The
 * values are checked when the limits are set ({@link FlowControl#setLimits}), which refuses a bad one with
 * {@link InvalidInputException}:
 * <ul>
 *   <li>running limits 1 to {@value #MAX_RUNNING}, start counts 1 to {@value #MAX_STARTS}, periods 1 ms to 1 day;</li>
 *   <li>a per-partition limit needs a partition, and a partition needs a per-partition limit;</li>
 *   <li>a header partition names a header, an ordering-key partition names nothing;</li>
 *   <li>at least one limit ({@link FlowControl#clearLimits} removes them all).</li>
 * </ul>
 *
 * <pre>{@code
 * TopicLimits.none().withMaxRunning(50)
 *         .partitionedBy(TopicLimits.Partition.header("customer")).withMaxRunningPerPartition(2)
 *         .withRate(10, Duration.ofSeconds(1));
 * }</pre>
 */
public final class TopicLimits {

    /** The largest running limit, in the topic or per partition. */
    public static final int MAX_RUNNING = 100_000;
    /** The largest number of starts per period. */
    public static final int MAX_STARTS = 1_000_000;
    /** The shortest rate period. */
    public static final Duration MIN_PERIOD = Duration.ofMillis(1);
    /** The longest rate period. */
    public static final Duration MAX_PERIOD = Duration.ofDays(1);

    private static final TopicLimits NONE = new TopicLimits(null, null, null, null, null);

    /**
     * What divides a topic's messages into partitions for per-partition limits.
     *
     * @param kind what the partition is taken from
     * @param name the header's name for {@link Kind#HEADER}; null for {@link Kind#ORDERING_KEY}
     */
    public record Partition(Kind kind, String name) {

        /** Where a message's partition comes from. */
        public enum Kind {
            /** The value of a header; messages without it form the partition of the empty value. */
            HEADER,
            /** The message's ordering key; messages without a key form the partition of the empty value. */
            ORDERING_KEY
        }

        /**
         * Partitions by the value of a header; messages without the header share one partition (the empty value).
         *
         * @param name the header's name
         * @return the partition
         */
        public static Partition header(String name) {
            return new Partition(Kind.HEADER, InvalidInputException.requireNonNull(name, "name", "a header name"));
        }

        /**
         * Partitions by the message's ordering key ({@link Message#orderingKey(String)}); messages without a key share
         * one partition (the empty value, which no key can be).
         *
         * <p>A key runs one message at a time anyway (docs/flow-control.md, "Ordering keys"), so a per-partition
         * running limit bounds only the messages without a key, which all share one partition. What this partition
         * is for is a rate per key: with the customer as ordering key, {@code withRatePerPartition(10,
         * Duration.ofSeconds(1))} allows at most 10 starts a second per customer, each customer's messages still in
         * their order.
         *
         * @return the partition
         */
        public static Partition orderingKey() {
            return new Partition(Kind.ORDERING_KEY, null);
        }
    }

    /**
     * A rate: at most {@code starts} starts per {@code period}, with bursts of up to {@code starts} after a quiet
     * period (a token bucket of that size, refilled continuously).
     *
     * @param starts the number of starts allowed per period
     * @param period the period
     */
    public record Rate(int starts, Duration period) {
    }

    private final Integer maxRunning;
    private final Partition partition;
    private final Integer maxRunningPerPartition;
    private final Rate rate;
    private final Rate ratePerPartition;

    private TopicLimits(Integer maxRunning, Partition partition, Integer maxRunningPerPartition, Rate rate,
                        Rate ratePerPartition) {
        this.maxRunning = maxRunning;
        this.partition = partition;
        this.maxRunningPerPartition = maxRunningPerPartition;
        this.rate = rate;
        this.ratePerPartition = ratePerPartition;
    }

    /**
     * No limit at all: the start to add limits to.
     *
     * @return limits without any limit
     */
    public static TopicLimits none() {
        return NONE;
    }

    /**
     * At most {@code count} messages of the topic running at once, fleet-wide.
     *
     * @param count 1 to {@value #MAX_RUNNING}
     * @return a copy with that limit
     */
    public TopicLimits withMaxRunning(int count) {
        return new TopicLimits(count, partition, maxRunningPerPartition, rate, ratePerPartition);
    }

    /**
     * The partitions of the per-partition limits.
     *
     * @param by the partition, for example {@link Partition#header(String)}
     * @return a copy with that partition
     */
    public TopicLimits partitionedBy(Partition by) {
        InvalidInputException.requireNonNull(by, "partition", "a partition, such as Partition.header(name)");
        return new TopicLimits(maxRunning, by, maxRunningPerPartition, rate, ratePerPartition);
    }

    /**
     * At most {@code count} messages of each partition running at once, fleet-wide.
     *
     * @param count 1 to {@value #MAX_RUNNING}
     * @return a copy with that limit
     */
    public TopicLimits withMaxRunningPerPartition(int count) {
        return new TopicLimits(maxRunning, partition, count, rate, ratePerPartition);
    }

    /**
     * At most {@code starts} starts of the topic's messages per {@code period}, fleet-wide.
     *
     * @param starts 1 to {@value #MAX_STARTS}
     * @param period 1 ms to 1 day
     * @return a copy with that rate
     */
    public TopicLimits withRate(int starts, Duration period) {
        InvalidInputException.requireNonNull(period, "period", "a period of 1 ms to 1 day");
        return new TopicLimits(maxRunning, partition, maxRunningPerPartition, new Rate(starts, period), ratePerPartition);
    }

    /**
     * At most {@code starts} starts per {@code period} in each partition, fleet-wide.
     *
     * @param starts 1 to {@value #MAX_STARTS}
     * @param period 1 ms to 1 day
     * @return a copy with that rate
     */
    public TopicLimits withRatePerPartition(int starts, Duration period) {
        InvalidInputException.requireNonNull(period, "period", "a period of 1 ms to 1 day");
        return new TopicLimits(maxRunning, partition, maxRunningPerPartition, rate, new Rate(starts, period));
    }

    /**
     * The running limit of the topic.
     *
     * @return the limit, empty without one
     */
    public OptionalInt maxRunning() {
        return maxRunning == null ? OptionalInt.empty() : OptionalInt.of(maxRunning);
    }

    /**
     * The partition of the per-partition limits.
     *
     * @return the partition, empty without per-partition limits
     */
    public Optional<Partition> partition() {
        return Optional.ofNullable(partition);
    }

    /**
     * The running limit of each partition.
     *
     * @return the limit, empty without one
     */
    public OptionalInt maxRunningPerPartition() {
        return maxRunningPerPartition == null ? OptionalInt.empty() : OptionalInt.of(maxRunningPerPartition);
    }

    /**
     * The rate of the topic.
     *
     * @return the rate, empty without one
     */
    public Optional<Rate> rate() {
        return Optional.ofNullable(rate);
    }

    /**
     * The rate of each partition.
     *
     * @return the rate, empty without one
     */
    public Optional<Rate> ratePerPartition() {
        return Optional.ofNullable(ratePerPartition);
    }

    /**
     * Whether no limit is set.
     *
     * @return true for {@link #none()} and copies without any limit
     */
    public boolean isNone() {
        return maxRunning == null && maxRunningPerPartition == null && rate == null && ratePerPartition == null;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TopicLimits other
                && Objects.equals(maxRunning, other.maxRunning)
                && Objects.equals(partition, other.partition)
                && Objects.equals(maxRunningPerPartition, other.maxRunningPerPartition)
                && Objects.equals(rate, other.rate)
                && Objects.equals(ratePerPartition, other.ratePerPartition);
    }

    @Override
    public int hashCode() {
        return Objects.hash(maxRunning, partition, maxRunningPerPartition, rate, ratePerPartition);
    }

    @Override
    public String toString() {
        StringBuilder text = new StringBuilder("TopicLimits[");
        String sep = "";
        if (maxRunning != null) {
            text.append("maxRunning=").append(maxRunning);
            sep = ", ";
        }
        if (partition != null) {
            text.append(sep).append("partition=").append(partition.kind() == null ? "null"
                    : partition.kind().name().toLowerCase(java.util.Locale.ROOT));
            if (partition.name() != null) {
                text.append(':').append(partition.name());
            }
            sep = ", ";
        }
        if (maxRunningPerPartition != null) {
            text.append(sep).append("maxRunningPerPartition=").append(maxRunningPerPartition);
            sep = ", ";
        }
        if (rate != null) {
            text.append(sep).append("rate=").append(rate.starts()).append('/').append(rate.period());
            sep = ", ";
        }
        if (ratePerPartition != null) {
            text.append(sep).append("ratePerPartition=").append(ratePerPartition.starts()).append('/')
                    .append(ratePerPartition.period());
        }
        return text.append(']').toString();
    }
}
