package dev.queue.inmemory;

import dev.queue.api.ManualClock;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.Namespace;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.codec.jackson.JacksonPayloadCodec;
import dev.queue.domain.engine.QueueEngine;
import dev.queue.domain.port.MessageRef;
import dev.queue.domain.port.MessageStore;
import dev.queue.domain.time.ManualTime;
import dev.queue.testkit.CapturedLog;
import org.junit.jupiter.api.Test;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A handler that finishes, and whose acknowledgement completes its message, while the lease extension naming it
 * runs: the extension finds the message gone, and that is no lost lease to warn an operator about.
 */
class LeaseExtensionRaceTest {

    private static final Instant START = Instant.parse("2030-01-01T00:00:00Z");
    private static final Duration LEASE = Duration.ofSeconds(10);

    @Test
    void aHandlerThatFinishesWhileItsExtensionRunsLogsNoLostLease() throws Exception {
        ManualClock clock = new ManualClock(START);
        InMemoryWakeUps wakeUps = new InMemoryWakeUps();
        InMemoryMessageStore real = new InMemoryMessageStore(new ManualTime(clock), wakeUps);
        AtomicReference<MessageId> published = new AtomicReference<>();
        CountDownLatch extensionStarted = new CountDownLatch(1);
        AtomicBoolean extensionReturned = new AtomicBoolean();
        MessageStore store = (MessageStore) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {MessageStore.class},
                (proxy, method, args) -> {
                    boolean extension = method.getName().equals("messageExtendIfLeased");
                    if (extension) {
                        extensionStarted.countDown();
                        // Held back until the handler has returned and its acknowledgement completed the message.
                        await().atMost(Duration.ofSeconds(10)).until(() -> real.messageFind(new MessageRef("n", published.get().value())).isEmpty());
                    }
                    try {
                        return method.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    } finally {
                        if (extension) {
                            extensionReturned.set(true);
                        }
                    }
                });
        CapturedLog log = CapturedLog.start();
        try (log; QueueEngine engine = QueueEngine.builder().store(store).scheduleStore(new InMemoryScheduleStore(real)).wakeUps(wakeUps).clock(new ManualTime(clock))
                .options(QueueOptions.defaults().sweepInterval(Duration.ofMillis(50))).defaultCodec(new JacksonPayloadCodec())
                .build()) {
            Namespace ns = engine.namespace("n");
            ns.subscribe(Subscriber.on("t").lease(LEASE).handleDelivery((delivery, context) -> {
                // Less than half the lease left: the dispatcher's next round extends it, while this handler runs.
                clock.advance(LEASE.dividedBy(2).plusSeconds(1));
                assertThat(extensionStarted.await(10, TimeUnit.SECONDS)).as("extension started").isTrue();
            }));
            published.set(ns.publish(Message.to("t")).id());

            await().atMost(Duration.ofSeconds(10)).untilTrue(extensionReturned);
            assertThat(real.messageFind(new MessageRef("n", published.get().value()))).isEmpty();
        }
        assertThat(log.text()).doesNotContain("lease lost");
    }
}
