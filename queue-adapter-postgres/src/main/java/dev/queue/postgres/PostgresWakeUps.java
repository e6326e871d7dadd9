package dev.queue.postgres;

import dev.queue.domain.port.ClaimPosition;
import dev.queue.domain.port.WakeUps;
import dev.queue.domain.rules.RetryPause;
import org.apache.ibatis.session.SqlSession;
import org.apache.ibatis.session.SqlSessionFactory;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * {@link WakeUps} over LISTEN/NOTIFY. Publishing statements NOTIFY the schema's channel inside their own
 * transaction (see {@code db/queue/R__publish.sql}); this class holds one dedicated connection, outside the pool, that
 * LISTENs to it, and a daemon thread that waits for notifications and calls the listeners of their
 * (namespace, topic).
 *
 * <ul>
 *   <li>Connection loss: the thread reconnects with exponential backoff (50 ms doubling, capped at 5 s, jittered), and once
 *       listening again calls every listener once, because notifications sent meanwhile are lost.</li>
 *   <li>Transaction-pooling proxies (PgBouncer in transaction mode) accept LISTEN but never deliver. After each
 *       LISTEN a probe notification is sent through the pool; when it does not arrive within the probe timeout,
 *       the class logs one warning and from then on calls every listener each poll interval instead. Between
 *       those full polls it reads the wake marks of the listeners' namespaces every mark poll interval (through
 *       the pool, one small query) and calls the listeners of a namespace whose mark changed: a publish is picked
 *       up within about that interval, and a subscriber claims only when there is news.</li>
 *   <li>Either way a lost wake-up only costs latency: the subscriber runtime also sweeps on its own.</li>
 * </ul>
 */
final class PostgresWakeUps implements WakeUps, AutoCloseable {

    /** Opens the dedicated connection: DriverManager with the queue's URL, or the application's DataSource. */
    @FunctionalInterface
    interface ConnectionSource {
        Connection open() throws SQLException;
    }

    static final Duration DEFAULT_PROBE_TIMEOUT = Duration.ofSeconds(2);
    static final Duration RECONNECT_INITIAL = Duration.ofMillis(50);
    static final Duration RECONNECT_MAX = Duration.ofSeconds(5);
    private static final int WAIT_MILLIS = 500;
    private static final long HEALTH_CHECK_NANOS = TimeUnit.SECONDS.toNanos(15);
    private static final int NETWORK_TIMEOUT_MILLIS = 30_000;
    private static final String PROBE_PREFIX = "~probe/";
    /** Names cannot hold ':', so no topic's wake-up starts like this. */
    private static final String CANCEL_PREFIX = "cancel:";
    /**
     * "promoted:namespace/topic/priority/due-micros/id", sent by the promotion of ordering keys (R__flow_control.sql).
     */
    private static final String PROMOTED_PREFIX = "promoted:";

    private static final Logger LOG = LoggerFactory.getLogger(PostgresWakeUps.class);

    private final String schema;
    private final ConnectionSource source;
    private final SqlSessionFactory sessions;
    private final Consumer<String> probeSender;
    private final Duration probeTimeout;
    private final Duration pollInterval;
    private final Duration markPollInterval;
    /** The last wake mark read per namespace; a namespace missing here has not been read yet. */
    private final java.util.Map<String, Long> marks = new java.util.HashMap<>();
    private boolean markFailureLogged;
    private final ConcurrentHashMap<String, CopyOnWriteArrayList<Listener>> byTopic = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, CopyOnWriteArrayList<PromotionListener>> promotionsByTopic = new ConcurrentHashMap<>();
    private final CopyOnWriteArrayList<Listener> listeners = new CopyOnWriteArrayList<>();
    private final ConcurrentHashMap<String, CopyOnWriteArrayList<java.util.function.LongConsumer>> cancelListeners =
            new ConcurrentHashMap<>();
    private final AtomicBoolean proxyWarned = new AtomicBoolean();
    private final AtomicLong connects = new AtomicLong();
    private final Object pause = new Object();

    private volatile Connection connection;
    private volatile int backendPid;
    private volatile boolean polling;
    private volatile boolean closed;
    /** Set once {@link #start()} ran; read by {@link #state()} without the lock that close holds. */
    private volatile boolean started;
    private Thread thread;

    PostgresWakeUps(String schema, ConnectionSource source, SqlSessionFactory sessions, Consumer<String> probeSender,
                    Duration probeTimeout, Duration pollInterval) {
        this(schema, source, sessions, probeSender, probeTimeout, pollInterval, Duration.ZERO);
    }

    /** With {@code markPollInterval} above zero, a polling instance reads the wake marks that often. */
    PostgresWakeUps(String schema, ConnectionSource source, SqlSessionFactory sessions, Consumer<String> probeSender,
                    Duration probeTimeout, Duration pollInterval, Duration markPollInterval) {
        this.markPollInterval = Objects.requireNonNull(markPollInterval, "markPollInterval");
        this.schema = Objects.requireNonNull(schema, "schema");
        this.source = Objects.requireNonNull(source, "source");
        this.sessions = Objects.requireNonNull(sessions, "sessions");
        this.probeSender = Objects.requireNonNull(probeSender, "probeSender");
        this.probeTimeout = Objects.requireNonNull(probeTimeout, "probeTimeout");
        this.pollInterval = Objects.requireNonNull(pollInterval, "pollInterval");
    }

    /** Wake-ups that never come: subscribers rely on their sweep alone ({@code listen(false)}). */
    static WakeUps none() {
        return (namespace, topics, onWake) -> () -> { };
    }

    /**
     * Connects and LISTENs on the calling thread (so a wake-up published right after the caller subscribed is not
     * missed), then starts the listener thread. A first connection failure is logged and retried by the thread.
     * {@link #listen} calls it for the first listener: a process that only publishes never holds a listening
     * connection, and its server session is not woken by every notification of the schema.
     */
    synchronized void start() {
        if (thread != null || closed) {
            return;
        }
        try {
            connect();
        } catch (SQLException | RuntimeException e) {
            LOG.warn("schema {}: cannot LISTEN yet ({}); retrying in the background, subscribers sweep meanwhile",
                    schema, e.getMessage());
        }
        started = true;
        thread = new Thread(this::run, "queue-listener-" + schema);
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public Registration listenForCancels(String namespace, java.util.function.LongConsumer onCancel) {
        Objects.requireNonNull(onCancel, "onCancel");
        cancelListeners.computeIfAbsent(namespace, k -> new CopyOnWriteArrayList<>()).add(onCancel);
        start();
        return () -> {
            CopyOnWriteArrayList<java.util.function.LongConsumer> list = cancelListeners.get(namespace);
            if (list != null) {
                list.remove(onCancel);
            }
        };
    }

    @Override
    public Registration listenForPromotions(String namespace, Collection<String> topics,
                                            BiConsumer<String, ClaimPosition> onPromoted) {
        PromotionListener listener = new PromotionListener(namespace, Objects.requireNonNull(onPromoted, "onPromoted"));
        List<String> keys = topics.stream().map(topic -> key(namespace, topic)).distinct().toList();
        for (String key : keys) {
            promotionsByTopic.computeIfAbsent(key, k -> new CopyOnWriteArrayList<>()).add(listener);
        }
        start();
        return () -> {
            for (String key : keys) {
                CopyOnWriteArrayList<PromotionListener> list = promotionsByTopic.get(key);
                if (list != null) {
                    list.remove(listener);
                }
            }
        };
    }

    private record PromotionListener(String namespace, BiConsumer<String, ClaimPosition> onPromoted) {
    }

    @Override
    public Registration listen(String namespace, Collection<String> topics, Runnable onWake) {
        Listener listener = new Listener(namespace, List.copyOf(topics), onWake);
        listeners.add(listener);
        for (String topic : listener.topics) {
            byTopic.computeIfAbsent(key(namespace, topic), k -> new CopyOnWriteArrayList<>()).add(listener);
        }
        start();
        return () -> {
            listeners.remove(listener);
            for (String topic : listener.topics) {
                CopyOnWriteArrayList<Listener> list = byTopic.get(key(namespace, topic));
                if (list != null) {
                    list.remove(listener);
                }
            }
        };
    }

    /**
     * Stops the thread and gives the connection back. The thread is woken by a notification to itself, so the
     * connection ends healthy (UNLISTEN, then closed, or returned to its pool); only when that does not work is
     * the connection aborted.
     */
    @Override
    public void close() {
        Thread running;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            running = thread;
        }
        synchronized (pause) {
            pause.notifyAll();
        }
        Connection current = connection;
        if (running != null && current != null) {
            try {
                probeSender.accept(PROBE_PREFIX + "closing");
            } catch (RuntimeException e) {
                LOG.debug("schema {}: cannot wake the listener thread by a notification", schema, e);
            }
        }
        join(running, WAIT_MILLIS * 2L);
        if (running != null && running.isAlive() && current != null) {
            try {
                // closes the socket at once, so a thread blocked waiting for notifications returns now
                current.abort(Runnable::run);
            } catch (SQLException | RuntimeException e) {
                LOG.debug("schema {}: aborting the listen connection failed", schema, e);
            }
            join(running, TimeUnit.SECONDS.toMillis(5));
        }
        Connection last = connection;
        connection = null;
        if (last != null) {
            try (SqlSession session = MyBatisSupport.sessionOn(sessions, last)) {
                session.getMapper(WakeUpMapper.class).unlisten();
                last.close();
            } catch (SQLException | RuntimeException e) {
                discard(last);
            }
        }
    }

    private static void join(Thread thread, long millis) {
        if (thread == null) {
            return;
        }
        try {
            thread.join(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ------------------------------------------------------------------ for tests and operators

    /** The server process id of the listening connection; 0 while not connected. */
    int backendPid() {
        return connection == null ? 0 : backendPid;
    }

    /** True once LISTEN was found not to deliver (a transaction-pooling proxy): listeners are polled instead. */
    boolean isPolling() {
        return polling;
    }

    /** True while a connection is LISTENing. */
    boolean isListening() {
        return connection != null && !polling;
    }

    /** What the listener does now; {@link ListenerState#OFF} is never returned, that is {@link #none()}. */
    ListenerState state() {
        if (closed) {
            return ListenerState.CLOSED;
        }
        if (!started) {
            return ListenerState.NOT_STARTED;
        }
        if (polling) {
            return ListenerState.POLLING;
        }
        return connection != null ? ListenerState.LISTENING : ListenerState.RECONNECTING;
    }

    /** How many times a connection was established and LISTENed. */
    long connectCount() {
        return connects.get();
    }

    // ------------------------------------------------------------------ the listener thread

    private void run() {
        int failures = 0;
        long lastTraffic = System.nanoTime();
        long nextFullPoll = 0;
        while (!closed) {
            if (polling) {
                if (markPollInterval.isZero() || markPollInterval.compareTo(pollInterval) >= 0) {
                    pause(pollInterval);
                    if (!closed) {
                        wakeAll();
                    }
                    continue;
                }
                pause(markPollInterval);
                if (closed) {
                    break;
                }
                if (System.nanoTime() - nextFullPoll >= 0) {
                    nextFullPoll = System.nanoTime() + pollInterval.toNanos();
                    readMarks(false);
                    wakeAll();
                } else {
                    readMarks(true);
                }
                continue;
            }
            Connection current = connection;
            if (current == null) {
                try {
                    if (connect()) {
                        LOG.info("schema {}: listening again for wake-ups; sweeping every listener once", schema);
                        wakeAll();
                    }
                    failures = 0;
                    lastTraffic = System.nanoTime();
                } catch (SQLException | RuntimeException e) {
                    if (closed) {
                        break;
                    }
                    failures++;
                    Duration wait = RetryPause.after(failures, RECONNECT_INITIAL, RECONNECT_MAX, ThreadLocalRandom.current()::nextDouble);
                    LOG.warn("schema {}: cannot LISTEN ({}); retrying in {} ms", schema, e.getMessage(), wait.toMillis());
                    pause(wait);
                }
                continue;
            }
            try {
                PGNotification[] notifications = current.unwrap(PGConnection.class).getNotifications(WAIT_MILLIS);
                if (notifications != null && notifications.length > 0) {
                    lastTraffic = System.nanoTime();
                    dispatch(notifications, null);
                } else if (System.nanoTime() - lastTraffic > HEALTH_CHECK_NANOS) {
                    ping(current);
                    lastTraffic = System.nanoTime();
                }
            } catch (SQLException | RuntimeException e) {
                if (closed) {
                    break;
                }
                LOG.warn("schema {}: lost the listen connection ({}); reconnecting, wake-ups sent meanwhile are lost"
                        + " and covered by a sweep", schema, e.getMessage());
                connection = null;
                discard(current);
            }
        }
    }

    /**
     * Opens the connection, LISTENs and probes it. Returns true when listening; false when the probe showed that
     * LISTEN does not deliver, in which case the instance switches to polling for good.
     */
    private boolean connect() throws SQLException {
        Connection opened = source.open();
        try {
            opened.setAutoCommit(true);
            opened.setNetworkTimeout(Runnable::run, NETWORK_TIMEOUT_MILLIS);
            int pid;
            try (SqlSession session = MyBatisSupport.sessionOn(sessions, opened)) {
                WakeUpMapper mapper = session.getMapper(WakeUpMapper.class);
                mapper.listen();
                pid = mapper.backendPid();
            }
            PGConnection pg = opened.unwrap(PGConnection.class);
            if (!probe(pg)) {
                polling = true;
                if (proxyWarned.compareAndSet(false, true)) {
                    LOG.warn("schema {}: LISTEN on the wake-up channel {} does not deliver notifications (a "
                                    + "transaction-pooling proxy such as PgBouncer in transaction mode?); wake-ups fall "
                                    + "back to polling every {} ms{}. Give the queue a direct connection URL for prompt "
                                    + "delivery.", schema, PostgresQueueConfig.channelOf(schema), pollInterval.toMillis(),
                            markPollInterval.isZero() || markPollInterval.compareTo(pollInterval) >= 0 ? ""
                                    : ", and to reading the wake marks every " + markPollInterval.toMillis() + " ms");
                    if (pg.getPrepareThreshold() > 0) {
                        // before 1.21 PgBouncer keeps no prepared statements: the driver's would reach other sessions
                        LOG.warn("schema {}: the connections have prepareThreshold={}; behind PgBouncer in "
                                + "transaction mode before 1.21 statements then fail with 'prepared statement \"S_n\" "
                                + "does not exist'. Set prepareThreshold=0 in the JDBC URL, or max_prepared_statements "
                                + "in PgBouncer 1.21 or later", schema, pg.getPrepareThreshold());
                    }
                }
                discard(opened);
                return false;
            }
            backendPid = pid;
            connection = opened;
            connects.incrementAndGet();
            if (closed) {
                connection = null;
                discard(opened);
            }
            return true;
        } catch (SQLException | RuntimeException e) {
            discard(opened);
            throw e;
        }
    }

    /** Sends a probe through the pool and waits for it here; dispatches whatever else arrives meanwhile. */
    private boolean probe(PGConnection pg) throws SQLException {
        String probe = PROBE_PREFIX + UUID.randomUUID();
        probeSender.accept(probe);
        long deadline = System.nanoTime() + probeTimeout.toNanos();
        boolean[] seen = new boolean[1];
        while (!seen[0] && !closed) {
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (left <= 0) {
                break;
            }
            PGNotification[] notifications = pg.getNotifications((int) Math.min(left, WAIT_MILLIS));
            if (notifications != null) {
                dispatch(notifications, payload -> seen[0] |= payload.equals(probe));
            }
        }
        return seen[0];
    }

    private void dispatch(PGNotification[] notifications, Consumer<String> probes) {
        for (PGNotification notification : notifications) {
            String payload = notification.getParameter();
            if (payload == null || payload.startsWith(PROBE_PREFIX)) {
                if (probes != null && payload != null) {
                    probes.accept(payload);
                }
                continue;
            }
            if (payload.startsWith(CANCEL_PREFIX)) {
                cancelled(payload);
                continue;
            }
            if (payload.startsWith(PROMOTED_PREFIX)) {
                promoted(payload);
                continue;
            }
            List<Listener> targets = byTopic.get(payload);
            if (targets == null) {
                continue;
            }
            for (Listener listener : targets) {
                listener.wake(payload);
            }
        }
    }

    /** "cancel:namespace/id", sent by the cancel of a running message (R__settle.sql): its handler is told at once. */
    private void cancelled(String payload) {
        int slash = payload.lastIndexOf('/');
        if (slash < CANCEL_PREFIX.length()) {
            return;
        }
        List<java.util.function.LongConsumer> targets = cancelListeners.get(payload.substring(CANCEL_PREFIX.length(), slash));
        if (targets == null) {
            return;
        }
        long id;
        try {
            id = Long.parseLong(payload.substring(slash + 1));
        } catch (NumberFormatException e) {
            return;
        }
        for (java.util.function.LongConsumer target : targets) {
            try {
                target.accept(id);
            } catch (RuntimeException e) {
                LOG.warn("cancel listener for message {} failed", id, e);
            }
        }
    }

    /** Tells the promotion listeners of the topic where its first promoted message sits in the claim order. */
    private void promoted(String payload) {
        int idSlash = payload.lastIndexOf('/');
        int runAtSlash = idSlash > 0 ? payload.lastIndexOf('/', idSlash - 1) : -1;
        int prioritySlash = runAtSlash > 0 ? payload.lastIndexOf('/', runAtSlash - 1) : -1;
        if (prioritySlash <= PROMOTED_PREFIX.length()) {
            return;
        }
        String topicKey = payload.substring(PROMOTED_PREFIX.length(), prioritySlash);
        List<PromotionListener> targets = promotionsByTopic.get(topicKey);
        if (targets == null) {
            return;
        }
        ClaimPosition position;
        try {
            long runAtMicros = Long.parseLong(payload.substring(runAtSlash + 1, idSlash));
            position = new ClaimPosition(Integer.parseInt(payload.substring(prioritySlash + 1, runAtSlash)),
                    Instant.EPOCH.plus(runAtMicros, ChronoUnit.MICROS), Long.parseLong(payload.substring(idSlash + 1)));
        } catch (RuntimeException e) {
            // not one the queue sent (anyone allowed to notify may send anything): a hint to ignore
            return;
        }
        for (PromotionListener target : targets) {
            try {
                target.onPromoted.accept(topicKey.substring(target.namespace.length() + 1), position);
            } catch (RuntimeException e) {
                LOG.warn("promotion listener of namespace {} failed for {}", target.namespace, payload, e);
            }
        }
    }

    /**
     * Reads the wake marks of the listeners' namespaces and, when {@code wake}, calls the listeners of each
     * namespace whose mark changed (or appeared). A failure is logged once until a read works again: the full
     * poll still finds the work.
     */
    private void readMarks(boolean wake) {
        java.util.Set<String> namespaces = new java.util.TreeSet<>();
        for (Listener listener : listeners) {
            namespaces.add(listener.namespace);
        }
        if (namespaces.isEmpty()) {
            return;
        }
        List<WakeUpMapper.WakeMark> read;
        try (SqlSession session = sessions.openSession(true)) {
            read = session.getMapper(WakeUpMapper.class).wakeMarks(namespaces.toArray(String[]::new));
        } catch (RuntimeException e) {
            if (!markFailureLogged) {
                markFailureLogged = true;
                LOG.warn("schema {}: cannot read the wake marks of namespaces {} ({}); subscribers find work by the "
                        + "poll every {} ms until a read works", schema, namespaces, e.getMessage(), pollInterval.toMillis());
            }
            return;
        }
        if (markFailureLogged) {
            markFailureLogged = false;
            LOG.info("schema {}: reading the wake marks again", schema);
        }
        for (WakeUpMapper.WakeMark mark : read) {
            Long before = marks.put(mark.namespace(), mark.mark());
            if (wake && (before == null || before != mark.mark())) {
                for (Listener listener : listeners) {
                    if (listener.namespace.equals(mark.namespace())) {
                        listener.wake(null);
                    }
                }
            }
        }
    }

    private void wakeAll() {
        for (Listener listener : listeners) {
            listener.wake(null);
        }
    }

    private void ping(Connection current) {
        try (SqlSession session = MyBatisSupport.sessionOn(sessions, current)) {
            session.getMapper(WakeUpMapper.class).ping();
        }
    }

    /**
     * Gives a connection back. A statement is tried first so that a pool in between sees the failure of a dead
     * connection and evicts it instead of lending it out again.
     */
    private void discard(Connection dead) {
        if (dead == null) {
            return;
        }
        try {
            ping(dead);
        } catch (RuntimeException expected) {
            LOG.trace("schema {}: the discarded connection is dead", schema, expected);
        }
        try {
            dead.close();
        } catch (SQLException | RuntimeException e) {
            LOG.debug("schema {}: closing the listen connection failed", schema, e);
        }
    }

    private void pause(Duration duration) {
        synchronized (pause) {
            if (closed) {
                return;
            }
            try {
                pause.wait(Math.max(1, duration.toMillis()));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                closed = true;
            }
        }
    }

    private static String key(String namespace, String topic) {
        return namespace + '/' + topic;
    }

    private static final class Listener {
        final String namespace;
        final List<String> topics;
        final Runnable onWake;

        Listener(String namespace, List<String> topics, Runnable onWake) {
            this.namespace = Objects.requireNonNull(namespace, "namespace");
            this.topics = topics;
            this.onWake = Objects.requireNonNull(onWake, "onWake");
        }

        void wake(String cause) {
            try {
                onWake.run();
            } catch (RuntimeException e) {
                LOG.warn("wake-up listener of namespace {} topics {} failed (cause: {})", namespace, topics,
                        cause == null ? "sweep" : "notification " + cause, e);
            }
        }
    }
}
