package dev.queue.opentelemetry;

import dev.queue.api.Backoff;
import dev.queue.api.InvalidInputException;
import dev.queue.api.ManualClock;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.Namespace;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.inmemory.InMemoryQueue;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.trace.data.SpanData;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Spans of the in-memory queue, whose subscribers run handlers on threads of their own: the publish happens on the
 * test's thread, the handling on a handler thread, and only the message's headers connect them.
 */
class QueueTracingTest {

    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");

    private final ManualClock clock = new ManualClock(T0);
    private final TracingSdk tracing = new TracingSdk();
    private final Tracer appTracer = tracing.sdk.getTracer("app");
    private InMemoryQueue queue;
    private Namespace ns;

    private void start(QueueTracing queueTracing) {
        queue = InMemoryQueue.threaded(clock, QueueOptions.defaults().sweepInterval(Duration.ofMillis(50))
                .backoff("orders", Backoff.fixed(Duration.ofSeconds(30))).interceptor(queueTracing));
        ns = queue.namespace("shop");
    }

    @AfterEach
    void close() {
        queue.close();
        tracing.close();
    }

    @Test
    void aHandlerOnAnotherThreadRunsInAConsumerSpanChildOfThePublishingSpan() {
        start(QueueTracing.create(tracing.sdk));
        AtomicReference<String> handlerThread = new AtomicReference<>();
        ns.subscribe(Subscriber.on("orders").handleDelivery((delivery, context) -> {
            handlerThread.set(Thread.currentThread().getName());
            appTracer.spanBuilder("charge card").startSpan().end();
        }));

        Span request = appTracer.spanBuilder("POST /orders").startSpan();
        MessageId id;
        try (Scope ignored = request.makeCurrent()) {
            id = ns.publish(Message.to("orders").json("{\"order\":7}")).id();
        } finally {
            request.end();
        }

        List<SpanData> spans = tracing.awaitSpans(4);
        SpanData requestSpan = tracing.named(spans, "POST /orders");
        SpanData producer = tracing.named(spans, "publish orders");
        SpanData consumer = tracing.named(spans, "process orders");
        SpanData work = tracing.named(spans, "charge card");
        assertThat(handlerThread.get()).isNotEqualTo(Thread.currentThread().getName());

        assertThat(producer.getKind()).isEqualTo(SpanKind.PRODUCER);
        assertThat(producer.getParentSpanId()).isEqualTo(requestSpan.getSpanId());
        assertThat(producer.getAttributes().asMap()).isEqualTo(Attributes.builder()
                .put(QueueTracing.MESSAGING_SYSTEM, "queue")
                .put(QueueTracing.OPERATION_TYPE, "send")
                .put(QueueTracing.OPERATION_NAME, "publish")
                .put(QueueTracing.NAMESPACE, "shop")
                .put(QueueTracing.DESTINATION_NAME, "orders")
                .put(QueueTracing.MESSAGE_ID, id.toString())
                .build().asMap());

        assertThat(consumer.getKind()).isEqualTo(SpanKind.CONSUMER);
        assertThat(consumer.getTraceId()).isEqualTo(requestSpan.getTraceId());
        assertThat(consumer.getParentSpanId()).isEqualTo(producer.getSpanId());
        assertThat(consumer.getLinks()).singleElement()
                .satisfies(link -> assertThat(link.getSpanContext().getSpanId()).isEqualTo(producer.getSpanId()));
        assertThat(consumer.getAttributes().asMap()).isEqualTo(Attributes.builder()
                .put(QueueTracing.MESSAGING_SYSTEM, "queue")
                .put(QueueTracing.DESTINATION_NAME, "orders")
                .put(QueueTracing.OPERATION_TYPE, "process")
                .put(QueueTracing.OPERATION_NAME, "process")
                .put(QueueTracing.MESSAGE_ID, id.toString())
                .put(QueueTracing.NAMESPACE, "shop")
                .put(QueueTracing.ATTEMPT, 1L)
                .put(QueueTracing.MAX_ATTEMPTS, 20L)
                .put(QueueTracing.OUTCOME, "acked")
                .build().asMap());
        assertThat(consumer.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
        assertThat(work.getParentSpanId()).as("the handler's own span nests under the consumer span").isEqualTo(consumer.getSpanId());
    }

    @Test
    void theProducerSpansContextTravelsInTheMessageHeaders() {
        start(QueueTracing.create(tracing.sdk));

        MessageId id = ns.publish(Message.to("orders").header("tenant", "acme")).id();

        SpanData producer = tracing.awaitSpans(1).get(0);
        assertThat(ns.inspect(id).orElseThrow().headers())
                .containsEntry("tenant", "acme")
                .containsEntry("traceparent", "00-" + producer.getTraceId() + "-" + producer.getSpanId() + "-"
                        + producer.getSpanContext().getTraceFlags().asHex());
    }

    @Test
    void eachAttemptOfARetriedMessageIsAConsumerSpanShowingItsAttempt() {
        start(QueueTracing.create(tracing.sdk));
        ns.subscribe(Subscriber.on("orders").handleDelivery((delivery, context) -> {
            if (delivery.attempt() == 1) {
                throw new IllegalStateException("payment service down");
            }
        }));

        ns.publish(Message.to("orders"));
        tracing.awaitSpans(2);
        clock.advance(Duration.ofSeconds(30));
        List<SpanData> spans = tracing.awaitSpans(3);

        SpanData producer = spans.get(0);
        SpanData first = spans.get(1);
        SpanData second = spans.get(2);
        assertThat(first.getParentSpanId()).isEqualTo(producer.getSpanId());
        assertThat(second.getParentSpanId()).isEqualTo(producer.getSpanId());
        assertThat(first.getAttributes().get(QueueTracing.ATTEMPT)).isEqualTo(1L);
        assertThat(first.getAttributes().get(QueueTracing.OUTCOME)).isEqualTo("retry_scheduled");
        assertThat(first.getAttributes().get(QueueTracing.RETRY_AT)).isEqualTo(T0.plusSeconds(30).toString());
        assertThat(first.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
        assertThat(first.getEvents()).singleElement().satisfies(event -> assertThat(event.getName()).isEqualTo("exception"));
        assertThat(second.getAttributes().get(QueueTracing.ATTEMPT)).isEqualTo(2L);
        assertThat(second.getAttributes().get(QueueTracing.OUTCOME)).isEqualTo("acked");
        assertThat(second.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
    }

    @Test
    void aDeadLetterEndsItsSpanWithErrorStatus() {
        start(QueueTracing.create(tracing.sdk));
        ns.subscribe(Subscriber.on("orders").handleDelivery((delivery, context) -> context.fail("order cancelled")));

        ns.publish(Message.to("orders"));

        SpanData consumer = tracing.awaitSpans(2).get(1);
        assertThat(consumer.getAttributes().get(QueueTracing.OUTCOME)).isEqualTo("dead_lettered");
        assertThat(consumer.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
        assertThat(consumer.getStatus().getDescription()).isEqualTo("order cancelled");
    }

    @Test
    void withoutParentFromMessageAHandlerRunStartsATraceLinkedToTheProducer() {
        start(QueueTracing.builder(tracing.sdk).parentFromMessage(false).build());
        ns.subscribe(Subscriber.on("orders").handleDelivery((delivery, context) -> { }));

        ns.publish(Message.to("orders"));

        List<SpanData> spans = tracing.awaitSpans(2);
        SpanData producer = spans.get(0);
        SpanData consumer = spans.get(1);
        assertThat(consumer.getTraceId()).isNotEqualTo(producer.getTraceId());
        assertThat(consumer.getParentSpanContext().isValid()).isFalse();
        assertThat(consumer.getLinks()).singleElement().satisfies(link -> {
            assertThat(link.getSpanContext().getTraceId()).isEqualTo(producer.getTraceId());
            assertThat(link.getSpanContext().getSpanId()).isEqualTo(producer.getSpanId());
        });
    }

    @Test
    void aBatchToSeveralTopicsIsOneProducerSpanWhoseContextEveryMessageCarries() {
        start(QueueTracing.create(tracing.sdk));

        List<MessageId> ids = ns.publishAll(List.of(Message.to("orders"), Message.to("mail"))).stream().map(r -> r.id()).toList();

        SpanData producer = tracing.awaitSpans(1).get(0);
        assertThat(producer.getName()).isEqualTo("publish");
        assertThat(producer.getAttributes().get(QueueTracing.BATCH_MESSAGE_COUNT)).isEqualTo(2L);
        assertThat(producer.getAttributes().get(QueueTracing.DESTINATION_NAME)).isNull();
        for (MessageId id : ids) {
            assertThat(ns.inspect(id).orElseThrow().headers().get("traceparent")).contains(producer.getSpanId());
        }
    }

    @Test
    void aRefusedPublishEndsItsSpanWithErrorStatus() {
        start(QueueTracing.create(tracing.sdk));

        assertThatThrownBy(() -> ns.publish(Message.to("orders").json("not json"))).isInstanceOf(InvalidInputException.class);

        SpanData producer = tracing.awaitSpans(1).get(0);
        assertThat(producer.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
        assertThat(producer.getEvents()).singleElement().satisfies(event -> assertThat(event.getName()).isEqualTo("exception"));
    }
}
