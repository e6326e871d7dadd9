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

    /** The operator's dashboard, when queue-dashboard is on the class path. */
    private final Dashboard dashboard = new Dashboard();

    /**
     * The operator's web page (queue-dashboard), served by a server of its own on {@code port}, under {@code path}.
     * Off unless enabled: it opens a port. Read-only unless a write token is set.
     */
    public static class Dashboard {

        /** Serve the dashboard (needs queue-dashboard on the class path). */
        private boolean enabled = false;

        /** The port of the dashboard's own HTTP server, 0 to 65535 (0: any free one). */
        private int port = 8081;

        /** The address it listens on: 127.0.0.1 serves this host only (behind a proxy), * every address. */
        private String address = "127.0.0.1";

        /** The path it is served under, such as /queue; empty for the root. */
        private String path = "/queue";

        /**
         * Enables redrive, purge and schedule changes for requests carrying this token (at least 16 characters);
         * unset: read-only.
         */
        private String writeToken;

        /** Who the dashboard's writes are recorded as (the browser's address is appended). */
        private String actor = "queue-dashboard";

        /**
         * {@code queue.dashboard.enabled}: serve the dashboard.
         *
         * @return the value set, or the default (false)
         */
        public boolean isEnabled() {
            return enabled;
        }

        /**
         * Sets {@code queue.dashboard.enabled}.
         *
         * @param enabled whether to serve the dashboard
         */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /**
         * {@code queue.dashboard.port}: the port of the dashboard's own HTTP server.
         *
         * @return the value set, or the default
         */
        public int getPort() {
            return port;
        }

        /**
         * Sets {@code queue.dashboard.port}.
         *
         * @param port 0 to 65535; checked when the application starts
         */
        public void setPort(int port) {
            this.port = port;
        }

        /**
         * {@code queue.dashboard.address}: the address the dashboard listens on.
         *
         * @return the value set, or the default
         */
        public String getAddress() {
            return address;
        }

        /**
         * Sets {@code queue.dashboard.address}.
         *
         * @param address an address of this machine, or *; checked when the application starts
         */
        public void setAddress(String address) {
            this.address = address;
        }

        /**
         * {@code queue.dashboard.path}: the path the dashboard is served under.
         *
         * @return the value set, or the default
         */
        public String getPath() {
            return path;
        }

        /**
         * Sets {@code queue.dashboard.path}.
         *
         * @param path such as /queue, or empty; checked when the application starts
         */
        public void setPath(String path) {
            this.path = path;
        }

        /**
         * {@code queue.dashboard.write-token}: the token that enables writes.
         *
         * @return the token, or null (read-only)
         */
        public String getWriteToken() {
            return writeToken;
        }

        /**
         * Sets {@code queue.dashboard.write-token}.
         *
         * @param writeToken at least 16 characters, or null; checked when the application starts
         */
        public void setWriteToken(String writeToken) {
            this.writeToken = writeToken;
        }

        /**
         * {@code queue.dashboard.actor}: who the dashboard's writes are recorded as.
         *
         * @return the value set, or the default
         */
        public String getActor() {
            return actor;
        }

        /**
         * Sets {@code queue.dashboard.actor}.
         *
         * @param actor 1 to 64 characters; checked when the application starts
         */
        public void setActor(String actor) {
            this.actor = actor;
        }

        @Override
        public String toString() {
            // the token stays out of logs
            return "Dashboard[enabled=" + enabled + ", address=" + address + ", port=" + port + ", path=" + path
                    + ", writeToken=" + (writeToken == null ? "unset" : "set") + ", actor=" + actor + "]";
        }
    }

    /**
     * {@code queue.dashboard.*}: the operator's dashboard.
     *
     * @return the dashboard's properties
     */
    public Dashboard getDashboard() {
        return dashboard;
    }

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

        /**
         * {@code queue.handlers.concurrency}: handlers of one method running at once, 1 to 1000.
         *
         * @return the value set, or the default
         */
        public int getConcurrency() {
            return concurrency;
        }

        /**
         * Sets {@code queue.handlers.concurrency}: handlers of one method running at once, 1 to 1000.
         *
         * @param concurrency the value; checked when the application starts
         */
        public void setConcurrency(int concurrency) {
            this.concurrency = concurrency;
        }

        /**
         * {@code queue.handlers.lease}: how long each claim holds a message; extended automatically while its handler
         * runs.
         *
         * @return the value set, or the default
         */
        public Duration getLease() {
            return lease;
        }

        /**
         * Sets {@code queue.handlers.lease}: how long each claim holds a message; extended automatically while its
         * handler runs.
         *
         * @param lease the value; checked when the application starts
         */
        public void setLease(Duration lease) {
            this.lease = lease;
        }

        /**
         * {@code queue.handlers.shutdown-timeout}: at shutdown: how long to wait for running handlers after claiming
         * stopped; what is still running then is released through its lease and runs again. Keep it within
         * spring.lifecycle.timeout-per-shutdown-phase.
         *
         * @return the value set, or the default
         */
        public Duration getShutdownTimeout() {
            return shutdownTimeout;
        }

        /**
         * Sets {@code queue.handlers.shutdown-timeout}: at shutdown: how long to wait for running handlers after
         * claiming stopped; what is still running then is released through its lease and runs again. Keep it within
         * spring.lifecycle.timeout-per-shutdown-phase.
         *
         * @param shutdownTimeout the value; checked when the application starts
         */
        public void setShutdownTimeout(Duration shutdownTimeout) {
            this.shutdownTimeout = shutdownTimeout;
        }
    }

    /**
     * {@code queue.enabled}: whether to create the queue at all.
     *
     * @return the value set, or the default
     */
    public boolean isEnabled() {
        return enabled;
    }

    /**
     * Sets {@code queue.enabled}: whether to create the queue at all.
     *
     * @param enabled the value; checked when the application starts
     */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /**
     * {@code queue.schema}: the PostgreSQL schema holding the queue's tables: a-z, 0-9 and _, at most 50 characters.
     *
     * @return the value set, or the default
     */
    public String getSchema() {
        return schema;
    }

    /**
     * Sets {@code queue.schema}: the PostgreSQL schema holding the queue's tables: a-z, 0-9 and _, at most 50
     * characters.
     *
     * @param schema the value; checked when the application starts
     */
    public void setSchema(String schema) {
        this.schema = schema;
    }

    /**
     * {@code queue.migrate-on-start}: apply the schema migrations at start (under an advisory lock); false when Flyway
     * or Liquibase applies them.
     *
     * @return the value set, or the default
     */
    public boolean isMigrateOnStart() {
        return migrateOnStart;
    }

    /**
     * Sets {@code queue.migrate-on-start}: apply the schema migrations at start (under an advisory lock); false when
     * Flyway or Liquibase applies them.
     *
     * @param migrateOnStart the value; checked when the application starts
     */
    public void setMigrateOnStart(boolean migrateOnStart) {
        this.migrateOnStart = migrateOnStart;
    }

    /**
     * {@code queue.listen}: hold one connection of the DataSource that LISTENs for wake-ups (size the pool one larger);
     * false: handlers find work by sweeping only.
     *
     * @return the value set, or the default
     */
    public boolean isListen() {
        return listen;
    }

    /**
     * Sets {@code queue.listen}: hold one connection of the DataSource that LISTENs for wake-ups (size the pool one
     * larger); false: handlers find work by sweeping only.
     *
     * @param listen the value; checked when the application starts
     */
    public void setListen(boolean listen) {
        this.listen = listen;
    }

    /**
     * {@code queue.listen-url}: a JDBC URL for the LISTEN connection alone, for example straight to the server when the
     * DataSource goes through a transaction-pooling proxy (which cannot LISTEN); unset: a connection of the DataSource.
     *
     * @return the value set, or the default
     */
    public String getListenUrl() {
        return listenUrl;
    }

    /**
     * Sets {@code queue.listen-url}: a JDBC URL for the LISTEN connection alone, for example straight to the server
     * when the DataSource goes through a transaction-pooling proxy (which cannot LISTEN); unset: a connection of the
     * DataSource.
     *
     * @param listenUrl the value; checked when the application starts
     */
    public void setListenUrl(String listenUrl) {
        this.listenUrl = listenUrl;
    }

    /**
     * {@code queue.listen-username}: the user of {@code queue.listen-url}, unless the URL names it.
     *
     * @return the value set, or the default
     */
    public String getListenUsername() {
        return listenUsername;
    }

    /**
     * Sets {@code queue.listen-username}: the user of {@code queue.listen-url}, unless the URL names it.
     *
     * @param listenUsername the value; checked when the application starts
     */
    public void setListenUsername(String listenUsername) {
        this.listenUsername = listenUsername;
    }

    /**
     * {@code queue.listen-password}: the password of {@code queue.listen-url}, unless the URL carries it.
     *
     * @return the value set, or the default
     */
    public String getListenPassword() {
        return listenPassword;
    }

    /**
     * Sets {@code queue.listen-password}: the password of {@code queue.listen-url}, unless the URL carries it.
     *
     * @param listenPassword the value; checked when the application starts
     */
    public void setListenPassword(String listenPassword) {
        this.listenPassword = listenPassword;
    }

    /**
     * {@code queue.namespace}: the namespace QueueTemplate publishes to and handlers subscribe in when they name none.
     *
     * @return the value set, or the default
     */
    public String getNamespace() {
        return namespace;
    }

    /**
     * Sets {@code queue.namespace}: the namespace QueueTemplate publishes to and handlers subscribe in when they name
     * none.
     *
     * @param namespace the value; checked when the application starts
     */
    public void setNamespace(String namespace) {
        this.namespace = namespace;
    }

    /**
     * {@code queue.sweep-interval}: how often idle handlers look for due messages without a wake-up and rescue expired
     * leases.
     *
     * @return the value set, or the default
     */
    public Duration getSweepInterval() {
        return sweepInterval;
    }

    /**
     * Sets {@code queue.sweep-interval}: how often idle handlers look for due messages without a wake-up and rescue
     * expired leases.
     *
     * @param sweepInterval the value; checked when the application starts
     */
    public void setSweepInterval(Duration sweepInterval) {
        this.sweepInterval = sweepInterval;
    }

    /**
     * {@code queue.notify-window}: at most one wake-up per topic per window from this process; a trailing one covers
     * the rest. 0 to 1 s.
     *
     * @return the value set, or the default
     */
    public Duration getNotifyWindow() {
        return notifyWindow;
    }

    /**
     * Sets {@code queue.notify-window}: at most one wake-up per topic per window from this process; a trailing one
     * covers the rest. 0 to 1 s.
     *
     * @param notifyWindow the value; checked when the application starts
     */
    public void setNotifyWindow(Duration notifyWindow) {
        this.notifyWindow = notifyWindow;
    }

    /**
     * {@code queue.vacuum-interval}: how often the hot table's dead row versions are checked and vacuumed; 0 leaves it
     * to autovacuum.
     *
     * @return the value set, or the default
     */
    public Duration getVacuumInterval() {
        return vacuumInterval;
    }

    /**
     * Sets {@code queue.vacuum-interval}: how often the hot table's dead row versions are checked and vacuumed; 0
     * leaves it to autovacuum.
     *
     * @param vacuumInterval the value; checked when the application starts
     */
    public void setVacuumInterval(Duration vacuumInterval) {
        this.vacuumInterval = vacuumInterval;
    }

    /**
     * {@code queue.durable-acknowledgements}: claims and acknowledgements wait for their commit to reach disk.
     *
     * @return the value set, or the default
     */
    public boolean isDurableAcknowledgements() {
        return durableAcknowledgements;
    }

    /**
     * Sets {@code queue.durable-acknowledgements}: claims and acknowledgements wait for their commit to reach disk.
     *
     * @param durableAcknowledgements the value; checked when the application starts
     */
    public void setDurableAcknowledgements(boolean durableAcknowledgements) {
        this.durableAcknowledgements = durableAcknowledgements;
    }

    /**
     * {@code queue.completed-retention}: what happens to acknowledged messages: DELETE or ARCHIVE.
     *
     * @return the value set, or the default
     */
    public CompletedRetention getCompletedRetention() {
        return completedRetention;
    }

    /**
     * Sets {@code queue.completed-retention}: what happens to acknowledged messages: DELETE or ARCHIVE.
     *
     * @param completedRetention the value; checked when the application starts
     */
    public void setCompletedRetention(CompletedRetention completedRetention) {
        this.completedRetention = completedRetention;
    }

    /**
     * {@code queue.default-max-attempts}: attempts of a message before it becomes a dead letter, unless the message
     * says otherwise.
     *
     * @return the value set, or the default
     */
    public int getDefaultMaxAttempts() {
        return defaultMaxAttempts;
    }

    /**
     * Sets {@code queue.default-max-attempts}: attempts of a message before it becomes a dead letter, unless the
     * message says otherwise.
     *
     * @param defaultMaxAttempts the value; checked when the application starts
     */
    public void setDefaultMaxAttempts(int defaultMaxAttempts) {
        this.defaultMaxAttempts = defaultMaxAttempts;
    }

    /**
     * {@code queue.max-payload-bytes}: the largest payload accepted, in bytes of JSON.
     *
     * @return the value set, or the default
     */
    public int getMaxPayloadBytes() {
        return maxPayloadBytes;
    }

    /**
     * Sets {@code queue.max-payload-bytes}: the largest payload accepted, in bytes of JSON.
     *
     * @param maxPayloadBytes the value; checked when the application starts
     */
    public void setMaxPayloadBytes(int maxPayloadBytes) {
        this.maxPayloadBytes = maxPayloadBytes;
    }

    /**
     * {@code queue.schedule-tick-interval}: how often due schedules are fired; 0 turns automatic ticking off.
     *
     * @return the value set, or the default
     */
    public Duration getScheduleTickInterval() {
        return scheduleTickInterval;
    }

    /**
     * Sets {@code queue.schedule-tick-interval}: how often due schedules are fired; 0 turns automatic ticking off.
     *
     * @param scheduleTickInterval the value; checked when the application starts
     */
    public void setScheduleTickInterval(Duration scheduleTickInterval) {
        this.scheduleTickInterval = scheduleTickInterval;
    }

    /**
     * {@code queue.close-timeout}: how long closing the queue waits for calls already running (publishes,
     * acknowledgements).
     *
     * @return the value set, or the default
     */
    public Duration getCloseTimeout() {
        return closeTimeout;
    }

    /**
     * Sets {@code queue.close-timeout}: how long closing the queue waits for calls already running (publishes,
     * acknowledgements).
     *
     * @param closeTimeout the value; checked when the application starts
     */
    public void setCloseTimeout(Duration closeTimeout) {
        this.closeTimeout = closeTimeout;
    }

    /**
     * The {@code queue.handlers.*} properties: defaults of {@code @QueueHandler} methods that do not set their own.
     *
     * @return the handler defaults, never null
     */
    public Handlers getHandlers() {
        return handlers;
    }
}
