package dev.queue.domain.engine;

import dev.queue.api.UnsupportedCapabilityException;
import dev.queue.domain.port.Clock;
import dev.queue.domain.port.FireCommand;
import dev.queue.domain.port.FiredMessage;
import dev.queue.domain.port.ScheduleStore;
import dev.queue.domain.schedule.SchedulePlanner;

import java.util.ArrayList;
import java.util.List;

/** The schedule store of a queue and the firing of due schedules, for the ticker, {@code tick()} and {@code runDue()}. */
final class ScheduleFiring {

    static final int FIRE_BATCH = 500;
    private static final SchedulePlanner PLANNER = new SchedulePlanner();

    private final ScheduleStore store;
    private final Clock time;

    /** @param store null for an adapter built without one: schedules are then unsupported */
    ScheduleFiring(ScheduleStore store, Clock time) {
        this.store = store;
        this.time = time;
    }

    boolean available() {
        return store != null;
    }

    /** The schedule store; fails clearly for an adapter built without one. */
    ScheduleStore store() {
        if (store == null) {
            throw new UnsupportedCapabilityException("schedules", "it was built without a schedule store");
        }
        return store;
    }

    /** Fires every due schedule of a namespace (of all when null), batch after batch until none is left. */
    List<FiredMessage> fireDue(String namespace) {
        List<FiredMessage> fired = new ArrayList<>();
        List<FiredMessage> batch;
        do {
            batch = store().scheduleFireDue(new FireCommand(namespace, FIRE_BATCH, time.commandTime(), PLANNER));
            fired.addAll(batch);
        } while (batch.size() >= FIRE_BATCH);
        return fired;
    }
}
