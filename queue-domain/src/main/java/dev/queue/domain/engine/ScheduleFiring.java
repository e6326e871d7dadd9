package dev.queue.domain.engine;

import dev.queue.api.MessageId;
import dev.queue.api.UnsupportedCapabilityException;
import dev.queue.api.observation.MaintenanceEvent;
import dev.queue.domain.port.Clock;
import dev.queue.domain.port.FireCommand;
import dev.queue.domain.port.FiredMessage;
import dev.queue.domain.port.ScheduleStore;
import dev.queue.domain.schedule.SchedulePlanner;

import java.util.ArrayList;
import java.util.List;

/** The schedule store of a queue and the firing of due schedules, for the ticker, {@code tick()} and {@code runDue()}. */
final class ScheduleFiring {

    private static final SchedulePlanner PLANNER = new SchedulePlanner();

    private final ScheduleStore store;
    private final Clock time;
    private final int batchSize;
    /** Null when none are registered. */
    private final Interceptors interceptors;

    /**
     * @param store        null for an adapter built without one: schedules are then unsupported
     * @param batchSize    due schedules fired per store call at most
     * @param interceptors told of each schedule fired; null when none are registered
     */
    ScheduleFiring(ScheduleStore store, Clock time, int batchSize, Interceptors interceptors) {
        this.store = store;
        this.time = time;
        this.batchSize = batchSize;
        this.interceptors = interceptors;
    }

    int batchSize() {
        return batchSize;
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
            batch = fireBatch(namespace);
            fired.addAll(batch);
        } while (batch.size() >= batchSize);
        return fired;
    }

    /** Fires one batch of due schedules of a namespace (of all when null). */
    List<FiredMessage> fireBatch(String namespace) {
        List<FiredMessage> batch = store().scheduleFireDue(new FireCommand(namespace, batchSize, time.commandTime(), PLANNER));
        if (interceptors != null) {
            for (FiredMessage m : batch) {
                interceptors.maintenance(new MaintenanceEvent.ScheduleFired(m.namespace(), m.name(), m.dueAt(),
                        MessageId.of(m.messageId()), m.duplicate(), m.nextRunAt()));
            }
        }
        return batch;
    }
}
