package dev.queue.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.queue.api.Delivery;
import dev.queue.api.InvalidInputException;
import dev.queue.api.Message;
import dev.queue.api.MessageContext;
import dev.queue.api.Namespace;
import dev.queue.api.Outcome;
import dev.queue.api.PublishResult;
import dev.queue.api.Queue;
import dev.queue.api.QueueClosedException;
import dev.queue.api.QueueOptions;
import dev.queue.api.StoreNotReadyException;
import dev.queue.codec.jackson.JacksonPayloadCodec;
import dev.queue.domain.engine.CompletionAware;
import dev.queue.domain.engine.MaintenanceRunner;
import dev.queue.domain.engine.QueueEngine;
import dev.queue.domain.port.Clock;
import dev.queue.domain.port.WakeUps;
import dev.queue.domain.time.ManualTime;
import dev.queue.domain.time.SystemClock;
import org.apache.ibatis.session.SqlSessionFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;

/**
 * A durable queue in a schema of an existing PostgreSQL database. Thread-safe; create one per application and
 * close it on shutdown.
 *
 * <pre>{@code
 * try (PostgresQueue queue = PostgresQueue.connect(url, user, password, PostgresQueueConfig.defaults())) {
 *     queue.defaultNamespace().publish("email.send", new SendEmail("ada@example.com"));
 * }
 * }</pre>
 *
 * Besides the {@link Queue} API its namespaces can join the application's own transactions:
 * {@link PostgresNamespace#publish(Connection, Message)} stores a message on the caller's connection (it is
 * delivered when that transaction commits, and neither stored nor announced when it rolls back), and
 * {@link PostgresNamespace#ack(Connection, MessageContext)} completes a message inside the handler's own
 * transaction, so its database side effects and the completion commit together.
 */
public final class PostgresQueue implements Queue {

    private static final Logger LOG = LoggerFactory.getLogger(PostgresQueue.class);

    private final QueueEngine engine;
    private final PostgresMessageStore store;
    private final PostgresQueueConfig config;
    /** Null when the queue does not listen. */
    private final PostgresWakeUps listener;
    private final ConcurrentHashMap<String, PostgresNamespace> namespaces = new ConcurrentHashMap<>();

    private PostgresQueue(QueueEngine engine, PostgresMessageStore store, PostgresQueueConfig config,
                          PostgresWakeUps listener) {
        this.engine = engine;
        this.store = store;
        this.config = config;
        this.listener = listener;
    }

    /**
     * A queue over the application's DataSource (typically its pool, which the queue borrows from and never
     * closes). When listening (the default), the queue takes one connection from this DataSource for LISTEN and
     * keeps it until closed: size a pool one larger, or use {@link #create(DataSource, DataSource,
     * PostgresQueueConfig)} to take that connection elsewhere.
     */
    public static PostgresQueue create(DataSource dataSource, PostgresQueueConfig config) {
        requireArgument("dataSource", dataSource, "a javax.sql.DataSource of a PostgreSQL database");
        return create(dataSource, dataSource, config);
    }

    /**
     * Like {@link #create(DataSource, PostgresQueueConfig)}, with the LISTEN connection taken from
     * {@code listenDataSource}: for example a non-pooled DataSource, or one that connects directly to the
     * server when {@code dataSource} goes through a transaction-pooling proxy (which cannot LISTEN).
     */
    public static PostgresQueue create(DataSource dataSource, DataSource listenDataSource, PostgresQueueConfig config) {
        requireArgument("dataSource", dataSource, "a javax.sql.DataSource of a PostgreSQL database");
        requireArgument("listenDataSource", listenDataSource, "a javax.sql.DataSource of a PostgreSQL database");
        requireArgument("config", config, "a PostgresQueueConfig, e.g. PostgresQueueConfig.defaults()");
        return start(dataSource, listenDataSource::getConnection, null, null, config.validate());
    }

    /**
     * A queue whose pool ({@code dataSource}) logs in as a role that may not own the schema: the application role
     * ({@code <schema>_app}) or a tenant's role granted only some namespaces (docs/security.md). What needs the
     * schema's owner runs on {@code adminDataSource}: the migrations (or, with {@code migrateOnStart(false)}, the
     * check that the schema is there), the queue policies of every namespace, and the VACUUM of the hot table
     * (its checks every few seconds run on the pool, the VACUUM itself only when due). The pool then reaches the
     * engine through its gates ({@code engine_*}), which refuse a namespace not granted to its login with
     * {@link dev.queue.api.NamespaceAccessDeniedException}. {@code listenDataSource} as in
     * {@link #create(DataSource, DataSource, PostgresQueueConfig)}; pass {@code dataSource} for both.
     *
     * <p>Without an admin DataSource ({@link #create(DataSource, PostgresQueueConfig)}) a tenant's pool works too
     * once an owner migrated the schema ({@code migrateOnStart(false)}): it then writes no policies and runs no
     * vacuum, which the fleet's trusted queue (or autovacuum) does.
     */
    public static PostgresQueue create(DataSource dataSource, DataSource listenDataSource, DataSource adminDataSource,
                                       PostgresQueueConfig config) {
        requireArgument("dataSource", dataSource, "a javax.sql.DataSource of a PostgreSQL database");
        requireArgument("listenDataSource", listenDataSource, "a javax.sql.DataSource of a PostgreSQL database");
        requireArgument("adminDataSource", adminDataSource,
                "a javax.sql.DataSource logging in as the schema's owner (or a member of it), e.g. a small pool");
        requireArgument("config", config, "a PostgresQueueConfig, e.g. PostgresQueueConfig.defaults()");
        return start(dataSource, listenDataSource::getConnection, adminDataSource, null, config.validate());
    }

    /**
     * A queue with a HikariCP pool of its own ({@link PostgresQueueConfig#poolSize()} connections), closed with
     * the queue. The LISTEN connection is opened separately, outside the pool, with the same URL and credentials.
     * {@code user} and {@code password} may be null when the URL carries them.
     */
    public static PostgresQueue connect(String jdbcUrl, String user, String password, PostgresQueueConfig config) {
        if (jdbcUrl == null || !jdbcUrl.startsWith("jdbc:postgresql:")) {
            throw new InvalidInputException("jdbcUrl", jdbcUrl, "a PostgreSQL JDBC URL (jdbc:postgresql://host:port/database)");
        }
        requireArgument("config", config, "a PostgresQueueConfig, e.g. PostgresQueueConfig.defaults()");
        config.validate();
        HikariDataSource pool;
        try {
            HikariConfig hikari = new HikariConfig();
            hikari.setJdbcUrl(jdbcUrl);
            hikari.setUsername(user);
            hikari.setPassword(password);
            hikari.setMaximumPoolSize(config.poolSize());
            hikari.setPoolName("queue-" + config.schema());
            hikari.setAutoCommit(true);
            configureForLongLivedConnections(hikari, jdbcUrl, config.schema());
            pool = new HikariDataSource(hikari);
        } catch (RuntimeException e) {
            throw PostgresErrors.translate("connecting to " + jdbcUrl, e);
        }
        Properties credentials = new Properties();
        if (user != null) {
            credentials.setProperty("user", user);
        }
        if (password != null) {
            credentials.setProperty("password", password);
        }
        credentials.setProperty("tcpKeepAlive", "true");
        if (!jdbcUrl.toLowerCase(Locale.ROOT).contains("applicationname=")) {
            credentials.setProperty("ApplicationName", "queue " + config.schema() + " listener");
        }
        return start(pool, () -> DriverManager.getConnection(jdbcUrl, credentials), null, pool, config);
    }

    /** Finds idle connections that died (a killed backend, a dropped route) before a caller borrows them. */
    static final Duration POOL_KEEPALIVE = Duration.ofSeconds(30);
    /** How long a borrowed connection's liveness check may take before the pool gives up on it. */
    static final Duration POOL_VALIDATION_TIMEOUT = Duration.ofSeconds(2);
    /** Retires connections before the idle cut-offs of common proxies and firewalls; PostgreSQL frees their memory. */
    static final Duration POOL_MAX_LIFETIME = Duration.ofMinutes(10);

    /**
     * A queue keeps its connections for the life of the process, mostly idle between bursts: keepalive checks each
     * idle one every {@link #POOL_KEEPALIVE}, so a connection whose backend was killed is found and replaced off
     * the callers' path (the pool still logs each dead one once); TCP keepalive notices a peer that vanished
     * without closing the socket; the application name shows the queue's sessions in pg_stat_activity.
     */
    private static void configureForLongLivedConnections(HikariConfig hikari, String jdbcUrl, String schema) {
        hikari.setKeepaliveTime(POOL_KEEPALIVE.toMillis());
        hikari.setValidationTimeout(POOL_VALIDATION_TIMEOUT.toMillis());
        hikari.setMaxLifetime(POOL_MAX_LIFETIME.toMillis());
        hikari.addDataSourceProperty("tcpKeepAlive", "true");
        if (!jdbcUrl.toLowerCase(Locale.ROOT).contains("applicationname=")) {
            hikari.addDataSourceProperty("ApplicationName", "queue " + schema);
        }
    }

    /** With a validated configuration; {@code adminDataSource} null: the pool does what needs the owner too. */
    private static PostgresQueue start(DataSource dataSource, PostgresWakeUps.ConnectionSource listenSource,
                                       DataSource adminDataSource, HikariDataSource ownedPool, PostgresQueueConfig config) {
        PostgresWakeUps listener = null;
        MaintenanceRunner vacuum = null;
        try {
            String schema = config.schema();
            SqlSessionFactory schemaSessions = MyBatisSupport.sessionFactory(
                    adminDataSource != null ? adminDataSource : dataSource, schema, config.actor());
            prepareSchema(schemaSessions, schema, config, adminDataSource != null);
            EngineAccess.Login login = EngineAccess.of(dataSource, schema);
            SqlSessionFactory sessions = adminDataSource == null && login.access() == EngineAccess.DIRECT
                    ? schemaSessions : MyBatisSupport.sessionFactory(dataSource, schema, config.actor(), login.access());
            // what needs the owner, or at least a login trusted with every namespace: the admin's, else the pool's
            Sessions owner = adminDataSource != null ? new Sessions(schemaSessions) : login.trusted() ? new Sessions(sessions) : null;
            if (owner != null) {
                QueuePolicies.write(owner, config.queueOptions(), config.completedRetention());
            } else {
                LOG.info("schema {}: role {} is a tenant's, so this queue leaves the queue policies of every namespace "
                        + "and the hot table's vacuum to a trusted queue (or autovacuum)", schema, login.role());
            }
            PostgresMessageStore store = new PostgresMessageStore(sessions, config.completedRetention(), config.durableAcknowledgements());
            PublishRates rates = new PublishRates(new Sessions(sessions), schema);
            store.usePublishRates(rates);
            Clock clock = config.clock() != null ? new ManualTime(config.clock()) : SystemClock.pacingOnly();
            NotifyLimiter limiter = new NotifyLimiter(config.notifyWindow(), store::wakeTopic);
            HotTableVacuum.Config vacuumConfig = config.vacuum();
            if (!vacuumConfig.off() && owner != null) {
                vacuum = new MaintenanceRunner(new HotTableVacuum(new Sessions(sessions), owner, vacuumConfig, schema),
                        MaintenanceRunner.Config.DEFAULTS, null);
            }
            store.useNotifyLimiter(limiter);
            WakeUps wakeUps;
            if (config.listen()) {
                listener = new PostgresWakeUps(schema, listenSource, sessions, store::notifyChannel,
                        PostgresWakeUps.DEFAULT_PROBE_TIMEOUT, config.queueOptions().sweepInterval(),
                        config.markPollInterval());
                wakeUps = listener;
            } else {
                wakeUps = PostgresWakeUps.none();
            }
            PostgresWakeUps toClose = listener;
            PostgresWakeUps heartbeatListener = listener;
            boolean listens = config.listen();
            PostgresWorkerRegistry workers = new PostgresWorkerRegistry(new Sessions(sessions),
                    () -> heartbeatListener != null ? heartbeatListener.state() : listens ? ListenerState.NOT_STARTED : ListenerState.OFF);
            MaintenanceRunner vacuumToStop = vacuum;
            QueueEngine engine = QueueEngine.builder()
                    .store(store)
                    .scheduleStore(new PostgresScheduleStore(store))
                    .wakeUps(wakeUps)
                    .clock(clock)
                    .options(config.queueOptions())
                    .defaultCodec(new JacksonPayloadCodec())
                    .workerRegistry(workers)
                    .onClose(() -> {
                        if (vacuumToStop != null) {
                            vacuumToStop.stop();
                        }
                        limiter.close();
                        rates.close();
                        release(toClose, ownedPool);
                    })
                    .build();
            if (vacuum != null) {
                vacuum.start();
            }
            rates.start();
            LOG.info("queue started on schema {} as role {}, {} ({})", schema, login.role(),
                    login.access() == EngineAccess.DIRECT ? "on the engine functions" : "through the engine's gates", config);
            return new PostgresQueue(engine, store, config, listener);
        } catch (RuntimeException e) {
            if (vacuum != null) {
                vacuum.stop();
            }
            release(listener, ownedPool);
            throw e;
        }
    }

    /**
     * Migrates the schema (or checks it is there). A login that may not (a tenant's, the app role's) is told what
     * to do instead of being refused a table it never asked for.
     */
    private static void prepareSchema(SqlSessionFactory sessions, String schema, PostgresQueueConfig config,
                                      boolean admin) {
        if (!config.migrateOnStart()) {
            SchemaMigrator.verify(sessions, schema);
            return;
        }
        try {
            SchemaMigrator.migrate(sessions, schema);
        } catch (dev.queue.api.NamespaceAccessDeniedException e) {
            throw new StoreNotReadyException("the login " + (admin ? "of adminDataSource" : "of the queue's DataSource")
                    + " may not migrate schema \"" + schema + "\" (" + e.getMessage() + "): migrate it as its owner, "
                    + "then pass that owner's DataSource as adminDataSource (PostgresQueue.create(dataSource, "
                    + "listenDataSource, adminDataSource, config)) or set migrateOnStart(false)");
        }
    }

    private static void release(PostgresWakeUps listener, HikariDataSource ownedPool) {
        if (listener != null) {
            try {
                listener.close();
            } catch (RuntimeException e) {
                LOG.warn("closing the wake-up listener failed", e);
            }
        }
        if (ownedPool != null) {
            ownedPool.close();
        }
    }

    // ------------------------------------------------------------------ Queue

    /** The namespace, with publishing and acknowledging on the caller's own connection besides. */
    @Override
    public PostgresNamespace namespace(String name) {
        Namespace namespace = engine.namespace(name);
        return namespaces.computeIfAbsent(namespace.name(), n -> new PostgresNamespace(namespace, this));
    }

    @Override
    public PostgresNamespace defaultNamespace() {
        return namespace(DEFAULT_NAMESPACE);
    }

    @Override
    public QueueOptions options() {
        return engine.options();
    }

    /** Closes every subscription, the LISTEN connection, and the pool when {@link #connect} created it. */
    @Override
    public void close() {
        engine.close();
    }

    public PostgresQueueConfig config() {
        return config;
    }

    /** What the wake-up listener does now: for health checks; a state other than LISTENING costs latency only. */
    public ListenerState listenerState() {
        if (engine.isClosed()) {
            return ListenerState.CLOSED;
        }
        return listener == null ? ListenerState.OFF : listener.state();
    }

    /** False once {@link #close()} was called. */
    public boolean isOpen() {
        return !engine.isClosed();
    }

    // ------------------------------------------------------------------ the caller's transaction

    /** {@link PostgresNamespace#publishAll(Connection, List)}. */
    List<PublishResult> publishOn(Connection connection, String namespace, List<Message> messages) {
        ensureOpen();
        requireArgument("connection", connection, "an open java.sql.Connection of the queue's database");
        return engine.publishThrough(namespace, messages, command -> store.publishOn(connection, command));
    }

    /** {@link PostgresNamespace#ack(Connection, Delivery)}. */
    Outcome ackOn(Connection connection, String namespace, Delivery delivery) {
        ensureOpen();
        requireArgument("connection", connection, "an open java.sql.Connection of the queue's database");
        return engine.ackThrough(namespace, delivery, command -> store.ackOn(connection, command));
    }

    /** {@link PostgresNamespace#ack(Connection, MessageContext)}: tells the subscription when it completed. */
    Outcome ackOn(Connection connection, String namespace, MessageContext context) {
        ensureOpen();
        requireArgument("context", context, "the MessageContext given to the handler");
        Outcome outcome = ackOn(connection, namespace, context.delivery());
        if (outcome == Outcome.ACKED && context instanceof CompletionAware aware) {
            aware.completedInCallerTransaction();
        }
        return outcome;
    }

    private void ensureOpen() {
        if (engine.isClosed()) {
            throw new QueueClosedException("the queue is closed");
        }
    }

    private static void requireArgument(String name, Object value, String expectation) {
        if (value == null) {
            throw new InvalidInputException(name, null, expectation);
        }
    }
}
