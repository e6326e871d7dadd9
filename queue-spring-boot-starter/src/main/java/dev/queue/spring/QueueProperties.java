package dev.queue.spring;

import dev.queue.api.Queue;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.postgres.CompletedRetention;
import dev.queue.postgres.PostgresQueueConfig;
import org.springframework.boot.context.properties.ConfigurationProperties;

import java.time.Duration;

/**
 * The {@code queue.*} properties. Unset properties keep the defaults of {@link PostgresQueueConfig} and
 * {@link QueueOptions}; {@link QueueConfigFactory} checks every value when the application starts and fails naming
 * the property and the value.
 */
@ConfigurationProperties(prefix = "queue")
public class QueueProperties {

    /** Whether to create the queue at all. */
    private boolean enabled = true;

    /** The PostgreSQL schema holding the queue's tables: a-z, 0-9 and _, at most 50 characters. */
    private String schema = PostgresQueueConfig.DEFAULT_SCHEMA;

    /** Apply the schema migrations at start (under an advisory lock); false when Flyway or Liquibase applies them. */
    private boolean migrateOnStart = true;

    /**
     * Hold one connection of the DataSource that LISTENs for wake-ups (size the pool one larger); false: handlers
     * find work by sweeping only.
     */
    private boolean listen = true;

    /**
     * A JDBC URL for the LISTEN connection alone, for example straight to the server when the DataSource goes
     * through a transaction-pooling proxy (which cannot LISTEN); unset: a connection of the DataSource.
     */
    private String listenUrl;

    /** The user of {@code queue.listen-url}, unless the URL names it. */
    private String listenUsername;

    /** The password of {@code queue.listen-url}, unless the URL carries it. */
    private String listenPassword;

    /** The namespace QueueTemplate publishes to and handlers subscribe in when they name none. */
    private String namespace = Queue.DEFAULT_NAMESPACE;

    /** How often idle handlers look for due messages without a wake-up and rescue expired leases. */
    private Duration sweepInterval = QueueOptions.DEFAULT_SWEEP_INTERVAL;

    /** At most one wake-up per topic per window from this process; a trailing one covers the rest. 0 to 1 s. */
    private Duration notifyWindow = PostgresQueueConfig.DEFAULT_NOTIFY_WINDOW;

    /** How often the hot table's dead row versions are checked and vacuumed; 0 leaves it to autovacuum. */
    private Duration vacuumInterval = PostgresQueueConfig.DEFAULT_VACUUM_INTERVAL;

    /** Claims and acknowledgements wait for their commit to reach disk. */
    private boolean durableAcknowledgements = false;

    /** What happens to acknowledged messages: DELETE or ARCHIVE. */
    private CompletedRetention completedRetention = CompletedRetention.DELETE;

    /** Attempts of a message before it becomes a dead letter, unless the message says otherwise. */
    private int defaultMaxAttempts = QueueOptions.DEFAULT_MAX_ATTEMPTS;

    /** The largest payload accepted, in bytes of JSON. */
    private int maxPayloadBytes = QueueOptions.DEFAULT_MAX_PAYLOAD_BYTES;

    /** How often due schedules are fired; 0 turns automatic ticking off. */
    private Duration scheduleTickInterval = QueueOptions.DEFAULT_SCHEDULE_TICK_INTERVAL;

    /** How long closing the queue waits for calls already running (publishes, acknowledgements). */
    private Duration closeTimeout = QueueOptions.DEFAULT_CLOSE_TIMEOUT;

    /** Defaults of {@code @QueueHandler} methods. */
    private final Handlers handlers = new Handlers();

    /** Defaults of {@code @QueueHandler} methods that do not set their own. */
    public static class Handlers {

        /** Handlers of one method running at once, 1 to 1000. */
        private int concurrency = Subscriber.DEFAULT_CONCURRENCY;

        /** How long each claim holds a message; extended automatically while its handler runs. */
        private Duration lease = Subscriber.DEFAULT_LEASE;

        /**
         * At shutdown: how long to wait for running handlers after claiming stopped; what is still running then
         * is released through its lease and runs again. Keep it within spring.lifecycle.timeout-per-shutdown-phase.
         */
        private Duration shutdownTimeout = Subscriber.DEFAULT_SHUTDOWN_TIMEOUT;

        public int getConcurrency() {
            return concurrency;
        }

        public void setConcurrency(int concurrency) {
            this.concurrency = concurrency;
        }

        public Duration getLease() {
            return lease;
        }

        public void setLease(Duration lease) {
            this.lease = lease;
        }

        public Duration getShutdownTimeout() {
            return shutdownTimeout;
        }

        public void setShutdownTimeout(Duration shutdownTimeout) {
            this.shutdownTimeout = shutdownTimeout;
        }
    }

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getSchema() {
        return schema;
    }

    public void setSchema(String schema) {
        this.schema = schema;
    }

    public boolean isMigrateOnStart() {
        return migrateOnStart;
    }

    public void setMigrateOnStart(boolean migrateOnStart) {
        this.migrateOnStart = migrateOnStart;
    }

    public boolean isListen() {
        return listen;
    }

    public void setListen(boolean listen) {
        this.listen = listen;
    }

    public String getListenUrl() {
        return listenUrl;
    }

    public void setListenUrl(String listenUrl) {
        this.listenUrl = listenUrl;
    }

    public String getListenUsername() {
        return listenUsername;
    }

    public void setListenUsername(String listenUsername) {
        this.listenUsername = listenUsername;
    }

    public String getListenPassword() {
        return listenPassword;
    }

    public void setListenPassword(String listenPassword) {
        this.listenPassword = listenPassword;
    }

    public String getNamespace() {
        return namespace;
    }

    public void setNamespace(String namespace) {
        this.namespace = namespace;
    }

    public Duration getSweepInterval() {
        return sweepInterval;
    }

    public void setSweepInterval(Duration sweepInterval) {
        this.sweepInterval = sweepInterval;
    }

    public Duration getNotifyWindow() {
        return notifyWindow;
    }

    public void setNotifyWindow(Duration notifyWindow) {
        this.notifyWindow = notifyWindow;
    }

    public Duration getVacuumInterval() {
        return vacuumInterval;
    }

    public void setVacuumInterval(Duration vacuumInterval) {
        this.vacuumInterval = vacuumInterval;
    }

    public boolean isDurableAcknowledgements() {
        return durableAcknowledgements;
    }

    public void setDurableAcknowledgements(boolean durableAcknowledgements) {
        this.durableAcknowledgements = durableAcknowledgements;
    }

    public CompletedRetention getCompletedRetention() {
        return completedRetention;
    }

    public void setCompletedRetention(CompletedRetention completedRetention) {
        this.completedRetention = completedRetention;
    }

    public int getDefaultMaxAttempts() {
        return defaultMaxAttempts;
    }

    public void setDefaultMaxAttempts(int defaultMaxAttempts) {
        this.defaultMaxAttempts = defaultMaxAttempts;
    }

    public int getMaxPayloadBytes() {
        return maxPayloadBytes;
    }

    public void setMaxPayloadBytes(int maxPayloadBytes) {
        this.maxPayloadBytes = maxPayloadBytes;
    }

    public Duration getScheduleTickInterval() {
        return scheduleTickInterval;
    }

    public void setScheduleTickInterval(Duration scheduleTickInterval) {
        this.scheduleTickInterval = scheduleTickInterval;
    }

    public Duration getCloseTimeout() {
        return closeTimeout;
    }

    public void setCloseTimeout(Duration closeTimeout) {
        this.closeTimeout = closeTimeout;
    }

    public Handlers getHandlers() {
        return handlers;
    }
}
