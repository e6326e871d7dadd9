package dev.queue.testkit.contract;

import dev.queue.api.Delivery;
import dev.queue.api.InvalidInputException;
import dev.queue.api.InvalidNameException;
import dev.queue.api.InvalidPayloadException;
import dev.queue.api.ManualClock;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.MessageState;
import dev.queue.api.Page;
import dev.queue.api.Pull;
import dev.queue.api.Queue;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * Every argument that breaks a rule is rejected with {@link InvalidInputException} (or a subclass) whose message
 * shows the offending value, and nothing is stored or changed.
 */
public abstract class BadInputContract extends ContractSupport {

    protected static final int MAX_PAYLOAD_BYTES = 1024;

    @Override
    protected QueueOptions options() {
        return super.options().maxPayloadBytes(MAX_PAYLOAD_BYTES);
    }

    /**
     * How a value appears in an {@link InvalidInputException} message.
     *
     * @param value the value received
     * @return the value as the message shows it
     */
    protected static String shown(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof CharSequence) {
            String text = value.toString();
            if (text.isEmpty()) {
                return "\"\"";
            }
            if (text.length() > 200) {
                text = text.substring(0, 200);
            }
            return text.replace("\n", "\\n").replace("\r", "\\r").replace("\u0000", "\\u0000");
        }
        return String.valueOf(value);
    }

    private void assertRejected(ThrowingCallable call, Class<? extends InvalidInputException> type, String fragment) {
        assertThatThrownBy(call).isInstanceOf(type).hasMessageContaining(fragment);
    }

    private void assertNothingStored() {
        assertThat(ns.stats().total()).as("messages stored after rejected input").isZero();
        assertThat(ns.stats().topicCount()).isZero();
    }

    // ---- names ----

    static Stream<String> invalidNames() {
        return Stream.of("", "a".repeat(65), "has space", "ns/1", ".leading-dot", "-leading-dash", "_leading",
                "tab\there", "line\nbreak", "caf\u00e9", "semi;colon", "star*");
    }

    @ParameterizedTest(name = "[{index}] \"{0}\"")
    @MethodSource("invalidNames")
    public void invalidNamespaceNameIsRejected(String name) {
        assertRejected(() -> queue.namespace(name), InvalidNameException.class, shown(name));
        assertNothingStored();
    }

    @Test
    public void nullNamespaceNameIsRejected() {
        assertRejected(() -> queue.namespace(null), InvalidInputException.class, "null");
    }

    @ParameterizedTest(name = "[{index}] \"{0}\"")
    @MethodSource("invalidNames")
    public void invalidTopicNameIsRejectedOnPublish(String topic) {
        assertRejected(() -> ns.publish(Message.to(topic)), InvalidNameException.class, shown(topic));
        assertRejected(() -> ns.publish(topic, new Order("o", 1)), InvalidNameException.class, shown(topic));
        assertNothingStored();
    }

    @ParameterizedTest(name = "[{index}] \"{0}\"")
    @MethodSource("invalidNames")
    public void invalidTopicNameIsRejectedOnPullAndSubscribe(String topic) {
        assertRejected(() -> ns.pull(Pull.from(topic).worker(WORKER)), InvalidNameException.class, shown(topic));
        assertRejected(() -> ns.subscribe(Subscriber.on(topic).handleDelivery((d, c) -> { })),
                InvalidNameException.class, shown(topic));
        assertRejected(() -> ns.deadLetters().list(topic, Page.first(10)), InvalidNameException.class, shown(topic));
    }

    @Test
    public void nullTopicIsRejected() {
        assertRejected(() -> ns.publish(Message.to(null)), InvalidInputException.class, "null");
        assertRejected(() -> ns.pull(Pull.from(null).worker(WORKER)), InvalidInputException.class, "null");
        assertNothingStored();
    }

    @ParameterizedTest(name = "[{index}] \"{0}\"")
    @ValueSource(strings = {"a", "Z", "0", "a.b-c_D9", "order.paid", "x--..__y"})
    public void namesWithinTheRulesAreAccepted(String name) {
        assertThat(queue.namespace(name).name()).isEqualTo(name);
        assertThat(ns.publish(Message.to(name))).isNotNull();
    }

    @Test
    public void namesOfExactly64CharsAreAccepted() {
        String name = "n".repeat(64);

        assertThat(queue.namespace(name).name()).isEqualTo(name);
        assertThat(ns.publish(Message.to(name))).isNotNull();
        assertThat(ns.stats().topicCount()).isEqualTo(1);
    }

    // ---- payloads ----

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"{", "{'a':1}", "NaN", "{} x", "", "   ", "{\"a\":}", "[1,]", "undefined", "{\"a\":1}}",
            "\"unterminated", "tru", "01", "+1", "Infinity", "{a:1}", "// comment\n{}", "[1] [2]",
            "{\"raw\":\"control\u0001char\"}"})
    public void payloadThatIsNotJsonIsRejected(String json) {
        assertRejected(() -> ns.publish(Message.to("t").json(json)), InvalidPayloadException.class, shown(json));
        assertNothingStored();
    }

    @Test
    public void nullJsonPayloadIsRejected() {
        assertRejected(() -> ns.publish(Message.to("t").json(null)), InvalidInputException.class, "null");
        assertNothingStored();
    }

    @Test
    public void payloadOverTheLimitIsRejectedNamingItsSize() {
        String json = "\"" + "a".repeat(MAX_PAYLOAD_BYTES - 1) + "\"";
        assertThat(json).hasSize(1025);

        assertRejected(() -> ns.publish(Message.to("t").json(json)), InvalidPayloadException.class, "1025");
        assertNothingStored();
    }

    @Test
    public void payloadLimitCountsUtf8BytesNotChars() {
        String json = "\"" + "\u00e9".repeat(600) + "\"";

        assertRejected(() -> ns.publish(Message.to("t").json(json)), InvalidPayloadException.class, "1202");
        assertNothingStored();
    }

    @Test
    public void payloadOfExactlyTheLimitIsAccepted() {
        String json = "\"" + "a".repeat(MAX_PAYLOAD_BYTES - 2) + "\"";

        MessageId id = publish("t", json);

        assertThat(info(id).json()).isEqualTo(json);
    }

    @Test
    public void typedPayloadOverTheLimitIsRejected() {
        Order big = new Order("x".repeat(2000), 1);

        assertThatThrownBy(() -> ns.publish("t", big)).isInstanceOf(InvalidPayloadException.class);
        assertNothingStored();
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"{\"a\":\"x\\u0000y\"}", "{\"\\u0000\":1}", "\"\\u0000\"", "[\"ok\",\"\\u0000\"]"})
    public void payloadWithNulEscapeIsRejected(String json) {
        assertRejected(() -> ns.publish(Message.to("t").json(json)), InvalidPayloadException.class, "\\u0000");
        assertNothingStored();
    }

    @Test
    public void escapedBackslashFollowedByU0000TextIsNotANulAndIsAccepted() {
        String json = "{\"path\":\"C:\\\\u0000\"}";

        MessageId id = publish("t", json);

        assertThat(info(id).json()).isEqualTo(json);
    }

    // ---- text that is not valid Unicode ----
    //
    // A Java string can hold half of a surrogate pair (cut with substring inside an emoji, say); such text has no
    // UTF-8 form. Every adapter refuses it in stored text, naming the argument and the position, rather than
    // storing something else: PostgreSQL's driver would write '?' in its place.

    private static final String HIGH = "\uD83D";
    private static final String LOW = "\uDE00";
    private static final String EMOJI = HIGH + LOW;

    static Stream<Arguments> payloadsWithUnpairedSurrogates() {
        return Stream.of(
                arguments("high alone", "\"x" + HIGH + "y\"", "U+D83D at offset 2"),
                arguments("low alone", "\"x" + LOW + "\"", "U+DE00 at offset 2"),
                arguments("high at the end of the string", "{\"name\":\"Zo\u00eb " + HIGH + "\"}", "U+D83D at offset 13"),
                arguments("low before high", "[\"" + LOW + HIGH + "\"]", "U+DE00 at offset 2"),
                arguments("in a member name", "{\"" + HIGH + "\":1}", "U+D83D at offset 2"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("payloadsWithUnpairedSurrogates")
    public void payloadWithAnUnpairedSurrogateIsRejectedNamingItsOffset(String label, String json, String fragment) {
        assertRejected(() -> ns.publish(Message.to("t").json(json)), InvalidPayloadException.class, fragment);
        assertNothingStored();
    }

    @Test
    public void typedPayloadWithAnUnpairedSurrogateIsRejected() {
        Order cut = new Order("Zo\u00eb " + HIGH, 1);

        assertRejected(() -> ns.publish("t", cut), InvalidPayloadException.class, "U+D83D");
        assertNothingStored();
    }

    @Test
    public void surrogatePairsAndEscapedSurrogatesRoundTripExactly() {
        String pair = "{\"smile\":\"" + EMOJI + "\"}";
        String escapedLone = "{\"half\":\"\\ud800\"}";
        String escapedPair = "\"\\ud83d\\ude00\"";

        MessageId a = publish("t", pair);
        MessageId b = publish("t", escapedLone);
        MessageId c = publish("t", escapedPair);

        assertThat(escapedLone).hasSize(17).doesNotContain(HIGH);
        assertThat(info(a).json()).isEqualTo(pair);
        assertThat(info(b).json()).isEqualTo(escapedLone);
        assertThat(info(c).json()).isEqualTo(escapedPair);
        assertThat(pullOne("t").json()).isEqualTo(pair);
    }

    @Test
    public void headerValueWithAnUnpairedSurrogateIsRejectedNamingTheHeaderAndIndex() {
        assertRejected(() -> ns.publish(Message.to("t").header("who", "Zo\u00eb " + HIGH)), InvalidInputException.class,
                "header who");
        assertRejected(() -> ns.publish(Message.to("t").header("who", "ab" + LOW)), InvalidInputException.class,
                "U+DE00 at index 2");
        assertNothingStored();
    }

    @Test
    public void uniqueKeysThatDifferOnlyInAnUnpairedSurrogateAreRejectedNotMerged() {
        String first = "welcome:Zo\u00eb " + HIGH;
        String second = "welcome:Zo\u00eb \uD83E";

        assertThatThrownBy(() -> ns.publish(Message.to("t").uniqueKey(first)))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("uniqueKey").hasMessageContaining("U+D83D at index 12")
                .hasMessageContaining("\\uD83D");
        assertRejected(() -> ns.publish(Message.to("t").uniqueKey(second)), InvalidInputException.class, "U+D83E at index 12");
        assertNothingStored();
    }

    @Test
    public void uniqueKeysWithDifferentWholeEmojiAreDistinct() {
        MessageId smile = publish(Message.to("t").uniqueKey("welcome:" + EMOJI));
        MessageId other = publish(Message.to("t").uniqueKey("welcome:\uD83E\uDD84"));

        assertThat(smile).isNotEqualTo(other);
        assertThat(info(smile).uniqueKey()).isEqualTo("welcome:" + EMOJI);
        assertThat(ns.publish(Message.to("t").uniqueKey("welcome:" + EMOJI)))
                .isInstanceOf(dev.queue.api.PublishResult.Duplicate.class);
        assertThat(ns.stats().pending()).isEqualTo(2);
    }

    @Test
    public void workerWithAnUnpairedSurrogateIsRejected() {
        MessageId id = publish("t", "{}");

        assertRejected(() -> ns.pull(Pull.from("t").worker("host-" + HIGH)), InvalidInputException.class, "U+D83D at index 5");
        assertRejected(() -> ns.subscribe(Subscriber.on("t").worker(LOW).handleDelivery((d, c) -> { })),
                InvalidInputException.class, "U+DE00 at index 0");

        assertThat(info(id).state()).isEqualTo(MessageState.PENDING);
        assertThat(info(id).attempts()).isZero();
    }

    @Test
    public void workerWithAWholeEmojiIsStoredAsGiven() {
        publish("t", "{}");

        Delivery delivery = ns.pullOne(Pull.from("t").worker("host-" + EMOJI)).orElseThrow();

        assertThat(info(delivery.id()).worker()).isEqualTo("host-" + EMOJI);
    }

    @Test
    public void errorTextsWithUnpairedSurrogatesAreStoredWithReplacementCharacters() {
        MessageId retried = publish(Message.to("t").maxAttempts(5));
        ns.nack(pullOne("t"), "bad " + HIGH + " input " + EMOJI + LOW, Duration.ZERO);

        assertThat(info(retried).lastError()).isEqualTo("bad \uFFFD input " + EMOJI + "\uFFFD");

        MessageId buried = publish(Message.to("u"));
        ns.fail(pullOne("u"), LOW + "lost");

        assertThat(ns.deadLetters().list("u", Page.first(10)))
                .singleElement().satisfies(dead -> {
                    assertThat(dead.id()).isEqualTo(buried);
                    assertThat(dead.lastError()).isEqualTo("\uFFFDlost");
                });
    }

    // ---- message options ----

    static Stream<Arguments> invalidMessages() {
        Map<String, String> tooMany = new LinkedHashMap<>();
        for (int i = 0; i < 33; i++) {
            tooMany.put("h" + i, "v");
        }
        return Stream.of(
                arguments("priority -1", Message.to("t").priority(-1), "-1"),
                arguments("priority 10", Message.to("t").priority(10), "10"),
                arguments("maxAttempts 0", Message.to("t").maxAttempts(0), "0"),
                arguments("maxAttempts 1001", Message.to("t").maxAttempts(1001), "1001"),
                arguments("maxAttempts -3", Message.to("t").maxAttempts(-3), "-3"),
                arguments("negative delay", Message.to("t").delay(Duration.ofSeconds(-1)), "PT-1S"),
                arguments("delay over 365 days", Message.to("t").delay(Duration.ofDays(365).plusSeconds(1)), "PT8760H1S"),
                arguments("unique key empty", Message.to("t").uniqueKey(""), "\"\""),
                arguments("unique key 256 chars", Message.to("t").uniqueKey("k".repeat(256)), "k".repeat(200)),
                arguments("unique key with newline", Message.to("t").uniqueKey("a\nb"), "a\\nb"),
                arguments("unique key with tab", Message.to("t").uniqueKey("a\tb"), "a\tb"),
                arguments("unique key with NUL", Message.to("t").uniqueKey("a\u0000b"), "a\\u0000b"),
                arguments("header name with space", Message.to("t").header("bad name", "v"), "bad name"),
                arguments("header name empty", Message.to("t").header("", "v"), "\"\""),
                arguments("header name with slash", Message.to("t").header("x/y", "v"), "x/y"),
                arguments("header name 65 chars", Message.to("t").header("h".repeat(65), "v"), "h".repeat(65)),
                arguments("header value over 1024 chars", Message.to("t").header("h", "v".repeat(1025)), "v".repeat(200)),
                arguments("header value with NUL", Message.to("t").header("h", "a\u0000b"), "a\\u0000b"),
                arguments("reserved header queue-schedule", Message.to("t").header("queue-schedule", "s"), "queue-schedule"),
                arguments("reserved header prefix in capitals", Message.to("t").header("Queue-Trace", "s"), "Queue-Trace"),
                arguments("33 headers", Message.to("t").headers(tooMany), "33"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("invalidMessages")
    public void invalidMessageOptionIsRejectedAndNothingStored(String label, Message message, String fragment) {
        assertRejected(() -> ns.publish(message), InvalidInputException.class, fragment);
        assertNothingStored();
    }

    @Test
    public void invalidHeaderNameIsAnInvalidName() {
        assertThatThrownBy(() -> ns.publish(Message.to("t").header("bad name", "v")))
                .isInstanceOf(InvalidNameException.class);
    }

    @Test
    public void valuesAtTheLimitsAreAccepted() {
        Map<String, String> headers = new LinkedHashMap<>();
        for (int i = 0; i < 32; i++) {
            headers.put("h" + i, i == 0 ? "v".repeat(1024) : "v");
        }
        publish(Message.to("t").priority(0).maxAttempts(1));
        publish(Message.to("t").priority(9).maxAttempts(1000));
        publish(Message.to("t").uniqueKey("k".repeat(255)).headers(headers).delay(Duration.ofDays(365)));

        assertThat(ns.stats().pending()).isEqualTo(3);
    }

    @Test
    public void nullMessageIsRejected() {
        assertRejected(() -> ns.publish((Message) null), InvalidInputException.class, "null");
        assertRejected(() -> ns.publishAll(null), InvalidInputException.class, "null");
        assertNothingStored();
    }

    @Test
    public void nullInsidePublishAllIsRejectedAndNothingStored() {
        List<Message> batch = new ArrayList<>();
        batch.add(Message.to("t"));
        batch.add(null);

        assertThatThrownBy(() -> ns.publishAll(batch)).isInstanceOf(InvalidInputException.class);
        assertNothingStored();
    }

    static Stream<Arguments> invalidThirdMessages() {
        return Stream.of(
                arguments("bad topic", Message.to("bad topic"), "bad topic"),
                arguments("bad json", Message.to("t").json("{oops"), "{oops"),
                arguments("priority 10", Message.to("t").priority(10), "10"),
                arguments("empty unique key", Message.to("t").uniqueKey(""), "\"\""));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("invalidThirdMessages")
    public void publishAllWithInvalidThirdOfFiveStoresNothing(String label, Message invalid, String fragment) {
        List<Message> batch = List.of(
                Message.to("t").uniqueKey("k1"), Message.to("t"), invalid, Message.to("u"), Message.to("t"));

        assertRejected(() -> ns.publishAll(batch), InvalidInputException.class, fragment);

        assertNothingStored();
        assertThat(ns.publish(Message.to("t").uniqueKey("k1"))).as("key of the rejected batch is free")
                .isInstanceOf(dev.queue.api.PublishResult.Published.class);
    }

    @Test
    public void publishAllOfMoreThanTenThousandIsRejected() {
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < 10_001; i++) {
            batch.add(Message.to("t"));
        }

        assertRejected(() -> ns.publishAll(batch), InvalidInputException.class, "10001");
        assertNothingStored();
    }

    @Test
    public void ackAllOfMoreThanTenThousandIsRejectedAndChangesNothing() {
        MessageId id = publish("t", "{}");
        Delivery held = pullOne("t");
        List<Delivery> deliveries = new ArrayList<>();
        deliveries.add(held);
        for (int i = 1; i <= 10_000; i++) {
            deliveries.add(new Delivery(MessageId.of(id.value() + i), NAMESPACE, "t", "{}", Map.of(), 0, 1, 1, 1L, WORKER,
                    held.leaseUntil(), held.publishedAt(), null));
        }

        assertRejected(() -> ns.ackAll(deliveries), InvalidInputException.class, "10001");
        assertThat(info(id).state()).isEqualTo(MessageState.RUNNING);
    }

    // ---- pulls ----

    static Stream<Arguments> invalidPulls() {
        return Stream.of(
                arguments("visibility 0", Pull.from("t").worker("w").visibility(Duration.ZERO), "PT0S"),
                arguments("visibility 999 ms", Pull.from("t").worker("w").visibility(Duration.ofMillis(999)), "PT0.999S"),
                arguments("visibility 25 h", Pull.from("t").worker("w").visibility(Duration.ofHours(25)), "PT25H"),
                arguments("negative visibility", Pull.from("t").worker("w").visibility(Duration.ofSeconds(-5)), "PT-5S"),
                arguments("null visibility", Pull.from("t").worker("w").visibility(null), "null"),
                arguments("limit 0", Pull.from("t").worker("w").limit(0), "0"),
                arguments("limit 1001", Pull.from("t").worker("w").limit(1001), "1001"),
                arguments("limit -1", Pull.from("t").worker("w").limit(-1), "-1"),
                arguments("worker empty", Pull.from("t").worker(""), "\"\""),
                arguments("worker with newline", Pull.from("t").worker("w\n1"), "w\\n1"),
                arguments("worker 129 chars", Pull.from("t").worker("w".repeat(129)), "w".repeat(129)),
                arguments("null topic in fromAny", Pull.fromAny("t", null).worker("w"), "null"),
                arguments("no topics", Pull.fromAny().worker("w"), "[]"),
                arguments("null topic list", Pull.fromAny((String[]) null).worker("w"), "null"),
                arguments("invalid topic in fromAny", Pull.fromAny("t", "x y").worker("w"), "x y"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("invalidPulls")
    public void invalidPullIsRejectedAndClaimsNothing(String label, Pull pull, String fragment) {
        MessageId id = publish("t", "{}");

        assertRejected(() -> ns.pull(pull), InvalidInputException.class, fragment);

        assertThat(info(id).state()).isEqualTo(MessageState.PENDING);
        assertThat(info(id).attempts()).isZero();
        assertThat(ns.stats().running()).isZero();
    }

    @Test
    public void nullPullIsRejected() {
        assertRejected(() -> ns.pull(null), InvalidInputException.class, "null");
    }

    @Test
    public void workerOf128CharsIsAccepted() {
        publish("t", "{}");

        Delivery delivery = ns.pullOne(Pull.from("t").worker("w".repeat(128))).orElseThrow();

        assertThat(delivery.worker()).isEqualTo("w".repeat(128));
    }

    // ---- operations on a delivery ----

    static Stream<Arguments> invalidDurations() {
        return Stream.of(
                arguments("extend by 0", "extend", Duration.ZERO, "PT0S"),
                arguments("extend by 25 h", "extend", Duration.ofHours(25), "PT25H"),
                arguments("extend by null", "extend", null, "null"),
                arguments("nack with negative delay", "nack", Duration.ofSeconds(-1), "PT-1S"),
                arguments("nack with delay of 366 days", "nack", Duration.ofDays(366), "PT8784H"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("invalidDurations")
    public void invalidDurationOnDeliveryIsRejectedAndChangesNothing(String label, String operation, Duration duration,
                                                                    String fragment) {
        MessageId id = publish(Message.to("t").maxAttempts(5));
        Delivery delivery = pullOne("t");
        Snapshot before = snapshot(id);

        ThrowingCallable call = operation.equals("extend")
                ? () -> ns.extend(delivery, duration)
                : () -> ns.nack(delivery, "e", duration);
        assertRejected(call, InvalidInputException.class, fragment);

        assertUnchanged(before, id);
    }

    @Test
    public void nullDeliveryIsRejected() {
        assertRejected(() -> ns.ack(null), InvalidInputException.class, "null");
        assertRejected(() -> ns.nack(null, "e"), InvalidInputException.class, "null");
        assertRejected(() -> ns.fail(null, "e"), InvalidInputException.class, "null");
        assertRejected(() -> ns.extend(null, Duration.ofSeconds(10)), InvalidInputException.class, "null");
        assertRejected(() -> ns.ackAll(null), InvalidInputException.class, "null");
    }

    // ---- subscribers ----

    static Stream<Arguments> invalidSubscribers() {
        return Stream.of(
                arguments("concurrency 0", Subscriber.on("t").concurrency(0).handleDelivery((d, c) -> { }), "0"),
                arguments("concurrency 1001", Subscriber.on("t").concurrency(1001).handleDelivery((d, c) -> { }), "1001"),
                arguments("lease 0", Subscriber.on("t").lease(Duration.ZERO).handleDelivery((d, c) -> { }), "PT0S"),
                arguments("lease 25 h", Subscriber.on("t").lease(Duration.ofHours(25)).handleDelivery((d, c) -> { }), "PT25H"),
                arguments("worker empty", Subscriber.on("t").worker("").handleDelivery((d, c) -> { }), "\"\""),
                arguments("no topics", Subscriber.on().handleDelivery((d, c) -> { }), "[]"),
                arguments("null topic", Subscriber.on("t", null).handleDelivery((d, c) -> { }), "null"),
                arguments("null handler", Subscriber.on("t").handleDelivery(null), "null"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("invalidSubscribers")
    public void invalidSubscriberIsRejectedAndClaimsNothing(String label, Subscriber<?> subscriber, String fragment) {
        MessageId id = publish("t", "{}");

        assertRejected(() -> ns.subscribe(subscriber), InvalidInputException.class, fragment);

        assertThat(info(id).attempts()).isZero();
        assertThat(info(id).state()).isEqualTo(MessageState.PENDING);
    }

    @Test
    public void nullSubscriberIsRejected() {
        assertRejected(() -> ns.subscribe(null), InvalidInputException.class, "null");
    }

    // ---- options ----

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("invalidCloseTimeouts")
    public void invalidCloseTimeoutIsRejectedWhenTheQueueIsCreated(Duration timeout) {
        assertThatThrownBy(() -> {
            Queue bad = queueFactory().create(new ManualClock(START), options().closeTimeout(timeout));
            bad.close();
        }).isInstanceOf(InvalidInputException.class).hasMessageContaining("closeTimeout").hasMessageContaining(String.valueOf(timeout));
    }

    static Stream<Duration> invalidCloseTimeouts() {
        return Stream.of(null, Duration.ofMillis(-1), Duration.ofHours(1).plusMillis(1));
    }

    @Test
    public void invalidQueueOptionsAreRejectedWhenTheQueueIsCreated() {
        assertThatThrownBy(() -> {
            Queue bad = queueFactory().create(new ManualClock(START), options().defaultMaxAttempts(0));
            bad.close();
        }).isInstanceOf(InvalidInputException.class).hasMessageContaining("defaultMaxAttempts");
    }
}
