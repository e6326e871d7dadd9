package dev.queue.testkit.contract;

import dev.queue.api.Delivery;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.PublishResult;
import dev.queue.api.QueueOptions;
import dev.queue.api.Schedule;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import dev.queue.api.observation.HandleEnd;
import dev.queue.api.observation.HandleObservation;
import dev.queue.api.observation.HandleStart;
import dev.queue.api.observation.MaintenanceEvent;
import dev.queue.api.observation.PublishEvent;
import dev.queue.api.observation.PublishObservation;
import dev.queue.api.observation.QueueInterceptor;
import dev.queue.testkit.CapturedLog;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Interceptors registered in the queue's options: each event of a publish, a handler run (acknowledged, retried,
 * dead-lettered) and a maintenance pass fires once, in order, with the values the queue acted on; headers an
 * interceptor adds are stored and delivered; an interceptor that throws breaks nothing.
 */
public abstract class ObservationContract extends ContractSupport {

    private final Recorder recorder = new Recorder();

    @Override
    protected QueueOptions options() {
        recorder.events.clear();
        return super.options().interceptor(recorder);
    }

    @Test
    public void publishIsObservedBeforeAndAfterWithTheStoredIds() {
        List<PublishResult> results = ns.publishAll(List.of(Message.to("a").json("{\"n\":1}"), Message.to("b").json("{\"n\":2}")));

        assertThat(recorder.events).containsExactly(
                "publish " + NAMESPACE + " [a, b] caller-tx=false",
                "published " + NAMESPACE + " " + results.get(0).id() + "," + results.get(1).id());
    }

    @Test
    public void headersAddedBeforePublishAreStoredAndDelivered() {
        MessageId id = publish(Message.to("a").header("own", "kept"));

        assertThat(info(id).headers()).containsEntry("trace", "t-1").containsEntry("own", "kept");
        assertThat(pullOne("a").headers()).containsEntry("trace", "t-1").containsEntry("own", "kept");
    }

    @Test
    public void aRejectedPublishIsObservedAsFailedAndStoresNothing() {
        assertThatThrownBy(() -> ns.publish(Message.to("bad topic!"))).hasMessageContaining("topic");

        assertThat(recorder.events).containsExactly("publish " + NAMESPACE + " [bad topic!] caller-tx=false",
                "publish failed InvalidNameException");
        assertThat(ns.stats().total()).isZero();
    }

    @Test
    public void anAcknowledgedRunIsObservedInOrderWithItsTimes() {
        Instant publishedAt = now();
        MessageId id = publish("a", "{}");
        advance(Duration.ofSeconds(5));
        recorder.events.clear();

        try (Subscription ignored = ns.subscribe(Subscriber.on("a").handleDelivery((d, ctx) -> advance(Duration.ofMillis(250))))) {
            eventually().until(() -> recorder.events.size() == 3);
        }

        Instant startedAt = publishedAt.plusSeconds(5);
        assertThat(recorder.events).containsExactly(
                "start " + id + " a " + NAMESPACE + " attempt=1 at=" + startedAt + " waited=PT5S trace=t-1",
                "finished " + id + " PT0.25S failure=null",
                "ended " + id + " ACKED attempt=1 started=" + startedAt + " ran=PT0.25S retryAt=null error=null");
    }

    @Test
    public void aRetryAndThenADeadLetterAreObservedWithTheirAttempts() {
        MessageId id = publish(Message.to("a").maxAttempts(2));
        recorder.events.clear();

        try (Subscription ignored = ns.subscribe(Subscriber.on("a").handleDelivery((d, ctx) -> {
            if (d.attempt() == 1) {
                ctx.retryIn(Duration.ofSeconds(30), "not yet");
                return;
            }
            throw new IllegalStateException("broken");
        }))) {
            eventually().until(() -> recorder.events.size() == 3);
            advance(Duration.ofSeconds(30));
            eventually().until(() -> recorder.events.size() == 6);
        }

        Instant retryAt = START.plusSeconds(30);
        assertThat(recorder.events).containsExactly(
                "start " + id + " a " + NAMESPACE + " attempt=1 at=" + START + " waited=PT0S trace=t-1",
                "finished " + id + " PT0S failure=null",
                "ended " + id + " RETRY_SCHEDULED attempt=1 started=" + START + " ran=PT0S retryAt=" + retryAt + " error=not yet",
                "start " + id + " a " + NAMESPACE + " attempt=2 at=" + retryAt + " waited=PT30S trace=t-1",
                "finished " + id + " PT0S failure=IllegalStateException",
                "ended " + id + " DEAD_LETTERED attempt=2 started=" + retryAt + " ran=PT0S retryAt=null"
                        + " error=java.lang.IllegalStateException: broken");
    }

    @Test
    public void anUndecodablePayloadIsObservedAsDeadLettered() {
        MessageId id = publish("a", "[1, 2]");
        recorder.events.clear();

        try (Subscription ignored = ns.subscribe(Subscriber.on("a").handle(Order.class, (order, ctx) -> { }))) {
            eventually().until(() -> recorder.events.size() == 3);
        }

        assertThat(recorder.events.get(1)).startsWith("finished " + id + " PT0S failure=");
        assertThat(recorder.events.get(2)).startsWith("ended " + id + " DEAD_LETTERED attempt=1")
                .contains("error=payload cannot be decoded as " + Order.class.getName());
    }

    @Test
    public void expiredLeasesRescuedAreObserved() {
        publish("a", "{}");
        ns.pullOne(pull("a").visibility(Duration.ofSeconds(10))).orElseThrow();
        advance(Duration.ofSeconds(11));
        recorder.events.clear();

        Delivery again = pullOne("a");

        assertThat(again.attempt()).isEqualTo(2);
        assertThat(recorder.events).containsExactly("maintenance LeasesRescued[namespace=" + NAMESPACE + ", requeued=1, deadLettered=0]");
    }

    @Test
    public void aScheduleFiringIsObserved() {
        ns.schedules().create(Schedule.every("heartbeat", Duration.ofMinutes(5)).startAt(START).publishing(Message.to("beat")));
        // the queue's own ticker may fire it before tick() does: either firing must be observed, so nothing that
        // was recorded since the create is cleared
        ns.schedules().tick();

        eventually().until(() -> recorder.events.stream().anyMatch(e -> e.startsWith("maintenance ScheduleFired")));
        MessageId fired = pullOne("beat").id();
        assertThat(recorder.events).contains("maintenance ScheduleFired[namespace=" + NAMESPACE + ", schedule=heartbeat, dueAt=" + START
                + ", messageId=" + fired + ", duplicate=false, nextRunAt=" + START.plus(Duration.ofMinutes(5)) + "]");
    }

    @Test
    public void anInterceptorThatThrowsBreaksNeitherPublishNorHandlingNorTheOthers() {
        recreateQueue(super.options().interceptor(new Throwing()).interceptor(recorder));
        recorder.events.clear();
        MessageId id;
        try (CapturedLog log = CapturedLog.start()) {
            id = publish("a", "{}");
            try (Subscription ignored = ns.subscribe(Subscriber.on("a").handleDelivery((d, ctx) -> { }))) {
                eventually().until(() -> recorder.events.size() == 5);
            }
            assertThat(ns.inspect(id)).as("acknowledged despite the throwing interceptor").isEmpty();
            assertThat(log.linesContaining("interceptor " + Throwing.class.getName()))
                    .anyMatch(line -> line.contains("message " + id) && line.contains("topic a") && line.contains("namespace " + NAMESPACE));
        }
        assertThat(recorder.events).hasSize(5);
        assertThat(recorder.events.get(4)).startsWith("ended " + id + " ACKED");
    }

    /** Writes each event as one line, so a test compares the whole sequence at once. */
    static final class Recorder implements QueueInterceptor {
        final List<String> events = new CopyOnWriteArrayList<>();

        @Override
        public PublishObservation onPublish(PublishEvent publish) {
            events.add("publish " + publish.namespace() + " " + publish.messages().stream().map(Message::topic).toList()
                    + " caller-tx=" + publish.inCallerTransaction());
            publish.headerOnEach("trace", "t-1");
            return new PublishObservation() {
                @Override
                public void published(PublishEvent event, List<PublishResult> results) {
                    events.add("published " + event.namespace() + " " + String.join(",",
                            results.stream().map(r -> r.id().toString()).toList()));
                }

                @Override
                public void failed(PublishEvent event, RuntimeException error) {
                    events.add("publish failed " + error.getClass().getSimpleName());
                }
            };
        }

        @Override
        public HandleObservation onHandle(HandleStart start) {
            events.add("start " + start.messageId() + " " + start.topic() + " " + start.namespace() + " attempt=" + start.attempt()
                    + " at=" + start.startedAt() + " waited=" + start.sincePublished() + " trace=" + start.headers().get("trace"));
            return new HandleObservation() {
                @Override
                public void handlerFinished(Duration duration, Throwable failure) {
                    events.add("finished " + start.messageId() + " " + duration + " failure="
                            + (failure == null ? null : failure.getClass().getSimpleName()));
                }

                @Override
                public void ended(HandleEnd end) {
                    events.add("ended " + end.messageId() + " " + end.outcome() + " attempt=" + end.attempt() + " started=" + end.startedAt()
                            + " ran=" + end.handlerDuration() + " retryAt=" + end.retryAt() + " error=" + end.error());
                }
            };
        }

        @Override
        public void onMaintenance(MaintenanceEvent event) {
            events.add("maintenance " + event);
        }
    }

    /** Fails at every point it is called, including inside the observations it hands out. */
    static final class Throwing implements QueueInterceptor {
        @Override
        public PublishObservation onPublish(PublishEvent publish) {
            throw new IllegalStateException("interceptor bug before publish");
        }

        @Override
        public HandleObservation onHandle(HandleStart start) {
            return new HandleObservation() {
                @Override
                public void handlerFinished(Duration duration, Throwable failure) {
                    throw new IllegalStateException("interceptor bug after the handler");
                }

                @Override
                public void ended(HandleEnd end) {
                    throw new IllegalStateException("interceptor bug at the end");
                }
            };
        }
    }
}
