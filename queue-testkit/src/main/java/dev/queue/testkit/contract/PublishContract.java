package dev.queue.testkit.contract;

import dev.queue.api.Delivery;
import dev.queue.api.InvalidInputException;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.MessageInfo;
import dev.queue.api.MessageState;
import dev.queue.api.PublishResult;
import dev.queue.api.QueueClosedException;
import dev.queue.api.QueueOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Publishing: ids, payloads stored exactly, options, batches, the codec. */
public abstract class PublishContract extends ContractSupport {

    @Test
    public void publishReturnsDistinctIdsIncreasingInPublishOrder() {
        MessageId first = publish("t", "{}");
        MessageId second = publish("t", "{}");
        MessageId third = publish("other", "{}");

        assertThat(second).isGreaterThan(first);
        assertThat(third).isGreaterThan(second);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {
            "{}",
            "{\"b\":1,\"a\":2}",
            "{ \"z\" : [1, 2 ,3],\n  \"a\":{\"y\":null,\"x\":true} }",
            "  {\"padded\":\"with whitespace\"}\t\n",
            "[1,\"two\",3.0e10,-0.5,false,null]",
            "42",
            "-1.25E-7",
            "\"just a string\"",
            "null",
            "true",
            "{\"unicode\":\"caf\u00e9 \u65e5\u672c \ud83d\ude00\",\"escaped\":\"\\u00e9\\n\\t\\\"\\\\\"}",
            "{\"n\":1.000,\"big\":123456789012345678901234567890}"
    })
    public void jsonPayloadRoundTripsByteForByte(String json) {
        MessageId id = publish("t", json);

        assertThat(info(id).json()).isEqualTo(json);
        Delivery delivery = pullOne("t");
        assertThat(delivery.id()).isEqualTo(id);
        assertThat(delivery.json()).isEqualTo(json);
    }

    @Test
    public void headersRoundTripInDeliveryAndInspect() {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("trace-id", "abc-123");
        headers.put("Content.Type", "application/json; charset=utf-8");
        headers.put("empty", "");
        headers.put("unicode", "h\u00e9llo \ud83d\ude00");
        MessageId id = publish(Message.to("t").headers(headers).header("x_extra", "1"));

        Map<String, String> expected = new LinkedHashMap<>(headers);
        expected.put("x_extra", "1");
        assertThat(info(id).headers()).isEqualTo(expected);
        assertThat(pullOne("t").headers()).isEqualTo(expected);
    }

    @Test
    public void messageWithoutHeadersHasEmptyHeaders() {
        MessageId id = publish("t", "{}");

        assertThat(info(id).headers()).isEmpty();
        assertThat(pullOne("t").headers()).isEmpty();
    }

    @Test
    public void priorityDefaultsToZeroAndExplicitPriorityIsKept() {
        MessageId byDefault = publish(Message.to("t"));
        MessageId explicit = publish(Message.to("u").priority(7));

        assertThat(info(byDefault).priority()).isEqualTo(Message.DEFAULT_PRIORITY).isZero();
        assertThat(info(explicit).priority()).isEqualTo(7);
        assertThat(pullOne("u").priority()).isEqualTo(7);
        assertThat(pullOne("t").priority()).isZero();
    }

    @Test
    public void maxAttemptsDefaultsToTheQueueOption() {
        MessageId id = publish(Message.to("t"));

        assertThat(info(id).maxAttempts()).isEqualTo(QueueOptions.DEFAULT_MAX_ATTEMPTS);
        assertThat(pullOne("t").maxAttempts()).isEqualTo(QueueOptions.DEFAULT_MAX_ATTEMPTS);
    }

    @Test
    public void maxAttemptsDefaultFollowsConfiguredOption() {
        recreateQueue(options().defaultMaxAttempts(7));

        MessageId id = publish(Message.to("t"));

        assertThat(info(id).maxAttempts()).isEqualTo(7);
    }

    @Test
    public void explicitMaxAttemptsIsKept() {
        MessageId id = publish(Message.to("t").maxAttempts(3));

        assertThat(info(id).maxAttempts()).isEqualTo(3);
        Delivery delivery = pullOne("t");
        assertThat(delivery.maxAttempts()).isEqualTo(3);
        assertThat(delivery.isLastAttempt()).isFalse();
    }

    @Test
    public void inspectShowsNewMessagePendingWithZeroAttempts() {
        MessageId id = publish(Message.to("t").json("{\"a\":1}").uniqueKey("k-1").priority(2));

        MessageInfo info = info(id);
        assertThat(info.id()).isEqualTo(id);
        assertThat(info.namespace()).isEqualTo(NAMESPACE);
        assertThat(info.topic()).isEqualTo("t");
        assertThat(info.state()).isEqualTo(MessageState.PENDING);
        assertThat(info.attempts()).isZero();
        assertThat(info.json()).isEqualTo("{\"a\":1}");
        assertThat(info.uniqueKey()).isEqualTo("k-1");
        assertThat(info.priority()).isEqualTo(2);
        assertThat(info.publishedAt()).isEqualTo(START);
        assertThat(info.runAt()).isEqualTo(START);
        assertThat(info.leaseUntil()).isNull();
        assertThat(info.lastError()).isNull();
    }

    @Test
    public void publishedMessageCountsAsPending() {
        publish("t", "{}");
        publish("t", "{}");

        assertThat(ns.stats().pending()).isEqualTo(2);
        assertThat(ns.stats().topic("t").pending()).isEqualTo(2);
    }

    @Test
    public void publishAllStoresInOrderAndDeliversInOrder() {
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            batch.add(Message.to("t").json("{\"i\":" + i + "}"));
        }

        List<PublishResult> results = ns.publishAll(batch);

        assertThat(results).hasSize(5).allSatisfy(r -> assertThat(r).isInstanceOf(PublishResult.Published.class));
        for (int i = 1; i < 5; i++) {
            assertThat(results.get(i).id()).isGreaterThan(results.get(i - 1).id());
        }
        for (int i = 0; i < 5; i++) {
            Delivery delivery = pullOne("t");
            assertThat(delivery.id()).isEqualTo(results.get(i).id());
            assertThat(delivery.json()).isEqualTo("{\"i\":" + i + "}");
        }
    }

    @Test
    public void publishAllAcrossTopicsKeepsEachMessageOnItsTopic() {
        List<PublishResult> results = ns.publishAll(List.of(
                Message.to("a").json("1"), Message.to("b").json("2"), Message.to("a").json("3")));

        assertThat(info(results.get(0).id()).topic()).isEqualTo("a");
        assertThat(info(results.get(1).id()).topic()).isEqualTo("b");
        assertThat(info(results.get(2).id()).topic()).isEqualTo("a");
        assertThat(ns.stats().topic("a").pending()).isEqualTo(2);
        assertThat(ns.stats().topic("b").pending()).isEqualTo(1);
    }

    @Test
    public void publishAllIsAllOrNothing() {
        List<Message> batch = List.of(
                Message.to("t").json("{}"),
                Message.to("t").json("{}"),
                Message.to("t").json("{not json"),
                Message.to("t").json("{}"));

        assertThatThrownBy(() -> ns.publishAll(batch)).isInstanceOf(InvalidInputException.class);

        assertThat(ns.stats().total()).isZero();
        assertNothingDue("t");
    }

    @Test
    public void typedPayloadIsEncodedByTheCodecAndDecodedByDelivery() {
        Order order = new Order("o-1", 3);
        MessageId id = ns.publish("orders", order);

        Delivery delivery = pullOne("orders");
        assertThat(delivery.id()).isEqualTo(id);
        assertThat(delivery.payload(Order.class)).isEqualTo(order);
        assertThat(ns.codec().decode(info(id).json(), Order.class)).isEqualTo(order);
    }

    @Test
    public void typedPayloadInMessageIsEncodedByTheCodec() {
        MessageId id = publish(Message.to("orders").payload(new Order("o-2", 5)).priority(1));

        assertThat(ns.codec().decode(info(id).json(), Order.class)).isEqualTo(new Order("o-2", 5));
        assertThat(pullOne("orders").payload(Order.class)).isEqualTo(new Order("o-2", 5));
    }

    @Test
    public void jsonTextPublishedAsIsDecodesToRecord() {
        publish("orders", "{\"id\":\"o-3\",\"qty\":9}");

        assertThat(pullOne("orders").payload(Order.class)).isEqualTo(new Order("o-3", 9));
    }

    @Test
    public void delayedPublishIsPendingWithFutureRunAt() {
        MessageId id = publish(Message.to("t").delay(Duration.ofMinutes(3)));

        assertThat(info(id).state()).isEqualTo(MessageState.PENDING);
        assertThat(info(id).runAt()).isEqualTo(START.plus(Duration.ofMinutes(3)));
        assertThat(ns.stats().pending()).isEqualTo(1);
    }

    @Test
    public void publishAfterQueueCloseIsRejected() {
        queue.close();

        assertThatThrownBy(() -> ns.publish(Message.to("t"))).isInstanceOf(QueueClosedException.class);
        assertThatThrownBy(() -> queue.namespace("other")).isInstanceOf(QueueClosedException.class);
    }
}
