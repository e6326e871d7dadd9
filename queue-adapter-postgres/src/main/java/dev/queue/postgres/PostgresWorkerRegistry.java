package dev.queue.postgres;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.queue.domain.port.WorkerBeat;
import dev.queue.domain.port.WorkerRegistry;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The live workers in the table {@code workers}, through {@code worker_heartbeat()} and {@code worker_stop()}:
 * one auto-committed statement per beat. The beat carries the wake-up listener's state too, so the health checks
 * of any process (or psql) see a listener that is down.
 */
final class PostgresWorkerRegistry implements WorkerRegistry {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Sessions sessions;
    private final Supplier<ListenerState> listener;

    PostgresWorkerRegistry(Sessions sessions, Supplier<ListenerState> listener) {
        this.sessions = sessions;
        this.listener = listener;
    }

    @Override
    public void heartbeat(WorkerBeat beat) {
        Map<String, Object> parameters = new HashMap<>();
        parameters.put("processId", beat.processId());
        parameters.put("host", beat.host());
        parameters.put("pid", beat.pid());
        parameters.put("startedAt", beat.startedAt());
        parameters.put("version", beat.version());
        parameters.put("listener", listener.get().name());
        parameters.put("subscriptions", subscriptionsJson(beat.subscriptions()));
        parameters.put("intervalMicros", beat.interval().toNanos() / 1000);
        sessions.autoCommit("the heartbeat of worker " + beat.processId(),
                session -> session.selectOne("operator.workerHeartbeat", parameters));
    }

    @Override
    public void remove(String processId) {
        sessions.autoCommit("the removal of worker " + processId,
                session -> session.selectOne("operator.workerStop", Map.of("processId", processId)));
    }

    static String subscriptionsJson(List<WorkerBeat.SubscriptionBeat> subscriptions) {
        List<Map<String, Object>> list = subscriptions.stream().map(s -> {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("namespace", s.namespace());
            entry.put("topics", s.topics());
            entry.put("worker", s.worker());
            entry.put("concurrency", s.concurrency());
            entry.put("in_flight", s.inFlight());
            return entry;
        }).toList();
        try {
            return JSON.writeValueAsString(list);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write the subscriptions of a heartbeat as JSON", e);
        }
    }
}
