package dev.queue.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.queue.api.Backoff;
import dev.queue.api.Delivery;
import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.MessageState;
import dev.queue.api.NamespaceAccessDeniedException;
import dev.queue.api.Page;
import dev.queue.api.Pull;
import dev.queue.api.Schedule;
import dev.queue.api.StoreNotReadyException;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A {@link PostgresQueue} over a pool that logs in as a tenant's role, granted only {@code acme}, with the
 * migrations on an owner's DataSource: it runs acme's work end to end (publish, subscribe, retry, dead letters,
 * redrive, schedules, the worker registry), is refused {@code globex} by name, and leaves globex's rows as a trusted
 * queue wrote them. Also the app role's pool, which serves every namespace through the same gates.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresTenantPoolTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private final DataSource admin = PostgresTestServer.dataSource();
    private String schema;
    private TenantRoles roles;
    private String acmeRole;
    private HikariDataSource acmePool;
    private PostgresQueue trusted;
    private MessageId globexPending;
    private MessageId globexDead;
    private Map<String, String> globexRows;

    @BeforeAll
    void setUp() throws SQLException {
        schema = PostgresTestServer.freshSchema("tenantpool");
        trusted = PostgresQueue.create(admin, config().actor("fleet"));
        roles = new TenantRoles(schema);
        acmeRole = roles.tenant("acme", "acme");
        acmePool = roles.pool(acmeRole, 6);

        var globex = trusted.namespace("globex");
        globexPending = globex.publish("email", "{\"secret\":1}");
        globexDead = globex.publish(Message.to("email").json("{\"secret\":2}").maxAttempts(1)).id();
        Delivery doomed = globex.pullOne(Pull.from("email").worker("globex-worker")).orElseThrow();
        assertThat(doomed.id()).isEqualTo(globexPending);
        globex.nack(doomed, "later", Duration.ofHours(1));
        globex.fail(globex.pullOne(Pull.from("email").worker("globex-worker")).orElseThrow(), "gave up");
        globex.schedules().create(Schedule.every("nightly", Duration.ofHours(24)).publishing(Message.to("email").json("{}")));
        globexRows = globexRows();
        assertThat(globexRows.get("dead_letters")).startsWith("1:");
    }

    @AfterAll
    void tearDown() {
        if (trusted != null) {
            trusted.close();
        }
        if (roles != null) {
            roles.close();
        }
    }

    /**
     * Globex's rows as the superuser sees them, but for the per-minute rate tables: the trusted queue's own flushes
     * write those on their own schedule, whatever a tenant does.
     */
    private Map<String, String> globexRows() throws SQLException {
        Map<String, String> rows = new LinkedHashMap<>(roles.rowsOf("globex"));
        rows.keySet().removeAll(Set.of("topic_published", "topic_completed"));
        return rows;
    }

    private PostgresQueueConfig config() {
        return PostgresQueueConfig.defaults().schema(schema).listen(false);
    }

    private PostgresQueue acmeQueue(boolean listen) {
        return PostgresQueue.create(acmePool, acmePool, admin, config().listen(listen).actor("acme-service"));
    }

    @Test
    void aTenantsPoolRunsItsNamespaceEndToEnd() throws SQLException {
        Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
        Set<String> handled = ConcurrentHashMap.newKeySet();
        try (PostgresQueue queue = acmeQueue(true)) {
            assertThat(queue.listenerState()).isNotEqualTo(ListenerState.OFF);
            var acme = queue.namespace("acme");
            Subscription subscription = acme.subscribe(Subscriber.on("ok", "flaky", "doomed")
                    .retry(Backoff.fixed(Duration.ofMillis(20)))
                    .handleDelivery((delivery, context) -> {
                        int attempt = attempts.computeIfAbsent(delivery.topic(), t -> new AtomicInteger()).incrementAndGet();
                        if (delivery.topic().equals("doomed") || (delivery.topic().equals("flaky") && attempt == 1)) {
                            throw new IllegalStateException(delivery.topic() + " failed attempt " + attempt);
                        }
                        handled.add(delivery.topic());
                    }));
            MessageId ok = acme.publish("ok", "{\"n\":1}");
            acme.publish("ok", "{\"n\":2}");   // a registered topic: the one-message fast path
            acme.publishAll(List.of(Message.to("ok").json("{\"n\":3}"), Message.to("ok").json("{\"n\":4}")));
            MessageId flaky = acme.publish("flaky", "{}");
            MessageId doomed = acme.publish(Message.to("doomed").json("{}").maxAttempts(2)).id();

            await().atMost(WAIT).until(() -> handled.containsAll(Set.of("ok", "flaky"))
                    && acme.deadLetters().get(doomed).isPresent());
            subscription.close();
            assertThat(attempts.get("flaky")).hasValue(2);
            assertThat(acme.inspect(ok)).isEmpty();
            assertThat(acme.inspect(flaky)).isEmpty();
            var dead = acme.inspect(doomed).orElseThrow();
            assertThat(dead.state()).isEqualTo(MessageState.DEAD);
            assertThat(dead.attemptHistory()).extracting(a -> a.attempt()).containsExactly(1, 2);
            assertThat(dead.attemptHistory()).allSatisfy(a -> assertThat(a.error()).contains("doomed failed attempt"));
            assertThat(acme.deadLetters().list(Page.first(10))).extracting(d -> d.id()).containsExactly(doomed);
            assertThat(acme.stats().dead()).isEqualTo(1);

            assertThat(acme.deadLetters().redrive(doomed)).isTrue();
            var redriven = acme.inspect(doomed).orElseThrow();
            assertThat(redriven.state()).isEqualTo(MessageState.PENDING);
            assertThat(redriven.attempts()).isZero();
            assertThat(strings("SELECT actor || ' ' || login || ' ' || action FROM \"" + schema
                    + "\".audit_log WHERE namespace = 'acme' AND action = 'redrive_dead_letters'"))
                    .containsExactly("acme-service " + acmeRole + " redrive_dead_letters");

            acme.schedules().create(Schedule.every("hourly", Duration.ofHours(1)).publishing(Message.to("ok").json("{}")));
            acme.schedules().pause("hourly");
            assertThat(acme.schedules().list()).extracting(s -> s.name()).containsExactly("hourly");
            assertThat(acme.schedules().delete("hourly")).isTrue();
            assertThat(strings("SELECT actor || ' ' || action FROM \"" + schema
                    + "\".audit_log WHERE namespace = 'acme' AND subject = 'hourly' ORDER BY id"))
                    .containsExactly("acme-service schedule_created", "acme-service schedule_paused",
                            "acme-service schedule_deleted");
        }
        assertThat(globexRows()).isEqualTo(globexRows);
    }

    @Test
    void aTenantsPoolIsRefusedAnotherNamespaceByName() throws SQLException {
        try (PostgresQueue queue = acmeQueue(false)) {
            var globex = queue.namespace("globex");
            Map<String, ThrowingCallable> attempts = new LinkedHashMap<>();
            attempts.put("publish", () -> globex.publish("email", "{}"));
            attempts.put("publish a batch", () -> globex.publishAll(List.of(Message.to("email").json("{}"),
                    Message.to("email").json("{}"))));
            attempts.put("inspect", () -> globex.inspect(globexPending));
            attempts.put("dead letters", () -> globex.deadLetters().list(Page.first(10)));
            attempts.put("dead letter", () -> globex.deadLetters().get(globexDead));
            attempts.put("redrive", () -> globex.deadLetters().redrive(globexDead));
            attempts.put("redrive all", () -> globex.deadLetters().redriveAll("email"));
            attempts.put("purge", () -> globex.deadLetters().purge(globexDead));
            attempts.put("purge all", () -> globex.deadLetters().purgeAll());
            attempts.put("pull", () -> globex.pullOne(Pull.from("email").worker("thief")));
            attempts.put("stats", globex::stats);
            attempts.put("schedules", () -> globex.schedules().list());
            attempts.put("schedule", () -> globex.schedules().pause("nightly"));
            attempts.put("tick", () -> globex.schedules().tick());
            List<String> notRefused = new ArrayList<>();
            attempts.forEach((what, attempt) -> {
                try {
                    attempt.call();
                    notRefused.add(what + ": no error");
                } catch (NamespaceAccessDeniedException e) {
                    if (!"globex".equals(e.namespace()) || !e.getMessage().contains("\"globex\"")) {
                        notRefused.add(what + ": " + e.namespace() + " " + e.getMessage());
                    }
                } catch (Throwable e) {
                    notRefused.add(what + ": " + e);
                }
            });
            assertThat(notRefused).isEmpty();
            // what takes no namespace (rescue, the schedules due) sees acme's rows only
            assertThat(queue.namespace("acme").stats().pending()).isGreaterThanOrEqualTo(0);
        }
        assertThat(globexRows()).isEqualTo(globexRows);
    }

    @Test
    void aTenantsWorkerRowIsItsOwn() throws SQLException {
        strings("SELECT \"" + schema + "\".worker_heartbeat('fleet-process', 'fleet-host', 1, now(), "
                + "p_subscriptions := '[{\"namespace\": \"globex\", \"topics\": [\"email\"]}]')");
        try (PostgresQueue queue = acmeQueue(false)) {
            Subscription subscription = queue.namespace("acme").subscribe(Subscriber.on("beat").handleDelivery((d, c) -> { }));
            await().atMost(WAIT).until(() -> !strings("SELECT login FROM \"" + schema + "\".workers WHERE login = ?",
                    acmeRole).isEmpty());
            try (Connection connection = roles.dataSource(acmeRole).getConnection()) {
                assertThatThrownBy(() -> call(connection, "SELECT \"" + schema + "\".worker_heartbeat('forged', 'h', 1, now(), "
                        + "p_subscriptions := '[{\"namespace\": \"globex\", \"topics\": [\"email\"]}]')"))
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining("\"globex\"");
                assertThat(strings("SELECT id FROM \"" + schema + "\".workers WHERE login <> ?", acmeRole)).isNotEmpty()
                        .allSatisfy(id -> assertThat(call(connection, "SELECT \"" + schema + "\".worker_stop('" + id + "')"))
                                .isEqualTo("f"));
                assertThat(call(connection, "SELECT count(*) FROM \"" + schema + "\".workers()")).isEqualTo("1");
            }
            subscription.close();
        }
    }

    @Test
    void anAppRolesPoolServesEveryNamespaceThroughTheGates() throws SQLException {
        String appRole = roles.app("fleet");
        HikariDataSource appPool = roles.pool(appRole, 4);
        try (PostgresQueue queue = PostgresQueue.create(appPool, appPool, admin, config())) {
            for (String namespace : List.of("acme", "initech")) {
                MessageId id = queue.namespace(namespace).publish("app", "{}");
                Delivery delivery = queue.namespace(namespace).pullOne(Pull.from("app").worker("w")).orElseThrow();
                assertThat(delivery.id()).isEqualTo(id);
                queue.namespace(namespace).ack(delivery);
            }
            assertThat(queue.namespace("globex").inspect(globexPending)).isPresent();
        }
        // without an admin DataSource too: the app role is trusted with the policies, the schema is migrated
        try (PostgresQueue queue = PostgresQueue.create(appPool, config().migrateOnStart(false))) {
            assertThat(queue.namespace("globex").stats().dead()).isEqualTo(1);
        }
        assertThat(globexRows()).isEqualTo(globexRows);
    }

    @Test
    void aTenantsPoolWithoutAnAdminDataSourceNeedsAMigratedSchema() {
        assertThatThrownBy(() -> PostgresQueue.create(acmePool, config()))
                .isInstanceOf(StoreNotReadyException.class)
                .hasMessageContaining("may not migrate schema \"" + schema + "\"")
                .hasMessageContaining("adminDataSource");
        try (PostgresQueue queue = PostgresQueue.create(acmePool, config().migrateOnStart(false))) {
            MessageId id = queue.namespace("acme").publish("no-admin", "{}");
            assertThat(queue.namespace("acme").inspect(id)).isPresent();
            assertThatThrownBy(() -> queue.namespace("globex").inspect(globexPending))
                    .isInstanceOfSatisfying(NamespaceAccessDeniedException.class,
                            e -> assertThat(e.namespace()).isEqualTo("globex"));
        }
        assertThatThrownBy(() -> PostgresQueue.create(acmePool, acmePool, null, config()))
                .isInstanceOf(dev.queue.api.InvalidInputException.class).hasMessageContaining("adminDataSource");
    }

    private static String call(Connection connection, String sql) {
        try (PreparedStatement statement = connection.prepareStatement(sql); ResultSet rs = statement.executeQuery()) {
            rs.next();
            return rs.getString(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    private static List<String> strings(String sql, Object... params) throws SQLException {
        try (Connection connection = PostgresTestServer.dataSource().getConnection();
             PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                statement.setObject(i + 1, params[i]);
            }
            List<String> values = new ArrayList<>();
            try (ResultSet result = statement.executeQuery()) {
                while (result.next()) {
                    values.add(result.getString(1));
                }
            }
            return values;
        }
    }
}
