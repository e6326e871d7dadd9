package dev.queue.inmemory;

import dev.queue.api.ManualClock;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.Namespace;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.api.observation.HandleEnd;
import dev.queue.api.observation.HandleObservation;
import dev.queue.api.observation.HandleStart;
import dev.queue.api.observation.QueueInterceptor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Handler runs dispatched by hand settle on the calling thread, without the acknowledgement batcher: the end of
 * each run is heard there, before {@code runDue()} returns.
 */
class ManualDispatchObservationTest {

    private final ManualClock clock = new ManualClock(Instant.parse("2025-03-01T12:00:00Z"));
    private final List<String> events = new ArrayList<>();
    private InMemoryQueue queue;

    @AfterEach
    void close() {
        queue.close();
    }

    @Test
    void eachRunEndsBeforeRunDueReturnsWithTheOutcomeRecorded() {
        queue = InMemoryQueue.withClock(clock, QueueOptions.defaults().interceptor(new QueueInterceptor() {
            @Override
            public HandleObservation onHandle(HandleStart start) {
                events.add("start " + start.messageId() + " attempt " + start.attempt());
                return new HandleObservation() {
                    @Override
                    public void ended(HandleEnd end) {
                        events.add("end " + end.messageId() + " " + end.outcome() + " ran " + end.handlerDuration()
                                + " retry at " + end.retryAt());
                    }
                };
            }
        }));
        Namespace ns = queue.namespace("shop");
        ns.subscribe(Subscriber.on("mail").handleDelivery((delivery, context) -> {
            clock.advance(Duration.ofMillis(40));
            if (delivery.headers().containsKey("retry")) {
                context.retryIn(Duration.ofMinutes(1), "mail server busy");
            }
        }));
        MessageId ok = ns.publish(Message.to("mail").json("{}")).id();
        MessageId busy = ns.publish(Message.to("mail").json("{}").header("retry", "yes")).id();

        assertThat(queue.runDue()).isEqualTo(2);

        Instant retryAt = Instant.parse("2025-03-01T12:00:00.080Z").plus(Duration.ofMinutes(1));
        assertThat(events).containsExactly(
                "start " + ok + " attempt 1",
                "end " + ok + " ACKED ran PT0.04S retry at null",
                "start " + busy + " attempt 1",
                "end " + busy + " RETRY_SCHEDULED ran PT0.04S retry at " + retryAt);
    }
}
