package dev.queue.micrometer;

import dev.queue.api.Backoff;
import dev.queue.api.InvalidInputException;
import dev.queue.api.ManualClock;
import dev.queue.api.Message;
import dev.queue.api.Namespace;
import dev.queue.api.Pull;
import dev.queue.api.QueueOptions;
import dev.queue.api.Schedule;
import dev.queue.api.Subscriber;
import dev.queue.api.observation.HandleOutcome;
import dev.queue.inmemory.InMemoryQueue;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MockClock;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A known workload on the in-memory queue, dispatched by hand on a manual clock, so every meter has one exact value:
 * handlers move the clock by a known amount, and the registry's clock is set to the queue's before gauges are read.
 */
class QueueMetricsTest {

    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");
    private static final String NS = "shop";

    private final ManualClock clock = new ManualClock(T0);
    private final MockClock registryClock = new MockClock();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry(SimpleConfig.DEFAULT, registryClock);
    private final QueueMetrics metrics = new QueueMetrics(registry);
    private InMemoryQueue queue;
    private Namespace ns;

    @BeforeEach
    void createQueue() {
        // Timers keep their max over a window of the registry's clock, so it starts where the queue's clock does.
        syncRegistryClock();
        queue = InMemoryQueue.withClock(clock, QueueOptions.defaults().interceptor(metrics)
                .backoff("mail", Backoff.fixed(Duration.ofSeconds(10))));
        ns = queue.namespace(NS);
        metrics.watch(ns);
    }

    @AfterEach
    void close() {
        metrics.close();
        queue.close();
    }

    @Test
    void everyMeterHoldsItsExactValueAfterAKnownWorkload() {
        // At T0: three mail messages (the third fails on both its attempts), one report and its duplicate, a publish
        // the queue refuses, a sync message pulled by hand with a 5 s lease, and a schedule due now.
        ns.publish(Message.to("mail").json("{\"n\":1}"));
        ns.publish(Message.to("mail").json("{\"n\":2}"));
        ns.publish(Message.to("mail").json("{\"n\":3}").header("fail", "yes").maxAttempts(2));
        ns.publish(Message.to("report").uniqueKey("daily"));
        ns.publish(Message.to("report").uniqueKey("daily"));
        assertThatThrownBy(() -> ns.publish(Message.to("bad topic!"))).isInstanceOf(InvalidInputException.class);
        ns.publish(Message.to("sync"));
        ns.pullOne(Pull.from("sync").visibility(Duration.ofSeconds(5))).orElseThrow();
        ns.schedules().create(Schedule.every("heartbeat", Duration.ofMinutes(5)).startAt(T0).publishing(Message.to("beat")));
        ns.subscribe(Subscriber.on("mail").handleDelivery((delivery, context) -> {
            clock.advance(Duration.ofMillis(100));
            if (delivery.headers().containsKey("fail")) {
                throw new IllegalStateException("mail server down");
            }
        }));

        // T0+2 s: the schedule fires, the mail handlers run one after another (100 ms each), the third is retried.
        clock.advance(Duration.ofSeconds(2));
        assertThat(queue.runDue()).isEqualTo(3);
        // T0+12.3 s: the sync lease (expired at T0+5 s) is rescued; the third mail message fails its last attempt, which
        // leaves the clock at T0+12.4 s.
        clock.advance(Duration.ofSeconds(10));
        assertThat(queue.runDue()).isEqualTo(1);
        metrics.refreshStats();
        syncRegistryClock();

        assertThat(counter(QueueMetrics.PUBLISHED, "topic", "mail")).isEqualTo(3);
        assertThat(counter(QueueMetrics.PUBLISHED, "topic", "report")).isEqualTo(1);
        assertThat(counter(QueueMetrics.PUBLISHED, "topic", "sync")).isEqualTo(1);
        assertThat(counter(QueueMetrics.DUPLICATES, "topic", "mail")).isZero();
        assertThat(counter(QueueMetrics.DUPLICATES, "topic", "report")).isEqualTo(1);
        assertThat(counter(QueueMetrics.DUPLICATES, "topic", "sync")).isZero();
        assertThat(counter(QueueMetrics.PUBLISH_FAILURES, "exception", "InvalidNameException")).isEqualTo(1);

        assertThat(handled(HandleOutcome.ACKED)).isEqualTo(2);
        assertThat(handled(HandleOutcome.RETRY_SCHEDULED)).isEqualTo(1);
        assertThat(handled(HandleOutcome.DEAD_LETTERED)).isEqualTo(1);
        assertThat(handled(HandleOutcome.LEASE_LOST)).isZero();
        assertThat(handled(HandleOutcome.NOT_RECORDED)).isZero();
        assertTimer(handlerDuration(HandleOutcome.ACKED), 2, Duration.ofMillis(200), Duration.ofMillis(100));
        assertTimer(handlerDuration(HandleOutcome.RETRY_SCHEDULED), 1, Duration.ofMillis(100), Duration.ofMillis(100));
        assertTimer(handlerDuration(HandleOutcome.DEAD_LETTERED), 1, Duration.ofMillis(100), Duration.ofMillis(100));
        assertTimer(handlerDuration(HandleOutcome.LEASE_LOST), 0, Duration.ZERO, Duration.ZERO);
        assertTimer(handlerDuration(HandleOutcome.NOT_RECORDED), 0, Duration.ZERO, Duration.ZERO);
        // First attempts started 2 s, 2.1 s and 2.2 s after their publish; the retry 12.3 s after it.
        assertTimer(publishToStart("first"), 3, Duration.ofMillis(6300), Duration.ofMillis(2200));
        assertTimer(publishToStart("retry"), 1, Duration.ofMillis(12300), Duration.ofMillis(12300));
        assertThat(gauge(QueueMetrics.IN_FLIGHT, "mail")).isZero();

        assertThat(counter(QueueMetrics.RESCUED, "outcome", "requeued")).isEqualTo(1);
        assertThat(counter(QueueMetrics.RESCUED, "outcome", "dead_lettered")).isZero();
        assertThat(counter(QueueMetrics.SCHEDULES_FIRED, "schedule", "heartbeat")).isEqualTo(1);

        assertTopicGauges("mail", 0, 0, 1, 0);
        assertTopicGauges("report", 1, 0, 0, 12.4);
        assertTopicGauges("sync", 1, 0, 0, 0.1);
        assertTopicGauges("beat", 1, 0, 0, 10.4);

        assertThat(meterNames()).containsExactly(
                QueueMetrics.HANDLER_DURATION, QueueMetrics.RESCUED, QueueMetrics.DEAD, QueueMetrics.DUPLICATES,
                QueueMetrics.HANDLED, QueueMetrics.IN_FLIGHT, QueueMetrics.OLDEST_DUE_AGE, QueueMetrics.PENDING,
                QueueMetrics.PUBLISHED, QueueMetrics.RUNNING, QueueMetrics.PUBLISH_FAILURES, QueueMetrics.PUBLISH_TO_START,
                QueueMetrics.SCHEDULES_FIRED);
    }

    @Test
    void aMessageInItsHandlerCountsAsInFlight() {
        double[] seen = new double[1];
        ns.subscribe(Subscriber.on("mail").handleDelivery((delivery, context) -> seen[0] = gauge(QueueMetrics.IN_FLIGHT, "mail")));
        ns.publish(Message.to("mail"));

        queue.runDue();

        assertThat(seen[0]).isEqualTo(1);
        assertThat(gauge(QueueMetrics.IN_FLIGHT, "mail")).isZero();
    }

    @Test
    void gaugesKeepTheirLastValuesUntilTheNextRefresh() {
        ns.publish(Message.to("report"));
        metrics.refreshStats();
        ns.publish(Message.to("report"));

        assertThat(gauge(QueueMetrics.PENDING, "report")).isEqualTo(1);
        metrics.refreshStats();
        assertThat(gauge(QueueMetrics.PENDING, "report")).isEqualTo(2);
    }

    @Test
    void aRefreshIntervalOutsideItsRangeIsRefusedNamingIt() {
        assertThatThrownBy(() -> metrics.refreshStatsEvery(Duration.ofMillis(10)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("interval").hasMessageContaining("PT0.01S");
    }

    private void syncRegistryClock() {
        registryClock.add(Duration.between(Instant.ofEpochMilli(registryClock.wallTime()), clock.now()));
    }

    private double counter(String name, String tag, String value) {
        return registry.get(name).tags("namespace", NS, tag, value).counter().count();
    }

    private double handled(HandleOutcome outcome) {
        return registry.get(QueueMetrics.HANDLED).tags("namespace", NS, "topic", "mail", "outcome", tag(outcome)).counter().count();
    }

    private Timer handlerDuration(HandleOutcome outcome) {
        return registry.get(QueueMetrics.HANDLER_DURATION).tags("namespace", NS, "topic", "mail", "outcome", tag(outcome)).timer();
    }

    private Timer publishToStart(String attempt) {
        return registry.get(QueueMetrics.PUBLISH_TO_START).tags("namespace", NS, "topic", "mail", "attempt", attempt).timer();
    }

    private double gauge(String name, String topic) {
        return registry.get(name).tags("namespace", NS, "topic", topic).gauge().value();
    }

    private void assertTopicGauges(String topic, double pending, double running, double dead, double oldestDueAgeSeconds) {
        assertThat(gauge(QueueMetrics.PENDING, topic)).as("pending of %s", topic).isEqualTo(pending);
        assertThat(gauge(QueueMetrics.RUNNING, topic)).as("running of %s", topic).isEqualTo(running);
        assertThat(gauge(QueueMetrics.DEAD, topic)).as("dead of %s", topic).isEqualTo(dead);
        assertThat(registry.get(QueueMetrics.OLDEST_DUE_AGE).tags("namespace", NS, "topic", topic).timeGauge().value(TimeUnit.SECONDS))
                .as("oldest due age of %s", topic).isEqualTo(oldestDueAgeSeconds);
    }

    private static void assertTimer(Timer timer, long count, Duration total, Duration max) {
        assertThat(timer.count()).as("count of %s", timer.getId()).isEqualTo(count);
        assertThat(timer.totalTime(TimeUnit.NANOSECONDS)).as("total of %s", timer.getId()).isEqualTo((double) total.toNanos());
        assertThat(timer.max(TimeUnit.NANOSECONDS)).as("max of %s", timer.getId()).isEqualTo((double) max.toNanos());
    }

    private Set<String> meterNames() {
        Set<String> names = new TreeSet<>();
        for (Meter meter : registry.getMeters()) {
            names.add(meter.getId().getName());
        }
        return names;
    }

    private static String tag(HandleOutcome outcome) {
        return outcome.name().toLowerCase(Locale.ROOT);
    }
}
