package dev.queue.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.queue.api.Backoff;
import dev.queue.api.Delivery;
import dev.queue.api.InvalidInputException;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.MessageState;
import dev.queue.api.Namespace;
import dev.queue.api.Outcome;
import dev.queue.api.PublishResult;
import dev.queue.api.Pull;
import dev.queue.api.QueueClosedException;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The queue as applications use it, on the database clock: publishing and completing inside the application's
 * own transactions, prompt delivery by wake-ups, delayed delivery, and the two ways of starting a queue.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresQueueTest {

    /** Long, so that anything delivered within a few seconds was delivered by a wake-up, not by a sweep. */
    private static final Duration LONG_SWEEP = Duration.ofSeconds(30);
    private static final Duration PROMPTLY = Duration.ofSeconds(5);

    private static final String DEFAULT = dev.queue.api.Queue.DEFAULT_NAMESPACE;

    /** The test's migrated schema, in a database of its own, dropped after the test with every session on it. */
    private MigratedSchema migrated;
    /** The application's pool, on the test's database. */
    private HikariDataSource pool;
    private PostgresQueue queue;

    @AfterEach
    void closeQueue() {
        if (queue != null) {
            queue.close();
            queue = null;
        }
        if (pool != null) {
            pool.close();
            pool = null;
        }
        if (migrated != null) {
            migrated.close();
            migrated = null;
        }
    }

    /** The config of the test's schema, migrated (with the application's pool on it) at the first call. */
    private PostgresQueueConfig config(Duration sweep) {
        if (migrated == null) {
            migrated = PostgresTestServer.migratedSchema("pq");
            pool = migrated.newPool("queue-test", 12);
        }
        return PostgresQueueConfig.defaults().schema(migrated.schema()).queueOptions(QueueOptions.defaults().sweepInterval(sweep));
    }

    private PostgresQueue start(Duration sweep) {
        PostgresQueueConfig config = config(sweep);
        queue = PostgresQueue.create(pool, migrated.dataSource(), config);
        return queue;
    }

    private String businessTable() {
        String table = "\"" + queue.config().schema() + "\".orders";
        execute("CREATE TABLE " + table + " (id bigint PRIMARY KEY, note text)");
        return table;
    }

    // ------------------------------------------------------------------ publish in the caller's transaction

    @Test
    void aMessagePublishedInTheCallersTransactionIsDeliveredPromptlyWhenItCommits() throws Exception {
        start(LONG_SWEEP);
        String orders = businessTable();
        Namespace ns = queue.defaultNamespace();
        Set<MessageId> handled = ConcurrentHashMap.newKeySet();
        try (Subscription subscription = ns.subscribe(Subscriber.on("order.paid").handleDelivery((d, ctx) -> handled.add(d.id())))) {
            assertThat(subscription.isRunning()).isTrue();
            try (Connection connection = pool.getConnection()) {
                connection.setAutoCommit(false);
                insert(connection, orders, 1);
                PublishResult result = queue.defaultNamespace().publish(connection, Message.to("order.paid").json("{\"order\":1}"));

                // not visible to anyone else before the commit
                assertThat(ns.inspect(result.id())).isEmpty();
                assertThat(ns.stats().pending()).isZero();

                connection.commit();
                await().atMost(PROMPTLY).until(() -> handled.contains(result.id()));
            }
        }
        assertThat(count(orders)).isEqualTo(1);
    }

    @Test
    void aMessagePublishedInARolledBackTransactionIsNeverStoredDeliveredNorAnnounced() throws Exception {
        start(LONG_SWEEP);
        Namespace ns = queue.defaultNamespace();
        Set<String> handled = ConcurrentHashMap.newKeySet();
        // A listener of the test's own on the queue's wake-up channel: what the rollback announced, if anything.
        Connection listening = pool.getConnection();
        listening.setAutoCommit(true);
        try (Statement listen = listening.createStatement()) {
            listen.execute("LISTEN \"" + queue.config().channel() + "\"");
        }
        try (Subscription subscription = ns.subscribe(Subscriber.on("rolled-back", "marker")
                .handleDelivery((d, ctx) -> handled.add(d.topic() + ":" + d.json())))) {
            assertThat(subscription.isRunning()).isTrue();
            MessageId rolledBack;
            try (Connection connection = pool.getConnection()) {
                connection.setAutoCommit(false);
                rolledBack = queue.defaultNamespace().publishAll(connection,
                        List.of(Message.to("rolled-back").json("{\"n\":1}"), Message.to("rolled-back").json("{\"n\":2}")))
                        .get(0).id();
                connection.rollback();
            }
            ns.publish(Message.to("marker").json("{}"));

            // the marker committed after the rollback: had the rollback sent anything, it would have come first
            await().atMost(PROMPTLY).until(() -> handled.contains("marker:{}"));
            assertThat(handled).containsExactly("marker:{}");
            List<String> announced = new ArrayList<>();
            await().atMost(PROMPTLY).until(() -> {
                PGNotification[] notifications = listening.unwrap(PGConnection.class).getNotifications(100);
                for (PGNotification notification : notifications == null ? new PGNotification[0] : notifications) {
                    announced.add(notification.getParameter());
                }
                return announced.contains(DEFAULT + "/marker");
            });
            assertThat(announced).doesNotContain(DEFAULT + "/rolled-back");
            assertThat(ns.inspect(rolledBack)).isEmpty();
            assertThat(ns.stats().topic("rolled-back").total()).isZero();
        } finally {
            listening.close();
        }
    }

    @Test
    void publishingOnTheCallersConnectionValidatesLikeAnyPublish() throws Exception {
        start(LONG_SWEEP);
        try (Connection connection = pool.getConnection()) {
            connection.setAutoCommit(false);
            assertThatThrownBy(() -> queue.defaultNamespace().publish(connection, Message.to("bad topic!")))
                    .isInstanceOf(InvalidInputException.class).hasMessageContaining("topic");
            assertThatThrownBy(() -> queue.defaultNamespace().publishAll(connection,
                    List.of(Message.to("ok"), Message.to("t").json("{oops"))))
                    .isInstanceOf(InvalidInputException.class);
            assertThatThrownBy(() -> queue.defaultNamespace().publish((Connection) null, Message.to("ok")))
                    .isInstanceOf(InvalidInputException.class).hasMessageContaining("connection");
            connection.commit();
        }
        assertThat(queue.defaultNamespace().stats().total()).isZero();
    }

    // ------------------------------------------------------------------ completion in the caller's transaction

    @Test
    void ackOnTheCallersConnectionCompletesOnlyWhenTheCallerCommits() throws Exception {
        start(LONG_SWEEP);
        Namespace ns = queue.defaultNamespace();
        MessageId id = ns.publish("t", Map.of("n", 1));
        Delivery delivery = ns.pullOne(Pull.from("t")).orElseThrow();

        try (Connection connection = pool.getConnection()) {
            connection.setAutoCommit(false);
            assertThat(queue.defaultNamespace().ack(connection, delivery)).isEqualTo(Outcome.ACKED);
            connection.rollback();
        }
        assertThat(ns.inspect(id).orElseThrow().state()).isEqualTo(MessageState.RUNNING);

        try (Connection connection = pool.getConnection()) {
            connection.setAutoCommit(false);
            assertThat(queue.defaultNamespace().ack(connection, delivery)).isEqualTo(Outcome.ACKED);
            connection.commit();
        }
        assertThat(ns.inspect(id)).isEmpty();
        assertThat(ns.stats().topic("t").completed()).isEqualTo(1);
        assertThat(ns.ack(delivery)).isEqualTo(Outcome.LEASE_LOST);
        try (Connection connection = pool.getConnection()) {
            assertThat(queue.defaultNamespace().ack(connection, delivery)).isEqualTo(Outcome.LEASE_LOST);
        }
    }

    @Test
    void aDeliveryOfAnotherNamespaceIsNotCompletedOnTheCallersConnection() throws Exception {
        start(LONG_SWEEP);
        PostgresNamespace billing = queue.namespace("billing");
        MessageId id = billing.publish("t", Map.of("n", 1));
        Delivery delivery = billing.pullOne(Pull.from("t")).orElseThrow();

        try (Connection connection = pool.getConnection()) {
            connection.setAutoCommit(false);
            assertThat(queue.defaultNamespace().ack(connection, delivery)).isEqualTo(Outcome.LEASE_LOST);
            connection.commit();
        }
        assertThat(billing.inspect(id).orElseThrow().state()).isEqualTo(MessageState.RUNNING);
        assertThat(queue.namespace("billing")).isSameAs(billing);
    }

    @Test
    void aHandlerCompletesItsMessageInsideItsOwnTransaction() {
        start(LONG_SWEEP);
        String orders = businessTable();
        Namespace ns = queue.defaultNamespace();
        AtomicInteger attempts = new AtomicInteger();
        List<Outcome> outcomes = new ArrayList<>();
        // a retry delay well above a claim round trip: with a very short one the domain runtime can miss the due
        // time between its empty claim and its nextDueAt call and sleep a whole sweep (reported upstream)
        Subscriber<Delivery> subscriber = Subscriber.on("order.ship").retry(Backoff.fixed(Duration.ofMillis(300)))
                .handleDelivery((delivery, ctx) -> {
                    int attempt = attempts.incrementAndGet();
                    try (Connection connection = pool.getConnection()) {
                        connection.setAutoCommit(false);
                        insert(connection, orders, 7);
                        outcomes.add(queue.defaultNamespace().ack(connection, ctx));
                        if (attempt == 1) {
                            // the business write and the completion roll back together: the message is retried
                            connection.rollback();
                            throw new IllegalStateException("first attempt fails after writing");
                        }
                        connection.commit();
                    }
                });
        MessageId id;
        try (Subscription subscription = ns.subscribe(subscriber)) {
            assertThat(subscription.isRunning()).isTrue();
            id = ns.publish(Message.to("order.ship").json("{\"order\":7}")).id();
            await().atMost(PROMPTLY).until(() -> ns.stats().topic("order.ship").completed() == 1);
        }
        assertThat(attempts).hasValue(2);
        assertThat(outcomes).containsExactly(Outcome.ACKED, Outcome.ACKED);
        assertThat(ns.inspect(id)).isEmpty();
        assertThat(count(orders)).isEqualTo(1);
        assertThat(ns.stats().topic("order.ship").total()).isEqualTo(1);
        assertThat(ns.deadLetters().list(dev.queue.api.Page.first(10))).isEmpty();
    }

    // ------------------------------------------------------------------ time on the database clock

    @Test
    void aDelayedMessageIsDeliveredWithinTheSweepIntervalOfItsDueTime() {
        Duration sweep = Duration.ofMillis(500);
        start(sweep);
        Namespace ns = queue.defaultNamespace();
        Map<MessageId, Instant> handledAt = new ConcurrentHashMap<>();
        try (Subscription subscription = ns.subscribe(Subscriber.on("later").handleDelivery((d, ctx) -> handledAt.put(d.id(), Instant.now())))) {
            assertThat(subscription.isRunning()).isTrue();
            MessageId id = ns.publish(Message.to("later").json("{}").delay(Duration.ofMillis(1500))).id();
            Instant due = ns.inspect(id).orElseThrow().runAt();

            await().atMost(Duration.ofSeconds(10)).until(() -> handledAt.containsKey(id));

            Instant handled = handledAt.get(id);
            assertThat(handled).isAfterOrEqualTo(due.minusMillis(50));
            assertThat(Duration.between(due, handled)).isLessThanOrEqualTo(sweep.plusMillis(250));
        }
    }

    // ------------------------------------------------------------------ starting and stopping

    @Test
    void connectOwnsItsPoolAndClosesEverythingWithTheQueue() {
        PostgresQueueConfig config = config(Duration.ofMillis(200)).poolSize(3);
        PostgresQueue connected = PostgresQueue.connect(migrated.jdbcUrl(), null, null, config);
        int listenerPid;
        PostgresNamespace billing = connected.namespace("billing");
        try {
            Namespace ns = billing;
            MessageId id = ns.publish("invoice", Map.of("amount", 12));
            Delivery delivery = ns.pullOne(Pull.from("invoice")).orElseThrow();
            assertThat(delivery.id()).isEqualTo(id);
            assertThat(delivery.payload(Map.class).get("amount")).isEqualTo(12);
            assertThat(ns.ack(delivery)).isEqualTo(Outcome.ACKED);
            // publishing and pulling never listen: the listening connection comes with the first subscription
            String listener = "queue " + config.schema() + " listener";
            assertThat(count("pg_stat_activity WHERE application_name = '" + listener + "'")).isZero();
            ns.subscribe(Subscriber.on("invoice").handleDelivery((d, ctx) -> { }));
            await().atMost(PROMPTLY).until(() -> count("pg_stat_activity WHERE application_name = '" + listener + "'") == 1);
            listenerPid = ((Number) StoreFixture.firstColumn(migrated.dataSource(),
                    "SELECT pid FROM pg_stat_activity WHERE application_name = '" + listener + "'").get(0)).intValue();
        } finally {
            connected.close();
        }
        assertThatThrownBy(() -> connected.namespace("billing")).isInstanceOf(QueueClosedException.class);
        try (Connection connection = pool.getConnection()) {
            assertThatThrownBy(() -> billing.ack(connection, (Delivery) null)).isInstanceOf(QueueClosedException.class);
            assertThatThrownBy(() -> billing.publish(connection, Message.to("invoice"))).isInstanceOf(QueueClosedException.class);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        await().atMost(PROMPTLY).until(() -> count("pg_stat_activity WHERE pid = " + listenerPid) == 0);
        assertThatThrownBy(() -> PostgresQueue.connect("jdbc:mysql://nope", null, null, PostgresQueueConfig.defaults()))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("jdbcUrl");
    }

    @Test
    void withoutListeningSubscribersStillFindWorkBySweeping() {
        PostgresQueueConfig config = config(Duration.ofMillis(100)).listen(false);
        queue = PostgresQueue.connect(migrated.jdbcUrl(), null, null, config);
        Namespace ns = queue.defaultNamespace();
        Set<MessageId> handled = ConcurrentHashMap.newKeySet();
        try (Subscription subscription = ns.subscribe(Subscriber.on("t").handleDelivery((d, ctx) -> handled.add(d.id())))) {
            assertThat(subscription.isRunning()).isTrue();
            MessageId id = ns.publish(Message.to("t").json("{}")).id();
            await().atMost(PROMPTLY).until(() -> handled.contains(id));
        }
        assertThat(count("pg_stat_activity WHERE application_name = 'queue " + config.schema() + " listener'"))
                .as("a listener session").isZero();
        assertThat(count("pg_stat_activity WHERE application_name = 'queue " + config.schema() + "'"))
                .as("the queue's own sessions, so the check above looks in the right place").isPositive();
    }

    @Test
    void archiveRetentionKeepsCompletedMessagesInTheArchiveTable() {
        PostgresQueueConfig config = config(Duration.ofMillis(100)).completedRetention(CompletedRetention.ARCHIVE);
        queue = PostgresQueue.create(pool, config);
        Namespace ns = queue.defaultNamespace();
        MessageId id = ns.publish(Message.to("t").json("{\"a\":1}")).id();
        ns.ack(ns.pullOne(Pull.from("t")).orElseThrow());

        assertThat(ns.inspect(id)).isEmpty();
        assertThat(count("\"" + queue.config().schema() + "\".completed_messages WHERE id = " + id.value())).isEqualTo(1);
        assertThat(ns.stats().completed()).isEqualTo(1);
    }

    // ------------------------------------------------------------------ helpers

    private static void insert(Connection connection, String table, long id) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement("INSERT INTO " + table + " (id) VALUES (?)")) {
            statement.setLong(1, id);
            statement.executeUpdate();
        }
    }

    private long count(String from) {
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement();
             ResultSet rs = statement.executeQuery("SELECT count(*) FROM " + from)) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private void execute(String sql) {
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
