package dev.queue.domain.engine;

import dev.queue.api.ManualClock;
import dev.queue.domain.port.Clock;
import dev.queue.domain.port.FireCommand;
import dev.queue.domain.port.FiredMessage;
import dev.queue.domain.port.ScheduleStore;
import dev.queue.domain.time.ManualTime;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/** The ticker's passes over a store with a known number of due schedules: one bounded batch each, and the next due time. */
class ScheduleTickerTest {

    private final ManualClock clock = ManualClock.startingNow();
    private final Instant nextRun = clock.now().plusSeconds(30);
    private int due;
    private final List<FireCommand> calls = new ArrayList<>();

    private ScheduleTicker ticker(int batchSize) {
        ScheduleTicker.Config config = new ScheduleTicker.Config(Duration.ofSeconds(1), batchSize);
        return new ScheduleTicker(new ScheduleFiring(store(), new ManualTime(clock), config.batchSize(), null), config);
    }

    @Test
    void aPassFiresOneBatchAndReportsWhetherItWasFull() {
        due = 7;
        ScheduleTicker ticker = ticker(5);

        assertThat(ticker.runOnce()).isEqualTo(new ScheduleTicker.Fired(5, true, null));
        assertThat(ticker.runOnce()).isEqualTo(new ScheduleTicker.Fired(2, false, nextRun));
        assertThat(calls).extracting(FireCommand::limit).containsExactly(5, 5);
        assertThat(calls).allSatisfy(call -> assertThat(call.namespace()).as("every namespace").isNull());
    }

    @Test
    void aPassWithNothingDueReportsWhenTheNextIs() {
        ScheduleTicker.Fired pass = ticker(500).runOnce();

        assertThat(pass).isEqualTo(new ScheduleTicker.Fired(0, false, nextRun));
        assertThat(pass.nextDueAt()).contains(nextRun);
    }

    /** Fires what is due up to the command's limit; the ticker calls nothing but these two. */
    private ScheduleStore store() {
        return (ScheduleStore) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[]{ScheduleStore.class},
                (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "scheduleFireDue" -> {
                            FireCommand command = (FireCommand) args[0];
                            calls.add(command);
                            List<FiredMessage> fired = new ArrayList<>();
                            for (int i = 0; i < Math.min(due, command.limit()); i++) {
                                fired.add(new FiredMessage("ns", "s" + i, clock.now(), i, false, nextRun));
                            }
                            due -= fired.size();
                            return fired;
                        }
                        case "scheduleNextRunAt" -> {
                            return Optional.of(nextRun);
                        }
                        default -> throw new AssertionError("the ticker called " + method.getName());
                    }
                });
    }
}
