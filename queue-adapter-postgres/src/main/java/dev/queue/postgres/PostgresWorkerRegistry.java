package dev.queue.postgres;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.queue.api.StoreUnavailableException;
import dev.queue.domain.port.WorkerBeat;
import dev.queue.domain.port.WorkerRegistry;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.SQLException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The live workers in the table {@code workers} (V12), through {@code worker_heartbeat()} and {@code worker_stop()}:
 * one auto-committed statement per beat. The beat carries the wake-up listener's state too, so the health checks
 * of any process (or psql) see a listener that is down.
 */
final class PostgresWorkerRegistry implements WorkerRegistry {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static final Logger LOG = LoggerFactory.getLogger(PostgresWorkerRegistry.class);
    /** undefined_function: the schema predates version 12 (migrated by Flyway or Liquibase without it yet). */
    private static final String NO_SUCH_FUNCTION = "42883";

    private final Sessions sessions;
    private final String schema;
    private final Supplier<ListenerState> listener;
    /** Set once the schema turned out to have no registry: the queue runs as before, without heartbeats. */
    private volatile boolean missing;

    PostgresWorkerRegistry(Sessions sessions, String schema, Supplier<ListenerState> listener) {
        this.sessions = sessions;
        this.schema = schema;
        this.listener = listener;
    }

    @Override
    public void heartbeat(WorkerBeat beat) {
        if (missing) {
            return;
        }
        Map<String, Object> parameters = new HashMap<>();
        parameters.put("processId", beat.processId());
        parameters.put("host", beat.host());
        parameters.put("pid", beat.pid());
        parameters.put("startedAt", beat.startedAt());
        parameters.put("version", beat.version());
        parameters.put("listener", listener.get().name());
        parameters.put("subscriptions", subscriptionsJson(beat.subscriptions()));
        parameters.put("intervalMicros", beat.interval().toNanos() / 1000);
        try {
            sessions.autoCommit("the heartbeat of worker " + beat.processId(),
                    session -> session.selectOne("operator.workerHeartbeat", parameters));
        } catch (StoreUnavailableException e) {
            SQLException sql = PostgresErrors.findSqlException(e);
            if (sql == null || !NO_SUCH_FUNCTION.equals(sql.getSQLState())) {
                throw e;
            }
            missing = true;
            LOG.warn("schema {} has no worker registry (migration V12 not applied): this process does not heartbeat, so "
                    + "queue workers and the health checks do not see it; apply the migrations in db/queue/", schema);
        }
    }

    @Override
    public void remove(String processId) {
        if (missing) {
            return;
        }
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
