package dev.queue.postgres;

import dev.queue.api.InvalidInputException;
import dev.queue.api.ManualClock;
import dev.queue.api.QueueOptions;
import dev.queue.domain.engine.QueueEngine;

import java.time.Duration;
import java.util.regex.Pattern;

/**
 * How a {@link PostgresQueue} uses its database: the one configuration object of the adapter, the
 * {@link QueueOptions} it carries included. Immutable; every setter returns a new instance and checks its own value
 * at once. {@link #validate()} checks everything together, and {@link PostgresQueue#create} and
 * {@link PostgresQueue#connect} call it before they open any connection: a queue never starts with a value it
 * cannot honour. Either way a bad value fails with {@link InvalidInputException} naming the property and the value
 * received.
 *
 * <table>
 *   <caption>Properties and defaults</caption>
 *   <tr><th>property</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@link #schema(String)}</td><td>{@value #DEFAULT_SCHEMA}</td><td>the PostgreSQL schema holding the
 *       queue's tables; one schema is one queue installation</td></tr>
 *   <tr><td>{@link #queueOptions(QueueOptions)}</td><td>{@link QueueOptions#defaults()}</td><td>behaviour shared by
 *       every adapter (attempts, backoff, sweep interval, codec)</td></tr>
 *   <tr><td>{@link #poolSize(int)}</td><td>{@value #DEFAULT_POOL_SIZE}</td><td>connections of the pool that
 *       {@link PostgresQueue#connect} creates (ignored by {@link PostgresQueue#create})</td></tr>
 *   <tr><td>{@link #migrateOnStart(boolean)}</td><td>true</td><td>apply the schema migrations when the queue
 *       starts (under an advisory lock); false when Flyway or Liquibase applies them</td></tr>
 *   <tr><td>{@link #completedRetention(CompletedRetention)}</td><td>{@link CompletedRetention#DELETE}</td><td>delete
 *       acknowledged messages, or move them to an archive table</td></tr>
 *   <tr><td>{@link #listen(boolean)}</td><td>true</td><td>hold one connection that LISTENs for wake-ups; false:
 *       subscribers find work by sweeping only</td></tr>
 *   <tr><td>{@link #durableAcknowledgements(boolean)}</td><td>false</td><td>claims and acknowledgements wait for
 *       their commit to reach disk; by default only a server crash can undo the last moments of them, and those
 *       messages run again</td></tr>
 *   <tr><td>{@link #markPollInterval(Duration)}</td><td>20 ms</td><td>where LISTEN delivers nothing (a
 *       transaction pooler), how often subscribers read the wake marks; 0: off</td></tr>
 *   <tr><td>{@link #clock(ManualClock)}</td><td>none: the database clock decides</td><td>for tests: a manual clock,
 *       whose time every statement uses</td></tr>
 * </table>
 */
public final class PostgresQueueConfig {

    public static final String DEFAULT_SCHEMA = "queue";
    public static final int DEFAULT_POOL_SIZE = 10;
    /**
     * At most one wake-up per topic per this window from a publishing process; what it holds back, a trailing one
     * covers. 2 ms rather than 5: at 1,000 single publishes a second it lowers the median publish-to-handler
     * latency by about the difference (docs/benchmarks.md), while at most 500 wake-ups a second per topic and
     * process, plus trailing ones, leave the global notify lock far from busy.
     */
    public static final Duration DEFAULT_NOTIFY_WINDOW = Duration.ofMillis(2);
    /** How often a queue checks the hot table's dead row versions and vacuums past 20,000. */
    public static final Duration DEFAULT_VACUUM_INTERVAL = Duration.ofSeconds(2);
    /** How often a subscriber that cannot LISTEN reads the wake marks (see {@link #markPollInterval(Duration)}). */
    public static final Duration DEFAULT_MARK_POLL_INTERVAL = Duration.ofMillis(20);
    public static final int MAX_POOL_SIZE = 1000;
    /** Lower-case, so the name means the same quoted or not; short enough for the derived channel name. */
    static final Pattern SCHEMA_NAME = Pattern.compile("[a-z_][a-z0-9_]{0,49}");

    private final String schema;
    private final QueueOptions queueOptions;
    private final int poolSize;
    private final boolean migrateOnStart;
    private final CompletedRetention completedRetention;
    private final boolean listen;
    private final ManualClock clock;
    private final Duration notifyWindow;
    private final Duration vacuumInterval;
    private final boolean durableAcknowledgements;
    private final String actor;
    private final Duration markPollInterval;

    private PostgresQueueConfig(String schema, QueueOptions queueOptions, int poolSize, boolean migrateOnStart,
                                CompletedRetention completedRetention, boolean listen, ManualClock clock, Duration notifyWindow,
                                Duration vacuumInterval, boolean durableAcknowledgements, String actor,
                                Duration markPollInterval) {
        this.schema = schema;
        this.markPollInterval = markPollInterval;
        this.actor = actor;
        this.queueOptions = queueOptions;
        this.poolSize = poolSize;
        this.migrateOnStart = migrateOnStart;
        this.completedRetention = completedRetention;
        this.listen = listen;
        this.notifyWindow = notifyWindow;
        this.vacuumInterval = vacuumInterval;
        this.durableAcknowledgements = durableAcknowledgements;
        this.clock = clock;
    }

    /** The fields of a configuration while a wither changes one of them. */
    private static final class Values {
        String schema;
        QueueOptions queueOptions;
        int poolSize;
        boolean migrateOnStart;
        CompletedRetention completedRetention;
        boolean listen;
        ManualClock clock;
        Duration notifyWindow;
        Duration vacuumInterval;
        boolean durableAcknowledgements;
        String actor;
        Duration markPollInterval;

        Values(PostgresQueueConfig from) {
            markPollInterval = from.markPollInterval;
            actor = from.actor;
            schema = from.schema;
            queueOptions = from.queueOptions;
            poolSize = from.poolSize;
            migrateOnStart = from.migrateOnStart;
            completedRetention = from.completedRetention;
            listen = from.listen;
            clock = from.clock;
            notifyWindow = from.notifyWindow;
            vacuumInterval = from.vacuumInterval;
            durableAcknowledgements = from.durableAcknowledgements;
        }
    }

    /** A copy with one change: every wither goes through here, checked before it is called. */
    private PostgresQueueConfig with(java.util.function.Consumer<Values> change) {
        Values next = new Values(this);
        change.accept(next);
        return new PostgresQueueConfig(next.schema, next.queueOptions, next.poolSize, next.migrateOnStart, next.completedRetention,
                next.listen, next.clock, next.notifyWindow, next.vacuumInterval, next.durableAcknowledgements, next.actor,
                next.markPollInterval);
    }

    /**
     * Schema "queue", default queue options, a pool of 10, migrations on start, delete on completion, listen,
     * claims and acknowledgements without waiting for their flush.
     */
    public static PostgresQueueConfig defaults() {
        return new PostgresQueueConfig(DEFAULT_SCHEMA, QueueOptions.defaults(), DEFAULT_POOL_SIZE, true,
                CompletedRetention.DELETE, true, null, DEFAULT_NOTIFY_WINDOW, DEFAULT_VACUUM_INTERVAL, false, null,
                DEFAULT_MARK_POLL_INTERVAL);
    }

    /**
     * Who this queue acts for in the audit trail (docs/tenants.md): recorded as {@code published_by},
     * {@code failed_by}, {@code redriven_by}, in {@code audit_log} and in the attempt history. 1 to 128 characters
     * without control characters, or null (the default) for none. The queue passes it with each statement, and sets
     * the setting {@code queue.actor} only inside the transaction of a statement whose triggers record it (a retry,
     * a schedule or policy change): nothing is left on the connections of a shared pool.
     */
    public PostgresQueueConfig actor(String value) {
        if (value != null && (value.isEmpty() || value.length() > 128 || value.chars().anyMatch(Character::isISOControl))) {
            throw new InvalidInputException("actor", value, "1 to 128 characters without control characters, or null");
        }
        return with(next -> next.actor = value);
    }

    /** Null when none. */
    public String actor() {
        return actor;
    }

    /**
     * The schema holding the queue's tables: 1 to 50 characters, lower-case letters, digits and underscores,
     * not starting with a digit nor with {@code pg_}. It is always quoted in SQL.
     */
    public PostgresQueueConfig schema(String value) {
        checkSchema(value);
        return with(next -> next.schema = value);
    }

    /** Checked as a whole by {@link #validate()}, when the queue is created. */
    public PostgresQueueConfig queueOptions(QueueOptions value) {
        checkQueueOptionsGiven(value);
        return with(next -> next.queueOptions = value);
    }

    /** 1 to 1000 connections; only for the pool that {@link PostgresQueue#connect} creates and owns. */
    public PostgresQueueConfig poolSize(int value) {
        checkPoolSize(value);
        return with(next -> next.poolSize = value);
    }

    public PostgresQueueConfig migrateOnStart(boolean value) {
        return with(next -> next.migrateOnStart = value);
    }

    public PostgresQueueConfig completedRetention(CompletedRetention value) {
        checkCompletedRetention(value);
        return with(next -> next.completedRetention = value);
    }

    public PostgresQueueConfig listen(boolean value) {
        return with(next -> next.listen = value);
    }

    /**
     * For tests: a manual clock whose time every statement uses, so a test travels in time without sleeping.
     * Null (the default): the database clock decides due times and leases, one clock for the whole fleet.
     */
    public PostgresQueueConfig clock(ManualClock value) {
        return with(next -> next.clock = value);
    }

    public String schema() {
        return schema;
    }

    public QueueOptions queueOptions() {
        return queueOptions;
    }

    public int poolSize() {
        return poolSize;
    }

    public boolean migrateOnStart() {
        return migrateOnStart;
    }

    public CompletedRetention completedRetention() {
        return completedRetention;
    }

    /**
     * Publishers send at most one wake-up (NOTIFY) per topic per window; publishes inside a window are covered by
     * one trailing wake-up sent after they commit. Every NOTIFY takes one global lock at commit, so notifying on
     * each publish caps single-message publishing near 2,500 per second; the window removes that cap and costs
     * at most the window in wake-up latency. Zero notifies on every publish. Publishes on a caller's connection
     * always notify inside the caller's transaction. 0 to 1 s; default 2 ms.
     */
    public PostgresQueueConfig notifyWindow(Duration value) {
        checkNotifyWindow(value);
        return with(next -> next.notifyWindow = value);
    }

    /**
     * Every interval, vacuum the hot table if it holds more than 20,000 dead row versions, so
     * claims do not slow down between autovacuum's visits (once a minute by default). While a transaction holds
     * the vacuum horizon, so that a vacuum removes almost nothing, it backs off until the horizon moves (and logs
     * once which session holds it). Zero turns it off (leave it to autovacuum). 0 to 1 h; default 2 s.
     */
    public PostgresQueueConfig vacuumInterval(Duration value) {
        HotTableVacuum.Config.every(value);
        return with(next -> next.vacuumInterval = value);
    }

    /** The hot-table vacuum's configuration: this interval, its default threshold and back-off. */
    HotTableVacuum.Config vacuum() {
        return HotTableVacuum.Config.every(vacuumInterval);
    }

    public Duration vacuumInterval() {
        return vacuumInterval;
    }

    /**
     * When LISTEN delivers nothing (behind a transaction pooler such as PgBouncer in transaction mode, with no
     * direct connection for the listener), how often the queue reads the wake marks of its subscribers' namespaces:
     * one small query (table {@code wake_marks}, 16 rows per namespace) through the pool, after which only the
     * subscribers of a namespace whose mark changed claim. A publish bumps its namespace's mark with the wake-up it sends. The full poll
     * at the sweep interval stays as the backstop. Zero turns the marks off: subscribers then find work at the
     * sweep interval only. Unused while LISTEN works. 0 to 1 s; default 20 ms.
     */
    public PostgresQueueConfig markPollInterval(Duration value) {
        checkMarkPollInterval(value);
        return with(next -> next.markPollInterval = value);
    }

    public Duration markPollInterval() {
        return markPollInterval;
    }

    /**
     * Whether claims and acknowledgements wait, like every other commit, until the database has flushed their
     * commit record to disk. By default they do not (their statements set {@code synchronous_commit} to off for
     * their own transaction): they are the queue's bookkeeping, two commits per message beside the publish, and
     * on a small server waiting for those flushes costs more than the whole statement. Publishes, retries, dead
     * letters and everything else still wait for the flush. What it risks is within at-least-once delivery: if the
     * database server itself crashes (not the application), claims and acknowledgements of the last moments
     * before the crash (at most about three times {@code wal_writer_delay}, 0.6 s by default) can be undone, so
     * those messages run again, and an undone claim does not count its attempt. True waits for every flush, at
     * the cost measured in docs/benchmarks.md.
     */
    public PostgresQueueConfig durableAcknowledgements(boolean value) {
        return with(next -> next.durableAcknowledgements = value);
    }

    public boolean durableAcknowledgements() {
        return durableAcknowledgements;
    }

    public Duration notifyWindow() {
        return notifyWindow;
    }

    public boolean listen() {
        return listen;
    }

    /** Null when the database clock decides. */
    public ManualClock clock() {
        return clock;
    }

    /** The NOTIFY channel of this schema: {@code <schema>_wakeup}. */
    public String channel() {
        return channelOf(schema);
    }

    static String channelOf(String schema) {
        return schema + "_wakeup";
    }

    /**
     * Checks every property and the queue options, each as its setter does and together; returns this
     * configuration. {@link PostgresQueue#create} and {@link PostgresQueue#connect} call it first.
     *
     * @throws InvalidInputException naming the first property that breaks a rule and the value received
     */
    public PostgresQueueConfig validate() {
        checkSchema(schema);
        checkQueueOptionsGiven(queueOptions);
        QueueEngine.checkOptions(queueOptions);
        checkPoolSize(poolSize);
        checkCompletedRetention(completedRetention);
        checkNotifyWindow(notifyWindow);
        checkMarkPollInterval(markPollInterval);
        vacuum();
        return this;
    }

    private static void checkQueueOptionsGiven(QueueOptions value) {
        if (value == null) {
            throw new InvalidInputException("queueOptions", null, "queue options (QueueOptions.defaults() and its setters)");
        }
    }

    private static void checkPoolSize(int value) {
        if (value < 1 || value > MAX_POOL_SIZE) {
            throw new InvalidInputException("poolSize", value, "a number of connections from 1 to " + MAX_POOL_SIZE);
        }
    }

    private static void checkCompletedRetention(CompletedRetention value) {
        if (value == null) {
            throw new InvalidInputException("completedRetention", null, "DELETE or ARCHIVE");
        }
    }

    private static void checkNotifyWindow(Duration value) {
        if (value == null || value.isNegative() || value.compareTo(Duration.ofSeconds(1)) > 0) {
            throw new InvalidInputException("notifyWindow", value, "0 to 1 s");
        }
    }

    private static void checkMarkPollInterval(Duration value) {
        if (value == null || value.isNegative() || value.compareTo(Duration.ofSeconds(1)) > 0) {
            throw new InvalidInputException("markPollInterval", value, "0 (off) to 1 s");
        }
    }

    static void checkSchema(String value) {
        if (value == null || !SCHEMA_NAME.matcher(value).matches() || value.startsWith("pg_")) {
            throw new InvalidInputException("schema", value,
                    "1 to 50 characters of a-z, 0-9 and _, not starting with a digit nor with pg_");
        }
    }

    /** Every field, so a logged configuration says all there is to know. */
    @Override
    public String toString() {
        return "PostgresQueueConfig{schema=" + schema + ", poolSize=" + poolSize + ", migrateOnStart=" + migrateOnStart
                + ", completedRetention=" + completedRetention + ", listen=" + listen + ", notifyWindow=" + notifyWindow
                + ", vacuumInterval=" + vacuumInterval + ", markPollInterval=" + markPollInterval
                + ", durableAcknowledgements=" + durableAcknowledgements
                + ", actor=" + (actor == null ? "none" : actor)
                + ", clock=" + (clock == null ? "database" : "manual " + clock.now()) + ", queueOptions=" + queueOptions + '}';
    }
}
