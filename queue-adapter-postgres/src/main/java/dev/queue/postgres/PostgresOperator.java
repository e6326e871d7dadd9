package dev.queue.postgres;

import dev.queue.api.InvalidInputException;
import dev.queue.api.ScheduleNotFoundException;
import org.apache.ibatis.session.SqlSession;
import org.apache.ibatis.session.SqlSessionFactory;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * What an operator asks of a queue's schema, without running a queue: the live workers, health warnings, why a
 * message did not run, stats, the namespaces, bounded searches by unique key or header, and the bounded changes
 * (redrive and purge dead letters, pause, resume and fire schedules, pause and resume topics, cancel messages).
 * Each is a call of a function of the SQL API (versions 9, 12, 14 and 19), so the answers are those psql users
 * get. Changes record an actor (set_actor, transaction-local) in the tables and the audit log. The queue CLI is
 * built on this class.
 *
 * <p>Thread-safe. Opens a connection per call from the DataSource it is given and holds none between calls.
 */
public final class PostgresOperator {

    private static final Logger LOG = LoggerFactory.getLogger(PostgresOperator.class);
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
    private static final String NAME_RULE = "1 to 64 characters: letters, digits, '.', '_' or '-', starting with a letter or digit";
    /** Rows a redrive or purge takes per transaction at most (the SQL functions' own bound). */
    public static final int MAX_BATCH = 10_000;
    /** Pending, running and dead messages of a topic counted exactly up to this many; estimated past it. */
    public static final int EXACT_UP_TO = 1000;
    /** Topics of a namespace that {@link #topics} and {@link #stats} read at most (by name). */
    public static final int MAX_TOPICS = 1000;
    /** Namespaces {@link #namespaces} lists at most. */
    public static final int MAX_NAMESPACES = 1000;
    /** The window find_messages checks; a search by unique key probes indexes and reads no window. */
    private static final int SEARCH_WINDOW = 1000;

    private final Sessions sessions;
    private final String schema;

    private PostgresOperator(DataSource dataSource, String schema) {
        PostgresQueueConfig.checkSchema(schema);
        this.schema = schema;
        SqlSessionFactory factory = MyBatisSupport.sessionFactory(dataSource, this.schema);
        this.sessions = new Sessions(factory);
    }

    /** On the application's DataSource; the schema as in {@link PostgresQueueConfig#schema()}. */
    public static PostgresOperator create(DataSource dataSource, String schema) {
        InvalidInputException.requireNonNull(dataSource, "dataSource", "a javax.sql.DataSource of a PostgreSQL database");
        return new PostgresOperator(dataSource, schema);
    }

    /** A connection per call to the URL (no pool): what a command-line tool wants. */
    public static PostgresOperator connect(String jdbcUrl, String user, String password, String schema) {
        if (jdbcUrl == null || !jdbcUrl.startsWith("jdbc:postgresql:")) {
            throw new InvalidInputException("databaseUrl", jdbcUrl, "a PostgreSQL JDBC URL (jdbc:postgresql://host:port/database)");
        }
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        try {
            dataSource.setUrl(jdbcUrl);
        } catch (RuntimeException e) {
            throw new InvalidInputException("databaseUrl", jdbcUrl, "a PostgreSQL JDBC URL the driver accepts: " + e.getMessage());
        }
        if (user != null) {
            dataSource.setUser(user);
        }
        if (password != null) {
            dataSource.setPassword(password);
        }
        if (!jdbcUrl.toLowerCase(java.util.Locale.ROOT).contains("applicationname=")) {
            dataSource.setApplicationName("queue operator");
        }
        return new PostgresOperator(dataSource, schema);
    }

    public String schema() {
        return schema;
    }

    // ------------------------------------------------------------------ results

    /** A health warning: what is wrong, the evidence (a JSON object), what to do. No warning: healthy. */
    public record Warning(String code, String namespace, String topic, String message, String evidence, String advice) {
    }

    /** A queue process that heartbeats: alive, or gone (stopped heartbeating, not yet removed). */
    public record Worker(String id, String host, long pid, Instant startedAt, String version, String listener, String status,
                         List<String> namespaces, List<String> topics, int concurrency, int inFlight, Instant heartbeatAt) {
    }

    /**
     * Why a message did (not) run: the verdict first, then the facts. Fields that do not apply to its state are
     * null. {@code attemptHistory} is a JSON array of the attempts, oldest first: the ended ones kept (the last 20),
     * then the running or archived completed one; null when there is none. {@code attemptsNotKept} counts the older
     * ended attempts no longer kept.
     */
    public record Explanation(String verdict, long id, String topic, String state, Instant now, Instant runAt, Integer attempts,
                              Integer maxAttempts, String lastError, String worker, Instant leaseUntil, Boolean workerAlive,
                              Integer liveSubscribers, String uniqueKey, Long keyHeldBy, Instant failedAt, Instant completedAt,
                              String attemptHistory, Integer attemptsNotKept) {
    }

    /** A namespace's totals, the sums of its topics' ({@link #topics}): {@code exact} false when any is an estimate. */
    public record Stats(long total, long pending, long running, long completed, long dead, long topics, boolean exact) {
    }

    /**
     * A topic's counts and how many live workers subscribe it. Pending, running and dead are exact up to
     * {@link #EXACT_UP_TO}; past it they are the planner's estimate and {@code exact} is false. {@code oldestDueAt}
     * is the due time of the longest-waiting pending message that is due, null when none is.
     */
    public record TopicStats(String topic, long pending, long running, long completed, long dead, long total, int liveSubscribers,
                             boolean exact, Instant oldestDueAt) {
    }

    /** Messages of a topic published and completed in one minute (starting at {@code minute}). */
    public record TopicRate(String topic, Instant minute, long published, long completed) {
    }

    public record DeadLetter(long id, String topic, int attempts, int maxAttempts, String lastError, Instant publishedAt,
                             Instant failedAt, String failedBy) {
    }

    public record ScheduleInfo(String name, String topic, String cron, String every, String timeZone, boolean paused,
                               Instant nextRunAt, Instant lastRunAt) {
    }

    /**
     * A message a search found: {@code state} is pending, running, dead or completed (archived); {@code finishedAt}
     * its failure or completion time, {@code runAt} its due time while live. {@code headers} is a JSON object.
     */
    public record FoundMessage(long id, String topic, String state, String uniqueKey, String headers, int priority, int attempts,
                               int maxAttempts, Instant publishedAt, Instant runAt, Instant finishedAt, String lastError) {
    }

    /**
     * A topic's limits (docs/flow-control.md, "Limits"); a null field is a limit not set. Periods are whole
     * microseconds. {@code partitionKind} is {@code header} (a message's partition is the value of the header
     * {@code partitionHeader}; the default when a header is given) or {@code ordering_key} (its ordering key, no
     * header), null without per-partition limits.
     */
    public record TopicLimitsLine(String topic, Integer maxRunning, String partitionKind, String partitionHeader,
                                  Integer maxRunningPerPartition,
                                  Integer rateLimit, Duration ratePeriod, Integer partitionRateLimit,
                                  Duration partitionRatePeriod, Instant setAt, String setBy) {
    }

    /** A paused topic: since when and by whom. */
    public record PausedTopic(String topic, Instant pausedAt, String pausedBy) {
    }

    /** What a redrive did over all its batches: moved back to pending, and examined (some stay dead: key held). */
    public record Redriven(long redriven, long examined) {
    }

    // ------------------------------------------------------------------ reads

    /**
     * Brings the schema to this library's version, as a starting queue does; returns what this call applied: the
     * numbers of versioned migrations and the names of function files ({@code R__claim.sql}).
     */
    public List<String> migrate() {
        return SchemaMigrator.migrate(sessions.factory(), schema);
    }

    /** Health warnings of one namespace (and the database-wide ones), or of every namespace with null. */
    public List<Warning> health(String namespace) {
        optionalName("namespace", namespace);
        return rows("the health check", "operator.health", params("namespace", namespace)).stream()
                .map(r -> new Warning(text(r, "code"), text(r, "namespace"), text(r, "queue"), text(r, "message"),
                        text(r, "evidence"), text(r, "advice")))
                .toList();
    }

    /** The workers subscribing a namespace, or all with null: alive first. */
    public List<Worker> workers(String namespace) {
        optionalName("namespace", namespace);
        return rows("the list of workers", "operator.workers", params("namespace", namespace)).stream()
                .map(r -> new Worker(text(r, "id"), text(r, "host"), number(r, "pid").longValue(), instant(r, "started_at"),
                        text(r, "version"), text(r, "listener"), text(r, "status"), words(r, "namespaces"), words(r, "topics"),
                        number(r, "concurrency").intValue(), number(r, "in_flight").intValue(), instant(r, "heartbeat_at")))
                .toList();
    }

    /** Why a message of the namespace did not run (or did). */
    public Explanation explain(String namespace, long id) {
        name("namespace", namespace);
        positive("id", id);
        Map<String, Object> r = rows("the explanation of message " + id, "operator.explain",
                params("namespace", namespace, "id", id)).get(0);
        return new Explanation(text(r, "verdict"), id, text(r, "queue"), text(r, "state"), instant(r, "now"), instant(r, "run_at"),
                integer(r, "attempts"), integer(r, "max_attempts"), text(r, "last_error"), text(r, "worker"),
                instant(r, "lease_until"), (Boolean) r.get("worker_alive"), integer(r, "live_subscribers"),
                text(r, "unique_key"), r.get("key_held_by") == null ? null : number(r, "key_held_by").longValue(),
                instant(r, "failed_at"), instant(r, "completed_at"), text(r, "attempt_history"),
                integer(r, "attempts_not_kept"));
    }

    /** The namespace's totals: the sums of {@link #topics}, so as bounded as they are. */
    public Stats stats(String namespace) {
        List<TopicStats> topics = topics(namespace);
        return new Stats(topics.stream().mapToLong(TopicStats::total).sum(), topics.stream().mapToLong(TopicStats::pending).sum(),
                topics.stream().mapToLong(TopicStats::running).sum(), topics.stream().mapToLong(TopicStats::completed).sum(),
                topics.stream().mapToLong(TopicStats::dead).sum(), topics.size(), topics.stream().allMatch(TopicStats::exact));
    }

    /**
     * Per topic (at most {@link #MAX_TOPICS}, by name): counts read from indexes and counters, each bounded, never a
     * count of the whole hot table (see {@link TopicStats}).
     */
    public List<TopicStats> topics(String namespace) {
        name("namespace", namespace);
        return rows("the topics of namespace " + namespace, "operator.topics",
                params("namespace", namespace, "exactUpTo", EXACT_UP_TO, "maxTopics", MAX_TOPICS)).stream()
                .map(r -> {
                    long pending = number(r, "pending").longValue();
                    long running = number(r, "running").longValue();
                    long completed = number(r, "completed").longValue();
                    long dead = number(r, "dead").longValue();
                    boolean exact = Boolean.TRUE.equals(r.get("pending_exact")) && Boolean.TRUE.equals(r.get("running_exact"))
                            && Boolean.TRUE.equals(r.get("dead_exact"));
                    return new TopicStats(text(r, "queue"), pending, running, completed, dead, pending + running + completed + dead,
                            number(r, "live_subscribers").intValue(), exact, instant(r, "oldest_due_at"));
                })
                .toList();
    }

    /**
     * Messages published and completed per topic and minute over the last {@code minutes} (1 to 120, the current
     * minute so far included), from the counters {@code topic_rates} reads (R__stats.sql). Minutes without either
     * are left out.
     */
    public List<TopicRate> topicRates(String namespace, int minutes) {
        name("namespace", namespace);
        if (minutes < 1 || minutes > 120) {
            throw new InvalidInputException("minutes", minutes, "1 to 120");
        }
        return rows("the rates of namespace " + namespace, "operator.topicRates", params("namespace", namespace, "minutes", minutes))
                .stream()
                .map(r -> new TopicRate(text(r, "queue"), instant(r, "minute"), number(r, "published").longValue(),
                        number(r, "completed").longValue()))
                .toList();
    }

    /**
     * The namespaces that hold topics or schedules, by name, at most {@code limit} (1 to {@value #MAX_NAMESPACES}): an
     * index walk of one probe per namespace. A tenant's login gets its granted namespaces only.
     */
    public List<String> namespaces(int limit) {
        if (limit < 1 || limit > MAX_NAMESPACES) {
            throw new InvalidInputException("limit", limit, "1 to " + MAX_NAMESPACES);
        }
        return sessions.autoCommit("the list of namespaces", session -> session.<String>selectList("operator.listNamespaces",
                params("limit", limit)));
    }

    /**
     * Messages of the namespace holding this unique key: the live one, and the dead letters and archived messages
     * that had it, in every topic (at most {@value #MAX_TOPICS}) or in {@code topic}; newest first within each state,
     * at most {@code limit} (1 to 1000). One index probe per topic and table.
     */
    public List<FoundMessage> findByUniqueKey(String namespace, String topic, String uniqueKey, int limit) {
        name("namespace", namespace);
        optionalName("topic", topic);
        text("uniqueKey", uniqueKey, 255);
        checkLimit(limit);
        return found(namespace, params("namespace", namespace, "topic", topic, "uniqueKey", uniqueKey, "window", SEARCH_WINDOW,
                "limit", limit));
    }

    /**
     * Messages of the topic with this header ({@code value} null: any value). Headers have no index, so only a window
     * is searched: the next {@code window} pending messages in claim order, up to {@code window} running ones, and
     * the newest {@code window} dead letters and archived messages (1 to 10000 each). Newest first within each
     * state, at most {@code limit} (1 to 1000).
     */
    public List<FoundMessage> findByHeader(String namespace, String topic, String header, String value, int window, int limit) {
        name("namespace", namespace);
        name("topic", topic);
        name("header", header);
        if (value != null) {
            text("value", value, 1024);
        }
        if (window < 1 || window > 10_000) {
            throw new InvalidInputException("window", window, "1 to 10000");
        }
        checkLimit(limit);
        return found(namespace, params("namespace", namespace, "topic", topic, "headerName", header, "headerValue", value,
                "window", window, "limit", limit));
    }

    private List<FoundMessage> found(String namespace, Map<String, Object> params) {
        return rows("the search of namespace " + namespace, "operator.findMessages", params).stream()
                .map(r -> new FoundMessage(number(r, "id").longValue(), text(r, "queue"), text(r, "state"), text(r, "unique_key"),
                        text(r, "headers"), number(r, "priority").intValue(), number(r, "attempts").intValue(),
                        number(r, "max_attempts").intValue(), instant(r, "published_at"), instant(r, "run_at"),
                        instant(r, "finished_at"), text(r, "last_error")))
                .toList();
    }

    /** The namespace's paused topics, by name. */
    public List<PausedTopic> pausedTopics(String namespace) {
        name("namespace", namespace);
        return rows("the paused topics of namespace " + namespace, "operator.listPausedQueues", params("namespace", namespace))
                .stream()
                .map(r -> new PausedTopic(text(r, "queue"), instant(r, "paused_at"), text(r, "paused_by")))
                .toList();
    }

    /** One page of dead letters, by id after {@code afterId}, of one topic or all with null; 1 to 1000 per page. */
    public List<DeadLetter> deadLetters(String namespace, String topic, long afterId, int limit) {
        name("namespace", namespace);
        optionalName("topic", topic);
        if (afterId < 0) {
            throw new InvalidInputException("afterId", afterId, "0 or a message id");
        }
        if (limit < 1 || limit > 1000) {
            throw new InvalidInputException("limit", limit, "1 to 1000");
        }
        return rows("the dead letters of namespace " + namespace, "operator.listDeadLetters",
                params("namespace", namespace, "topic", topic, "afterId", afterId, "limit", limit)).stream()
                .map(r -> new DeadLetter(number(r, "id").longValue(), text(r, "queue"), number(r, "attempts").intValue(),
                        number(r, "max_attempts").intValue(), text(r, "last_error"), instant(r, "published_at"),
                        instant(r, "failed_at"), text(r, "failed_by")))
                .toList();
    }

    /** How many dead letters a redrive or purge with this selection would take (a dry run). */
    public long countDeadLetters(String namespace, String topic, List<Long> ids) {
        return countDeadLetters(namespace, topic, ids, null);
    }

    /**
     * Like {@link #countDeadLetters(String, String, List)}, but counting at most {@code upTo} + 1 (1 to 1000000):
     * a result above {@code upTo} means "more than upTo". What a page shown per request counts.
     */
    public long countDeadLettersUpTo(String namespace, String topic, List<Long> ids, int upTo) {
        if (upTo < 1 || upTo > 1_000_000) {
            throw new InvalidInputException("upTo", upTo, "1 to 1000000");
        }
        return countDeadLetters(namespace, topic, ids, upTo + 1);
    }

    private long countDeadLetters(String namespace, String topic, List<Long> ids, Integer limit) {
        checkSelection(namespace, topic, ids);
        return sessions.autoCommit("the count of dead letters of namespace " + namespace,
                session -> (Long) session.selectOne("operator.countDeadLetters", params("namespace", namespace, "topic", topic,
                        "ids", ids == null ? null : ids.toArray(Long[]::new), "limit", limit)));
    }

    // ------------------------------------------------------------------ changes

    /**
     * Moves dead letters back to pending: by ids, by topic, or (neither) the whole namespace, in transactions of at
     * most {@code batchSize} rows, each recorded with the actor.
     */
    public Redriven redriveDeadLetters(String namespace, String topic, List<Long> ids, int batchSize, String actor) {
        checkSelection(namespace, topic, ids);
        checkBatch(batchSize);
        checkActor(actor);
        long redriven = 0;
        long examined = 0;
        for (List<Long> chunk : chunks(ids)) {
            long after = 0;
            while (true) {
                Map<String, Object> params = params("namespace", namespace, "topic", topic,
                        "ids", chunk == null ? null : chunk.toArray(Long[]::new), "afterId", after, "limit", batchSize);
                Map<String, Object> r = sessions.inTransaction("the redrive of dead letters of namespace " + namespace, session -> {
                    session.selectOne("operator.setActor", Map.of("actor", actor));
                    return session.<Map<String, Object>>selectOne("operator.redriveDeadLetters", params);
                });
                int batchRedriven = number(r, "redriven").intValue();
                int batchExamined = number(r, "examined").intValue();
                redriven += batchRedriven;
                examined += batchExamined;
                after = number(r, "last_id").longValue();
                LOG.info("namespace {}: {} redrove {} of {} dead letters{} (up to id {})", namespace, actor, batchRedriven,
                        batchExamined, topic == null ? "" : " of topic " + topic, after);
                if (batchExamined < batchSize) {
                    break;
                }
            }
        }
        return new Redriven(redriven, examined);
    }

    /** Deletes dead letters: by ids, by topic, or the whole namespace, in bounded transactions. Returns how many. */
    public long purgeDeadLetters(String namespace, String topic, List<Long> ids, int batchSize, String actor) {
        checkSelection(namespace, topic, ids);
        checkBatch(batchSize);
        checkActor(actor);
        long purged = 0;
        for (List<Long> chunk : chunks(ids)) {
            while (true) {
                Map<String, Object> params = params("namespace", namespace, "topic", topic,
                        "ids", chunk == null ? null : chunk.toArray(Long[]::new), "limit", batchSize);
                int n = sessions.inTransaction("the purge of dead letters of namespace " + namespace, session -> {
                    session.selectOne("operator.setActor", Map.of("actor", actor));
                    return session.<Integer>selectOne("operator.purgeDeadLetters", params);
                });
                purged += n;
                LOG.info("namespace {}: {} purged {} dead letters{}", namespace, actor, n, topic == null ? "" : " of topic " + topic);
                if (n < batchSize) {
                    break;
                }
            }
        }
        return purged;
    }

    /**
     * Pauses the topic: once this returns, no claim starts a message of it; running ones finish. True when it was
     * running. Recorded in the audit log with the actor.
     */
    public boolean pauseTopic(String namespace, String topic, String actor) {
        return flowChange("pauseQueue", "the pause of topic " + topic, namespace, topic, actor);
    }

    /**
     * Sets the topic's limits (null: not set), replacing any it had; the SQL function checks them (QU001 for a bad one,
     * as {@link InvalidInputException}). True when they changed. Recorded with the actor.
     */
    public boolean setTopicLimits(String namespace, TopicLimitsLine limits, String actor) {
        name("namespace", namespace);
        name("topic", limits.topic());
        checkActor(actor);
        checkLimits(limits);
        Map<String, Object> params = new java.util.HashMap<>();
        params.put("namespace", namespace);
        params.put("topic", limits.topic());
        params.put("maxRunning", limits.maxRunning());
        params.put("partitionKind", limits.partitionKind());
        params.put("partitionHeader", limits.partitionHeader());
        params.put("maxRunningPerPartition", limits.maxRunningPerPartition());
        params.put("rateLimit", limits.rateLimit());
        params.put("ratePeriodMicros", limits.ratePeriod() == null ? null : limits.ratePeriod().toNanos() / 1_000);
        params.put("partitionRateLimit", limits.partitionRateLimit());
        params.put("partitionRatePeriodMicros", limits.partitionRatePeriod() == null ? null
                : limits.partitionRatePeriod().toNanos() / 1_000);
        return sessions.inTransaction("the limits of topic " + limits.topic() + " in namespace " + namespace, session -> {
            session.selectOne("operator.setActor", Map.of("actor", actor));
            return Boolean.TRUE.equals(session.selectOne("operator.setQueueLimits", params));
        });
    }

    /** Removes the topic's limits and wakes its subscribers. True when it had some. Recorded with the actor. */
    public boolean clearTopicLimits(String namespace, String topic, String actor) {
        return flowChange("clearQueueLimits", "clearing the limits of topic " + topic, namespace, topic, actor);
    }

    /** The limited topics of the namespace, by name. */
    public List<TopicLimitsLine> topicLimits(String namespace) {
        name("namespace", namespace);
        return rows("the topic limits of namespace " + namespace, "operator.listQueueLimits", params("namespace", namespace))
                .stream()
                .map(r -> new TopicLimitsLine(text(r, "queue"), integer(r, "max_running"), text(r, "partition_kind"),
                        text(r, "partition_header"),
                        integer(r, "max_running_per_partition"), integer(r, "rate_limit"), micros(r, "rate_period_micros"),
                        integer(r, "partition_rate_limit"), micros(r, "partition_rate_period_micros"),
                        instant(r, "set_at"), text(r, "set_by")))
                .toList();
    }

    /** The rules of FlowControl.setLimits (docs/flow-control.md), checked before anything is sent. */
    private static void checkLimits(TopicLimitsLine line) {
        boolean perPartition = line.maxRunningPerPartition() != null || line.partitionRateLimit() != null;
        if (line.maxRunning() == null && !perPartition && line.rateLimit() == null) {
            throw new InvalidInputException("limits", "none", "at least one of maxRunning, maxRunningPerPartition, "
                    + "rateLimit, partitionRateLimit");
        }
        limit("maxRunning", line.maxRunning(), dev.queue.api.TopicLimits.MAX_RUNNING);
        limit("maxRunningPerPartition", line.maxRunningPerPartition(), dev.queue.api.TopicLimits.MAX_RUNNING);
        rate("rateLimit", line.rateLimit(), "ratePeriod", line.ratePeriod());
        rate("partitionRateLimit", line.partitionRateLimit(), "partitionRatePeriod", line.partitionRatePeriod());
        String kind = line.partitionKind();
        if (kind != null && !kind.equals("header") && !kind.equals("ordering_key")) {
            throw new InvalidInputException("partitionKind", kind, "header or ordering_key");
        }
        if (perPartition) {
            if ("ordering_key".equals(kind)) {
                if (line.partitionHeader() != null) {
                    throw new InvalidInputException("partitionHeader", line.partitionHeader(),
                            "no header with the ordering-key partition");
                }
            } else {
                name("partitionHeader", line.partitionHeader());
            }
        } else if (line.partitionHeader() != null) {
            throw new InvalidInputException("partitionHeader", line.partitionHeader(),
                    "no header without maxRunningPerPartition or partitionRateLimit");
        } else if (kind != null) {
            throw new InvalidInputException("partitionKind", kind,
                    "no partition without maxRunningPerPartition or partitionRateLimit");
        }
    }

    private static void limit(String argument, Integer value, int max) {
        if (value != null && (value < 1 || value > max)) {
            throw new InvalidInputException(argument, value, "1 to " + max);
        }
    }

    private static void rate(String argument, Integer starts, String periodArgument, Duration period) {
        if (starts == null) {
            if (period != null) {
                throw new InvalidInputException(periodArgument, period, "no period without " + argument);
            }
            return;
        }
        limit(argument, starts, dev.queue.api.TopicLimits.MAX_STARTS);
        if (period == null || period.compareTo(dev.queue.api.TopicLimits.MIN_PERIOD) < 0
                || period.compareTo(dev.queue.api.TopicLimits.MAX_PERIOD) > 0 || period.getNano() % 1_000 != 0) {
            throw new InvalidInputException(periodArgument, period, "1 ms to 1 day, in whole microseconds");
        }
    }

    private static Duration micros(Map<String, Object> row, String column) {
        Object value = row.get(column);
        return value == null ? null : Duration.ofNanos(((Number) value).longValue() * 1_000);
    }

    /** Lets claims of the topic go on and wakes its subscribers. True when it was paused. Recorded with the actor. */
    public boolean resumeTopic(String namespace, String topic, String actor) {
        return flowChange("resumeQueue", "the resume of topic " + topic, namespace, topic, actor);
    }

    /**
     * Sets what the later messages of an ordering key of the topic do behind a dead letter of their key:
     * {@code wait} (the default) or {@code continue} (docs/flow-control.md). True when it changed. Recorded in the
     * audit log with the actor.
     */
    public boolean setTopicOrdering(String namespace, String topic, String behindDeadLetter, String actor) {
        name("namespace", namespace);
        name("topic", topic);
        if (!"wait".equals(behindDeadLetter) && !"continue".equals(behindDeadLetter)) {
            throw new InvalidInputException("behindDeadLetter", behindDeadLetter, "wait or continue");
        }
        checkActor(actor);
        return sessions.inTransaction("the ordering choice of topic " + topic + " in namespace " + namespace, session -> {
            session.selectOne("operator.setActor", Map.of("actor", actor));
            return Boolean.TRUE.equals(session.selectOne("operator.setQueueOrdering",
                    params("namespace", namespace, "topic", topic, "choice", behindDeadLetter)));
        });
    }

    /** The topic's choice behind a dead letter: {@code wait} or {@code continue}. */
    public String topicOrdering(String namespace, String topic) {
        name("namespace", namespace);
        name("topic", topic);
        return sessions.autoCommit("the ordering choice of topic " + topic + " in namespace " + namespace,
                session -> session.<String>selectOne("operator.queueOrdering", params("namespace", namespace, "topic", topic)));
    }

    private boolean flowChange(String statement, String operation, String namespace, String topic, String actor) {
        name("namespace", namespace);
        name("topic", topic);
        checkActor(actor);
        return sessions.inTransaction(operation + " in namespace " + namespace, session -> {
            session.selectOne("operator.setActor", Map.of("actor", actor));
            return Boolean.TRUE.equals(session.selectOne("operator." + statement, params("namespace", namespace, "topic", topic)));
        });
    }

    /**
     * Cancels a pending or running message: it leaves the queue without running (again), and its holder's later
     * acknowledgement finds its lease gone. True when one was cancelled; false for a dead, completed or unknown id.
     */
    public boolean cancel(String namespace, long id, String actor) {
        name("namespace", namespace);
        positive("id", id);
        checkActor(actor);
        return sessions.inTransaction("the cancel of message " + id + " in namespace " + namespace, session -> {
            session.selectOne("operator.setActor", Map.of("actor", actor));
            return Boolean.TRUE.equals(session.selectOne("operator.cancel", params("namespace", namespace, "id", id)));
        });
    }

    public List<ScheduleInfo> schedules(String namespace) {
        name("namespace", namespace);
        return rows("the schedules of namespace " + namespace, "operator.listSchedules", params("namespace", namespace)).stream()
                .map(r -> new ScheduleInfo(text(r, "name"), text(r, "queue"), text(r, "cron_expression"), text(r, "every_interval"),
                        text(r, "timezone"), Boolean.TRUE.equals(r.get("paused")), instant(r, "next_run_at"), instant(r, "last_run_at")))
                .toList();
    }

    /** True when it was running; {@link ScheduleNotFoundException} for an unknown name. */
    public boolean pauseSchedule(String namespace, String name, String actor) {
        return scheduleChange("pauseSchedule", namespace, name, actor);
    }

    /** True when it was paused; {@link ScheduleNotFoundException} for an unknown name. */
    public boolean resumeSchedule(String namespace, String name, String actor) {
        return scheduleChange("resumeSchedule", namespace, name, actor);
    }

    /** Fires the schedule once now; the message id, or null when a live message holds this firing's key. */
    public Long runScheduleNow(String namespace, String name, String actor) {
        name("namespace", namespace);
        name("name", name);
        checkActor(actor);
        return scheduleCall(namespace, name, session -> {
            session.selectOne("operator.setActor", Map.of("actor", actor));
            return session.<Long>selectOne("operator.runScheduleNow", params("namespace", namespace, "name", name));
        });
    }

    private boolean scheduleChange(String statement, String namespace, String name, String actor) {
        name("namespace", namespace);
        name("name", name);
        checkActor(actor);
        return scheduleCall(namespace, name, session -> {
            session.selectOne("operator.setActor", Map.of("actor", actor));
            return Boolean.TRUE.equals(session.selectOne("operator." + statement, params("namespace", namespace, "name", name)));
        });
    }

    private <T> T scheduleCall(String namespace, String name, java.util.function.Function<SqlSession, T> work) {
        try {
            return sessions.inTransaction("a change of schedule " + name + " in namespace " + namespace, work);
        } catch (RuntimeException e) {
            SQLException sql = PostgresErrors.findSqlException(e);
            if (sql != null && "QU003".equals(sql.getSQLState())) {
                throw new ScheduleNotFoundException(namespace, name);
            }
            throw e;
        }
    }

    // ------------------------------------------------------------------ checks and conversions

    private static void checkSelection(String namespace, String topic, List<Long> ids) {
        name("namespace", namespace);
        optionalName("topic", topic);
        if (topic != null && ids != null) {
            throw new InvalidInputException("ids", ids, "either ids or a topic, not both");
        }
        if (ids != null) {
            if (ids.isEmpty()) {
                throw new InvalidInputException("ids", ids, "at least one message id");
            }
            for (Long id : ids) {
                if (id == null || id < 1) {
                    throw new InvalidInputException("ids", ids, "message ids, each 1 or more");
                }
            }
        }
    }

    private static void checkLimit(int limit) {
        if (limit < 1 || limit > 1000) {
            throw new InvalidInputException("limit", limit, "1 to 1000");
        }
    }

    private static void text(String argument, String value, int maxLength) {
        if (value == null || value.isEmpty() || value.length() > maxLength || value.chars().anyMatch(Character::isISOControl)) {
            throw new InvalidInputException(argument, value, "1 to " + maxLength + " characters without control characters");
        }
    }

    private static void checkBatch(int batchSize) {
        if (batchSize < 1 || batchSize > MAX_BATCH) {
            throw new InvalidInputException("batchSize", batchSize, "1 to " + MAX_BATCH);
        }
    }

    private static void checkActor(String actor) {
        if (actor == null || actor.isEmpty() || actor.length() > 128 || actor.chars().anyMatch(Character::isISOControl)) {
            throw new InvalidInputException("actor", actor, "1 to 128 characters without control characters");
        }
    }

    private static void name(String argument, String value) {
        if (value == null || !NAME.matcher(value).matches()) {
            throw new InvalidInputException(argument, value, NAME_RULE);
        }
    }

    private static void optionalName(String argument, String value) {
        if (value != null) {
            name(argument, value);
        }
    }

    private static void positive(String argument, long value) {
        if (value < 1) {
            throw new InvalidInputException(argument, value, "a message id, 1 or more");
        }
    }

    /** Ids in chunks the SQL functions take at once; a list of one null chunk when selecting by topic. */
    private static List<List<Long>> chunks(List<Long> ids) {
        List<List<Long>> chunks = new ArrayList<>();
        if (ids == null) {
            chunks.add(null);
            return chunks;
        }
        for (int from = 0; from < ids.size(); from += MAX_BATCH) {
            chunks.add(ids.subList(from, Math.min(ids.size(), from + MAX_BATCH)));
        }
        return chunks;
    }

    private List<Map<String, Object>> rows(String operation, String statement, Map<String, Object> params) {
        return sessions.autoCommit(operation, session -> session.selectList(statement, params));
    }

    private static Map<String, Object> params(Object... pairs) {
        Map<String, Object> map = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            map.put((String) pairs[i], pairs[i + 1]);
        }
        return map;
    }

    private static String text(Map<String, Object> row, String column) {
        Object value = row.get(column);
        return value == null ? null : value.toString();
    }

    private static Number number(Map<String, Object> row, String column) {
        return (Number) row.get(column);
    }

    private static Integer integer(Map<String, Object> row, String column) {
        Number value = number(row, column);
        return value == null ? null : value.intValue();
    }

    private static List<String> words(Map<String, Object> row, String column) {
        String value = text(row, column);
        return value == null || value.isEmpty() ? List.of() : Arrays.asList(value.split(" "));
    }

    private static Instant instant(Map<String, Object> row, String column) {
        Object value = row.get(column);
        if (value == null) {
            return null;
        }
        if (value instanceof Timestamp timestamp) {
            return timestamp.toInstant();
        }
        if (value instanceof OffsetDateTime time) {
            return time.toInstant();
        }
        throw new IllegalStateException("column " + column + " is not a timestamp: " + value.getClass().getName());
    }
}
