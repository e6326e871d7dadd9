package dev.queue.testkit.contract;

import dev.queue.api.Message;
import dev.queue.api.QueueOptions;
import dev.queue.api.Schedule;
import dev.queue.api.Subscriber;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** The queue ticks schedules by itself: no explicit tick() in these tests, only time passing. */
public abstract class ScheduleRuntimeContract extends ContractSupport {

    @Override
    protected QueueOptions options() {
        return super.options().scheduleTickInterval(Duration.ofMillis(50));
    }

    @Test
    void theRuntimeFiresDueSchedulesWithoutAnExplicitTick() {
        ns.schedules().create(Schedule.every("sync", Duration.ofMinutes(5)).publishing(Message.to("data").json("{}")));
        advance(Duration.ofMinutes(5));
        eventually().untilAsserted(() -> assertThat(ns.stats().pending()).isEqualTo(1));
        assertThat(ns.schedules().get("sync").orElseThrow().lastRunAt()).isEqualTo(START.plus(Duration.ofMinutes(5)));
    }

    @Test
    void aSubscriberHandlesScheduledMessages() {
        AtomicInteger handled = new AtomicInteger();
        advance(Duration.ofSeconds(30));
        try (var subscription = ns.subscribe(Subscriber.on("data").handleDelivery((delivery, ctx) -> handled.incrementAndGet()))) {
            ns.schedules().create(Schedule.cron("every-minute", "* * * * *").publishing(Message.to("data").json("{}")));
            for (int minute = 1; minute <= 3; minute++) {
                advance(Duration.ofMinutes(1));
                int expected = minute;
                eventually().untilAsserted(() -> assertThat(handled.get()).isEqualTo(expected));
                // Move time on only once the acknowledgement is recorded, or the jump could expire its lease.
                eventually().untilAsserted(() -> assertThat(ns.stats().topic("data").pending() + ns.stats().topic("data").running())
                        .isZero());
            }
        }
        assertThat(handled.get()).isEqualTo(3);
    }

    @Test
    void pausedSchedulesDoNotFireWhileTimePasses() {
        ns.schedules().create(Schedule.every("sync", Duration.ofMinutes(1)).publishing(Message.to("data").json("{}")));
        ns.schedules().pause("sync");
        advance(Duration.ofMinutes(10));
        ns.schedules().create(Schedule.every("probe", Duration.ofMinutes(1)).publishing(Message.to("probe").json("{}")));
        advance(Duration.ofMinutes(1));
        // The probe proves the ticker ran after the pause took effect.
        eventually().untilAsserted(() -> assertThat(ns.stats().topic("probe").pending()).isEqualTo(1));
        assertThat(ns.stats().topic("data").pending()).isZero();
    }
}
