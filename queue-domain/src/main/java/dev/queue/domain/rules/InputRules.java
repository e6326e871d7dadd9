package dev.queue.domain.rules;

import dev.queue.api.Backoff;
import dev.queue.api.InvalidInputException;
import dev.queue.api.InvalidNameException;
import dev.queue.api.InvalidPayloadException;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.api.TopicLimits;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Every rule an input must satisfy before anything is stored. Each check throws an
 * {@link InvalidInputException} that names the argument, the value received and what was expected, so a
 * caller never has to guess; checks run before any write, so a rejected call changes nothing.
 */
public final class InputRules {

    public static final int MAX_NAME_LENGTH = 64;
    public static final int MAX_WORKER_LENGTH = 128;
    public static final int MAX_UNIQUE_KEY_LENGTH = 255;
    public static final int MAX_HEADERS = 32;
    public static final int MAX_HEADER_VALUE_LENGTH = 1024;
    public static final int MIN_PRIORITY = 0;
    public static final int MAX_PRIORITY = 9;
    public static final int MAX_MAX_ATTEMPTS = 1000;
    public static final Duration MAX_DELAY = Duration.ofDays(365);
    public static final Duration MIN_LEASE = Duration.ofSeconds(1);
    public static final Duration MAX_LEASE = Duration.ofHours(24);
    public static final int MAX_PULL_LIMIT = 1000;
    public static final int MAX_CONCURRENCY = 1000;
    public static final int MAX_TOPICS_PER_PULL = 64;
    public static final int MAX_PUBLISH_BATCH = 10_000;
    public static final int MAX_ERROR_LENGTH = 8000;
    public static final int MAX_PAYLOAD_LIMIT = 64 * 1024 * 1024;
    /** Header names starting with this (in any case) are the queue's own, set on the messages it publishes. */
    public static final String RESERVED_HEADER_PREFIX = "queue-";

    /** The name rule as a pattern; {@link #isName} checks the same by hand, and a test holds the two together. */
    static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0," + (MAX_NAME_LENGTH - 1) + "}");
    private static final String NAME_RULE = "1 to " + MAX_NAME_LENGTH
            + " characters: letters, digits, '.', '_' or '-', starting with a letter or digit";

    private final int maxPayloadBytes;

    public InputRules(QueueOptions options) {
        this.maxPayloadBytes = options.maxPayloadBytes();
    }

    /** Fails on options that no queue could honour. */
    public void checkOptions(QueueOptions options) {
        if (options.defaultMaxAttempts() < 1 || options.defaultMaxAttempts() > MAX_MAX_ATTEMPTS) {
            throw new InvalidInputException("defaultMaxAttempts", options.defaultMaxAttempts(), "1 to " + MAX_MAX_ATTEMPTS);
        }
        if (options.maxPayloadBytes() < 2 || options.maxPayloadBytes() > MAX_PAYLOAD_LIMIT) {
            throw new InvalidInputException("maxPayloadBytes", options.maxPayloadBytes(), "2 to " + MAX_PAYLOAD_LIMIT + " bytes");
        }
        Duration sweep = options.sweepInterval();
        if (sweep == null || sweep.compareTo(Duration.ofMillis(10)) < 0 || sweep.compareTo(Duration.ofHours(1)) > 0) {
            throw new InvalidInputException("sweepInterval", sweep, "10 ms to 1 h");
        }
        backoff("defaultBackoff", options.defaultBackoff());
        options.topicBackoffs().forEach((topic, backoff) -> {
            topic("backoff topic", topic);
            backoff("backoff of topic " + topic, backoff);
        });
    }

    public void namespace(String name) {
        name("namespace", name);
    }

    public void topic(String name) {
        name("topic", name);
    }

    public void topic(String argument, String name) {
        name(argument, name);
    }

    /**
     * A topic's limits for {@code setLimits}: at least one, each in range, a partition exactly when a per-partition
     * limit is set, whole microseconds in periods (the store keeps microseconds).
     */
    public void limits(TopicLimits limits) {
        if (limits == null) {
            throw new InvalidInputException("limits", null, "limits (TopicLimits.none() with at least one limit)");
        }
        if (limits.isNone()) {
            throw new InvalidInputException("limits", limits, "at least one limit (clearLimits removes them)");
        }
        limits.maxRunning().ifPresent(count -> runningLimit("maxRunning", count));
        limits.maxRunningPerPartition().ifPresent(count -> runningLimit("maxRunningPerPartition", count));
        limits.rate().ifPresent(rate -> rate("rate", rate));
        limits.ratePerPartition().ifPresent(rate -> rate("ratePerPartition", rate));
        boolean perPartition = limits.maxRunningPerPartition().isPresent() || limits.ratePerPartition().isPresent();
        if (limits.partition().isPresent()) {
            TopicLimits.Partition partition = limits.partition().get();
            if (partition.kind() == null) {
                throw new InvalidInputException("partition.kind", null, "a kind of partition");
            }
            if (partition.kind() == TopicLimits.Partition.Kind.HEADER) {
                name("partition header", partition.name());
            } else if (partition.name() != null) {
                throw new InvalidInputException("partition.name", partition.name(),
                        "no name for the ordering-key partition (Partition.orderingKey())");
            }
            if (!perPartition) {
                throw new InvalidInputException("partition", partition,
                        "no partition without maxRunningPerPartition or ratePerPartition");
            }
        } else if (perPartition) {
            throw new InvalidInputException("partition", null, "a partition (Partition.header(name) or "
                    + "Partition.orderingKey()) for the per-partition limits");
        }
    }

    private static void runningLimit(String argument, int count) {
        if (count < 1 || count > TopicLimits.MAX_RUNNING) {
            throw new InvalidInputException(argument, count, "1 to " + TopicLimits.MAX_RUNNING);
        }
    }

    private static void rate(String argument, TopicLimits.Rate rate) {
        if (rate.starts() < 1 || rate.starts() > TopicLimits.MAX_STARTS) {
            throw new InvalidInputException(argument + ".starts", rate.starts(), "1 to " + TopicLimits.MAX_STARTS);
        }
        Duration period = rate.period();
        if (period == null || period.compareTo(TopicLimits.MIN_PERIOD) < 0
                || period.compareTo(TopicLimits.MAX_PERIOD) > 0 || period.getNano() % 1_000 != 0) {
            throw new InvalidInputException(argument + ".period", period, "1 ms to 1 day, in whole microseconds");
        }
    }

    /** Topics of a pull or a subscription: at least one, no repeats. */
    public void topics(List<String> topics) {
        if (topics == null || topics.isEmpty()) {
            throw new InvalidInputException("topics", topics, "at least one topic");
        }
        if (topics.size() > MAX_TOPICS_PER_PULL) {
            throw new InvalidInputException("topics", topics.size() + " topics", "at most " + MAX_TOPICS_PER_PULL);
        }
        Set<String> seen = new HashSet<>();
        for (String topic : topics) {
            name("topic", topic);
            if (!seen.add(topic)) {
                throw new InvalidInputException("topics", topics, "each topic once, but " + topic + " repeats");
            }
        }
    }

    private static void name(String argument, String value) {
        if (!isName(value)) {
            throw new InvalidNameException(argument, value, NAME_RULE);
        }
    }

    /** The rule of {@link #NAME}, checked by hand: it runs for every message published and claimed. */
    static boolean isName(String value) {
        if (value == null || value.isEmpty() || value.length() > MAX_NAME_LENGTH) {
            return false;
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            boolean alphanumeric = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
            if (!alphanumeric && (i == 0 || (c != '.' && c != '_' && c != '-'))) {
                return false;
            }
        }
        return true;
    }

    public void worker(String worker) {
        if (worker == null || worker.isEmpty() || worker.length() > MAX_WORKER_LENGTH || hasControl(worker)) {
            throw new InvalidNameException("worker", worker, "1 to " + MAX_WORKER_LENGTH + " characters without control characters");
        }
        storableText("worker", worker);
    }

    /** An ordering key follows the rules of a unique key: null, or 1 to 255 characters without control characters. */
    public void orderingKey(String key) {
        if (key == null) {
            return;
        }
        if (key.isEmpty() || key.length() > MAX_UNIQUE_KEY_LENGTH || hasControl(key)) {
            throw new InvalidInputException("orderingKey", key, "null, or 1 to " + MAX_UNIQUE_KEY_LENGTH + " characters without control characters");
        }
        storableText("orderingKey", key);
    }

    public void uniqueKey(String key) {
        if (key == null) {
            return;
        }
        if (key.isEmpty() || key.length() > MAX_UNIQUE_KEY_LENGTH || hasControl(key)) {
            throw new InvalidInputException("uniqueKey", key, "null, or 1 to " + MAX_UNIQUE_KEY_LENGTH + " characters without control characters");
        }
        storableText("uniqueKey", key);
    }

    /**
     * Text must be valid Unicode: a lone UTF-16 surrogate (a Java string cut inside an emoji, say) has no UTF-8
     * form, and the PostgreSQL driver would silently store '?' in its place. Two unique keys differing only there
     * would then collide, so it is refused in every adapter rather than rewritten.
     */
    public static void storableText(String argument, String value) {
        int at = unpairedSurrogateAt(value);
        if (at >= 0) {
            throw new InvalidInputException(argument, value, "valid Unicode text, but the UTF-16 surrogate "
                    + codeUnit(value.charAt(at)) + " at index " + at + " has no pair");
        }
    }

    /** The index of the first UTF-16 surrogate without its other half, or -1 when there is none. */
    static int unpairedSurrogateAt(CharSequence value) {
        return unpairedSurrogateAt(value, 0);
    }

    /** Like {@link #unpairedSurrogateAt(CharSequence)}, looking from {@code from} on. */
    static int unpairedSurrogateAt(CharSequence value, int from) {
        for (int i = from; i < value.length(); i++) {
            if (Character.isSurrogate(value.charAt(i))) {
                if (!startsSurrogatePair(value, i)) {
                    return i;
                }
                i++;
            }
        }
        return -1;
    }

    /** Whether a high surrogate at {@code index} is followed by its low half. */
    static boolean startsSurrogatePair(CharSequence value, int index) {
        return Character.isHighSurrogate(value.charAt(index)) && index + 1 < value.length()
                && Character.isLowSurrogate(value.charAt(index + 1));
    }

    static String codeUnit(char c) {
        return String.format("U+%04X", (int) c);
    }

    public void headers(Map<String, String> headers) {
        if (headers == null) {
            throw new InvalidInputException("headers", null, "a map, possibly empty");
        }
        if (headers.size() > MAX_HEADERS) {
            throw new InvalidInputException("headers", headers.size() + " headers", "at most " + MAX_HEADERS);
        }
        for (Map.Entry<String, String> header : headers.entrySet()) {
            String name = header.getKey();
            name("header name", name);
            if (name.regionMatches(true, 0, RESERVED_HEADER_PREFIX, 0, RESERVED_HEADER_PREFIX.length())) {
                throw new InvalidNameException("header name", name, "a name not starting with '" + RESERVED_HEADER_PREFIX
                        + "', which the queue reserves for the headers it sets itself (such as queue-schedule)");
            }
            String value = header.getValue();
            if (value == null || value.length() > MAX_HEADER_VALUE_LENGTH || value.indexOf('\u0000') >= 0) {
                throw new InvalidInputException("header " + name, value,
                        "a value of at most " + MAX_HEADER_VALUE_LENGTH + " characters without NUL");
            }
            storableText("header " + name, value);
        }
    }

    public void priority(int priority) {
        if (priority < MIN_PRIORITY || priority > MAX_PRIORITY) {
            throw new InvalidInputException("priority", priority, MIN_PRIORITY + " (first) to " + MAX_PRIORITY + " (last)");
        }
    }

    public void maxAttempts(int maxAttempts) {
        if (maxAttempts < 1 || maxAttempts > MAX_MAX_ATTEMPTS) {
            throw new InvalidInputException("maxAttempts", maxAttempts, "1 to " + MAX_MAX_ATTEMPTS);
        }
    }

    public void delay(String argument, Duration delay) {
        if (delay == null || delay.isNegative() || delay.compareTo(MAX_DELAY) > 0) {
            throw new InvalidInputException(argument, delay, "0 to " + MAX_DELAY.toDays() + " days");
        }
    }

    public void runAt(Instant runAt) {
        if (runAt.isBefore(Instant.EPOCH) || runAt.isAfter(Instant.parse("9999-12-31T23:59:59Z"))) {
            throw new InvalidInputException("runAt", runAt, "an instant between 1970 and 9999");
        }
    }

    public void lease(String argument, Duration lease) {
        if (lease == null || lease.compareTo(MIN_LEASE) < 0 || lease.compareTo(MAX_LEASE) > 0) {
            throw new InvalidInputException(argument, lease, MIN_LEASE.toSeconds() + " s to " + MAX_LEASE.toHours() + " h");
        }
    }

    public void limit(int limit) {
        if (limit < 1 || limit > MAX_PULL_LIMIT) {
            throw new InvalidInputException("limit", limit, "1 to " + MAX_PULL_LIMIT);
        }
    }

    /**
     * Every property of a subscriber, checked together when it subscribes; {@code worker} is its worker name, or the
     * default one when it names none.
     */
    public void subscriber(Subscriber<?> subscriber, String worker) {
        if (subscriber == null) {
            throw new InvalidInputException("subscriber", null, "a Subscriber");
        }
        topics(subscriber.topics());
        concurrency(subscriber.concurrency());
        lease("lease", subscriber.lease());
        shutdownTimeout(subscriber.shutdownTimeout());
        if (subscriber.backoff() != null) {
            backoff("retry", subscriber.backoff());
        }
        worker(worker);
        if (subscriber.handler() == null) {
            throw new InvalidInputException("handler", null, "a handler");
        }
    }

    public void concurrency(int concurrency) {
        if (concurrency < 1 || concurrency > MAX_CONCURRENCY) {
            throw new InvalidInputException("concurrency", concurrency, "1 to " + MAX_CONCURRENCY);
        }
    }

    public void shutdownTimeout(Duration timeout) {
        if (timeout == null || timeout.isNegative() || timeout.compareTo(Duration.ofHours(1)) > 0) {
            throw new InvalidInputException("shutdownTimeout", timeout, "0 to 1 h");
        }
    }

    public void publishBatch(Collection<?> messages) {
        if (messages == null) {
            throw new InvalidInputException("messages", null, "a list of messages");
        }
        if (messages.size() > MAX_PUBLISH_BATCH) {
            throw new InvalidInputException("messages", messages.size() + " messages", "at most " + MAX_PUBLISH_BATCH + " per call");
        }
    }

    public void backoff(String argument, Backoff backoff) {
        if (backoff == null) {
            throw new InvalidInputException(argument, null, "a backoff");
        }
        if (backoff.base() == null || backoff.base().isNegative() || backoff.cap() == null
                || backoff.cap().compareTo(backoff.base()) < 0 || backoff.cap().compareTo(MAX_DELAY) > 0) {
            throw new InvalidInputException(argument, backoff, "0 <= base <= cap <= " + MAX_DELAY.toDays() + " days");
        }
        if (!(backoff.multiplier() >= 1.0) || backoff.multiplier() > 100) {
            throw new InvalidInputException(argument, backoff, "a multiplier from 1 to 100");
        }
        if (!(backoff.jitter() >= 0.0 && backoff.jitter() <= 1.0)) {
            throw new InvalidInputException(argument, backoff, "a jitter fraction from 0 to 1");
        }
    }

    /** Checks JSON text: valid, within the size limit, storable. */
    public void payloadJson(String json) {
        if (json == null) {
            throw new InvalidPayloadException(null, "JSON text (use \"null\" for a JSON null)");
        }
        // A UTF-8 byte is at least one per char and at most three per UTF-16 unit: skip the exact count when it cannot matter.
        if ((long) json.length() * 3 > maxPayloadBytes) {
            int bytes = json.getBytes(StandardCharsets.UTF_8).length;
            if (bytes > maxPayloadBytes) {
                throw new InvalidPayloadException(bytes + " bytes", "at most " + maxPayloadBytes + " bytes of UTF-8 JSON");
            }
        }
        String problem = JsonSyntax.problemIn(json);
        if (problem != null) {
            throw new InvalidPayloadException(json, "valid JSON (" + problem + ")");
        }
    }

    /**
     * Error texts come from handlers and exceptions: kept, but made storable rather than rejected. NUL and
     * unpaired surrogates become U+FFFD, and a cut never splits a surrogate pair.
     */
    public static String errorText(String error) {
        if (error == null || error.isBlank()) {
            return "no reason given";
        }
        String text = error.replace('\u0000', '\uFFFD');
        int unpaired = unpairedSurrogateAt(text);
        if (unpaired >= 0) {
            StringBuilder repaired = new StringBuilder(text);
            for (int at = unpaired; at >= 0; at = unpairedSurrogateAt(repaired, at + 1)) {
                repaired.setCharAt(at, '\uFFFD');
            }
            text = repaired.toString();
        }
        String cut = "...(cut)";
        if (text.length() <= MAX_ERROR_LENGTH) {
            return text;
        }
        int keep = MAX_ERROR_LENGTH - cut.length();
        if (Character.isHighSurrogate(text.charAt(keep - 1))) {
            keep--;
        }
        return text.substring(0, keep) + cut;
    }

    private static boolean hasControl(String value) {
        for (int i = 0; i < value.length(); i++) {
            if (Character.isISOControl(value.charAt(i))) {
                return true;
            }
        }
        return false;
    }
}
