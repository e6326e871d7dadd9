package dev.queue.opentelemetry;

import dev.queue.api.InvalidInputException;
import dev.queue.api.Message;
import dev.queue.api.PublishResult;
import dev.queue.api.observation.HandleEnd;
import dev.queue.api.observation.HandleObservation;
import dev.queue.api.observation.HandleOutcome;
import dev.queue.api.observation.HandleStart;
import dev.queue.api.observation.PublishEvent;
import dev.queue.api.observation.PublishObservation;
import dev.queue.api.observation.QueueInterceptor;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Traces a queue with OpenTelemetry. Register it as an interceptor:
 *
 * <pre>{@code
 * Queue queue = PostgresQueue.create(dataSource, PostgresQueueConfig.defaults()
 *         .queueOptions(QueueOptions.defaults().interceptor(QueueTracing.create(openTelemetry))));
 * }</pre>
 *
 * <p>A publish runs in a PRODUCER span, child of the caller's current span, and writes that span's context into
 * every message's headers ({@code traceparent}, and {@code tracestate} when set), so it is stored in the row and
 * read by whichever process handles the message. A handler runs in a CONSUMER span, current on the handler's thread
 * so the handler's own spans nest under it, ended once the outcome is recorded.
 *
 * <p>The consumer span is a child of the producer span, and also links to it. A subscriber's thread has no context
 * of its own to continue, so the messaging conventions let the message's creation context be the parent; that
 * puts the request that published and every attempt at handling the message in one trace, which is what people
 * look for. A message that waits hours makes that trace long; {@link Builder#parentFromMessage(boolean)} false
 * starts each handler run in a trace of its own, linked to the producer span, instead.
 */
public final class QueueTracing implements QueueInterceptor {

    static final String INSTRUMENTATION_NAME = "dev.queue";
    static final String SYSTEM = "queue";

    static final AttributeKey<String> MESSAGING_SYSTEM = AttributeKey.stringKey("messaging.system");
    static final AttributeKey<String> DESTINATION_NAME = AttributeKey.stringKey("messaging.destination.name");
    static final AttributeKey<String> OPERATION_TYPE = AttributeKey.stringKey("messaging.operation.type");
    static final AttributeKey<String> OPERATION_NAME = AttributeKey.stringKey("messaging.operation.name");
    static final AttributeKey<String> MESSAGE_ID = AttributeKey.stringKey("messaging.message.id");
    static final AttributeKey<Long> BATCH_MESSAGE_COUNT = AttributeKey.longKey("messaging.batch.message_count");
    static final AttributeKey<String> NAMESPACE = AttributeKey.stringKey("queue.namespace");
    static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("queue.message.attempt");
    static final AttributeKey<Long> MAX_ATTEMPTS = AttributeKey.longKey("queue.message.max_attempts");
    static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("queue.outcome");
    static final AttributeKey<String> RETRY_AT = AttributeKey.stringKey("queue.retry_at");
    static final AttributeKey<Long> DUPLICATES = AttributeKey.longKey("queue.publish.duplicates");

    private static final TextMapGetter<Map<String, String>> HEADERS = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
            return carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    };

    private final Tracer tracer;
    private final TextMapPropagator propagator;
    private final boolean parentFromMessage;

    private QueueTracing(Builder builder) {
        this.tracer = builder.openTelemetry.getTracer(INSTRUMENTATION_NAME);
        this.propagator = builder.propagator;
        this.parentFromMessage = builder.parentFromMessage;
    }

    /**
     * Tracing with the defaults of {@link #builder(OpenTelemetry)}.
     *
     * @param openTelemetry where the tracer and the propagator come from
     * @return the interceptor, ready for {@code QueueOptions.interceptor}
     * @throws InvalidInputException when {@code openTelemetry} is null
     */
    public static QueueTracing create(OpenTelemetry openTelemetry) {
        return builder(openTelemetry).build();
    }

    /**
     * Starts a configuration. The propagator is the one {@code openTelemetry} is configured with, or W3C trace
     * context when it has none (an SDK built by hand without propagators would otherwise carry nothing).
     *
     * @param openTelemetry where the tracer and the propagator come from
     * @return a builder with the defaults
     * @throws InvalidInputException when {@code openTelemetry} is null
     */
    public static Builder builder(OpenTelemetry openTelemetry) {
        return new Builder(InvalidInputException.requireNonNull(openTelemetry, "openTelemetry", "an OpenTelemetry instance"));
    }

    @Override
    public PublishObservation onPublish(PublishEvent publish) {
        List<Message> messages = publish.messages();
        String topic = commonTopic(messages);
        SpanBuilder builder = tracer.spanBuilder(topic == null ? "publish" : "publish " + topic)
                .setSpanKind(SpanKind.PRODUCER)
                .setAttribute(MESSAGING_SYSTEM, SYSTEM)
                .setAttribute(OPERATION_TYPE, "send")
                .setAttribute(OPERATION_NAME, "publish")
                .setAttribute(NAMESPACE, publish.namespace());
        if (topic != null) {
            builder.setAttribute(DESTINATION_NAME, topic);
        }
        if (messages.size() != 1) {
            builder.setAttribute(BATCH_MESSAGE_COUNT, (long) messages.size());
        }
        Span span = builder.startSpan();
        Context context = Context.current().with(span);
        Map<String, String> headers = new HashMap<>();
        propagator.inject(context, headers, Map::put);
        headers.forEach(publish::headerOnEach);
        return new Publishing(span, context.makeCurrent());
    }

    /** The topic every message goes to, or null when they go to several (or there are none). */
    private static String commonTopic(List<Message> messages) {
        String topic = null;
        for (Message message : messages) {
            String each = message == null ? null : message.topic();
            if (each == null || (topic != null && !topic.equals(each))) {
                return null;
            }
            topic = each;
        }
        return topic;
    }

    /** One publish: its span is current while the store writes, so a JDBC span nests under it. */
    private static final class Publishing implements PublishObservation {
        private final Span span;
        private final Scope scope;

        Publishing(Span span, Scope scope) {
            this.span = span;
            this.scope = scope;
        }

        @Override
        public void published(PublishEvent event, List<PublishResult> results) {
            try {
                if (results.size() == 1) {
                    span.setAttribute(MESSAGE_ID, results.get(0).id().toString());
                }
                long duplicates = results.stream().filter(PublishResult.Duplicate.class::isInstance).count();
                if (duplicates > 0) {
                    span.setAttribute(DUPLICATES, duplicates);
                }
            } finally {
                scope.close();
                span.end();
            }
        }

        @Override
        public void failed(PublishEvent event, RuntimeException error) {
            try {
                span.recordException(error);
                span.setStatus(StatusCode.ERROR, error.getClass().getSimpleName());
            } finally {
                scope.close();
                span.end();
            }
        }
    }

    @Override
    public HandleObservation onHandle(HandleStart start) {
        Context producer = propagator.extract(Context.root(), start.headers(), HEADERS);
        SpanContext producerSpan = Span.fromContext(producer).getSpanContext();
        SpanBuilder builder = tracer.spanBuilder("process " + start.topic())
                .setSpanKind(SpanKind.CONSUMER)
                .setAttribute(MESSAGING_SYSTEM, SYSTEM)
                .setAttribute(DESTINATION_NAME, start.topic())
                .setAttribute(OPERATION_TYPE, "process")
                .setAttribute(OPERATION_NAME, "process")
                .setAttribute(MESSAGE_ID, start.messageId().toString())
                .setAttribute(NAMESPACE, start.namespace())
                .setAttribute(ATTEMPT, (long) start.attempt())
                .setAttribute(MAX_ATTEMPTS, (long) start.delivery().maxAttempts());
        if (parentFromMessage && producerSpan.isValid()) {
            builder.setParent(producer);
        } else {
            builder.setNoParent();
        }
        if (producerSpan.isValid()) {
            builder.addLink(producerSpan);
        }
        Span span = builder.startSpan();
        return new Handling(span, span.makeCurrent());
    }

    /** One handler run: current on the handler's thread until the handler returns, ended with the outcome. */
    private static final class Handling implements HandleObservation {
        private final Span span;
        private final Scope scope;

        Handling(Span span, Scope scope) {
            this.span = span;
            this.scope = scope;
        }

        @Override
        public void handlerFinished(Duration duration, Throwable failure) {
            // Called on the thread that made the span current, as a scope must be closed.
            scope.close();
            if (failure != null) {
                span.recordException(failure);
            }
        }

        @Override
        public void ended(HandleEnd end) {
            HandleOutcome outcome = end.outcome();
            span.setAttribute(OUTCOME, outcome.name().toLowerCase(Locale.ROOT));
            if (end.retryAt() != null) {
                span.setAttribute(RETRY_AT, end.retryAt().toString());
            }
            // A handler that threw, a dead letter and a result that never reached the store are failures of this
            // run; a retry the handler asked for without throwing is not.
            if (outcome == HandleOutcome.DEAD_LETTERED || outcome == HandleOutcome.LEASE_LOST
                    || outcome == HandleOutcome.NOT_RECORDED || end.failure() != null) {
                span.setStatus(StatusCode.ERROR, end.error() != null ? end.error() : outcome.name().toLowerCase(Locale.ROOT));
            }
            span.end();
        }
    }

    /** The configuration of a {@link QueueTracing}. */
    public static final class Builder {
        private final OpenTelemetry openTelemetry;
        private TextMapPropagator propagator;
        private boolean parentFromMessage = true;

        private Builder(OpenTelemetry openTelemetry) {
            this.openTelemetry = openTelemetry;
            TextMapPropagator configured = openTelemetry.getPropagators().getTextMapPropagator();
            this.propagator = configured.fields().isEmpty() ? W3CTraceContextPropagator.getInstance() : configured;
        }

        /**
         * How trace context is written to and read from message headers.
         *
         * @param value the propagator
         * @return this builder
         * @throws InvalidInputException when {@code value} is null
         */
        public Builder propagator(TextMapPropagator value) {
            this.propagator = InvalidInputException.requireNonNull(value, "propagator", "a TextMapPropagator");
            return this;
        }

        /**
         * True (the default): a handler run is a child of the producer span, in the publisher's trace. False: it
         * starts a trace of its own, linked to the producer span.
         *
         * @param value whether handler runs continue the publisher's trace
         * @return this builder
         */
        public Builder parentFromMessage(boolean value) {
            this.parentFromMessage = value;
            return this;
        }

        /**
         * The interceptor as configured.
         *
         * @return a new {@link QueueTracing}
         */
        public QueueTracing build() {
            return new QueueTracing(this);
        }
    }
}
