package dev.queue.domain.engine;

import dev.queue.api.InvalidInputException;
import dev.queue.api.ManualClock;
import dev.queue.domain.port.CommandTime;
import dev.queue.domain.port.Clock;
import dev.queue.domain.port.MessageStore;
import dev.queue.domain.port.RescueCommand;
import dev.queue.domain.port.RescueResult;
import dev.queue.domain.time.ManualTime;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The rescuer's passes over a store holding a known number of expired leases per namespace: the counts each pass
 * reports, its bound, and which namespaces it tells about messages pending again.
 */
class LeaseRescuerTest {

    private final ManualClock clock = ManualClock.startingNow();
    /** Expired leases per namespace: [to requeue, to dead-letter]; requeues go first, as the oldest do in a store. */
    private final Map<String, int[]> expired = new LinkedHashMap<>();
    private final List<RescueCommand> calls = new ArrayList<>();
    private final List<String> requeuedIn = new ArrayList<>();

    private LeaseRescuer rescuer(int batchSize) {
        return new LeaseRescuer(new LeaseRescuer.Config(Duration.ofSeconds(1), batchSize), store(), new ManualTime(clock),
                expired::keySet, requeuedIn::add, null);
    }

    @Test
    void aPassRescuesEveryOpenedNamespaceAndCountsWhatWentWhere() {
        expired.put("shop", new int[]{2, 1});
        expired.put("mail", new int[]{0, 0});
        expired.put("billing", new int[]{0, 2});

        LeaseRescuer.Rescued pass = rescuer(100).runOnce();

        assertThat(pass).isEqualTo(new LeaseRescuer.Rescued(2, 3, false));
        assertThat(calls).extracting(RescueCommand::namespace).containsExactly("shop", "mail", "billing");
        assertThat(calls).allSatisfy(call -> assertThat(call.time()).as("the queue's time").isEqualTo(CommandTime.at(clock.now())));
        assertThat(requeuedIn).as("namespaces whose subscribers are woken").containsExactly("shop");
        assertThat(rescuer(100).runOnce()).as("nothing left").isEqualTo(new LeaseRescuer.Rescued(0, 0, false));
    }

    @Test
    void aPassStopsAtItsBatchSizeAndSaysSo() {
        expired.put("shop", new int[]{3, 0});
        expired.put("mail", new int[]{4, 0});
        LeaseRescuer rescuer = rescuer(5);

        assertThat(rescuer.runOnce()).isEqualTo(new LeaseRescuer.Rescued(5, 0, true));
        assertThat(calls).extracting(RescueCommand::limit).as("what is left of the batch, namespace by namespace")
                .containsExactly(5, 2);

        assertThat(rescuer.runOnce()).isEqualTo(new LeaseRescuer.Rescued(2, 0, false));
    }

    @Test
    void aPullRescuesOnlyItsOwnNamespace() {
        expired.put("shop", new int[]{1, 0});
        expired.put("mail", new int[]{1, 0});

        assertThat(rescuer(100).runOnce("mail")).isEqualTo(new LeaseRescuer.Rescued(1, 0, false));
        assertThat(expired.get("shop")[0]).isEqualTo(1);
    }

    @Test
    void configRefusesABatchSizeBelowOneNamingIt() {
        assertThatThrownBy(() -> new LeaseRescuer.Config(Duration.ofSeconds(1), 0))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("batchSize")
                .hasMessageContaining("got: 0");
    }

    /** Only the rescue is scripted; the rescuer calls nothing else. */
    private MessageStore store() {
        return (MessageStore) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[]{MessageStore.class},
                (proxy, method, args) -> {
                    if (!method.getName().equals("messageRescueExpired")) {
                        throw new AssertionError("the rescuer called " + method.getName());
                    }
                    RescueCommand command = (RescueCommand) args[0];
                    calls.add(command);
                    int[] left = expired.get(command.namespace());
                    int requeued = Math.min(left[0], command.limit());
                    int dead = Math.min(left[1], command.limit() - requeued);
                    left[0] -= requeued;
                    left[1] -= dead;
                    return new RescueResult(requeued, dead);
                });
    }
}
