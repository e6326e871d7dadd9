package dev.queue.postgres;

import dev.queue.domain.port.NewMessage;
import dev.queue.domain.port.PublishCommand;
import dev.queue.domain.port.WakeUps;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.queue.domain.port.CommandTime.storeClock;
import static dev.queue.postgres.StoreFixture.NS;
import static dev.queue.postgres.StoreFixture.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** LISTEN/NOTIFY wake-ups on a real server: routing, transactions, lost connections and proxies. */
class PostgresWakeUpsTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private StoreFixture db;
    private PostgresWakeUps wakeUps;

    @BeforeEach
    void start() {
        db = new StoreFixture("wake", CompletedRetention.DELETE);
        wakeUps = newWakeUps(db.store::notifyChannel, PostgresWakeUps.DEFAULT_PROBE_TIMEOUT);
        wakeUps.start();
    }

    @AfterEach
    void stop() {
        wakeUps.close();
        db.close();
    }

    private PostgresWakeUps newWakeUps(java.util.function.Consumer<String> probeSender, Duration probeTimeout) {
        return new PostgresWakeUps(db.schema, db.dataSource()::getConnection, db.sessions, probeSender,
                probeTimeout, Duration.ofMillis(50));
    }

    private AtomicInteger counter(WakeUps source, String namespace, String... topics) {
        AtomicInteger count = new AtomicInteger();
        source.listen(namespace, List.of(topics), count::incrementAndGet);
        return count;
    }

    @Test
    void aPublishWakesTheListenersOfItsNamespaceAndTopicOnly() {
        assertThat(wakeUps.isListening()).isTrue();
        AtomicInteger a = counter(wakeUps, NS, "a");
        AtomicInteger aOrB = counter(wakeUps, NS, "a", "b");
        AtomicInteger b = counter(wakeUps, NS, "b");
        AtomicInteger elsewhere = counter(wakeUps, "other", "a");

        db.publish(message("a"), storeClock());
        await().atMost(WAIT).until(() -> a.get() == 1 && aOrB.get() == 1);
        db.publish(message("b"), storeClock());
        await().atMost(WAIT).until(() -> b.get() == 1 && aOrB.get() == 2);

        // notifications arrive in commit order, so the one for "other/a" would have come before "ns/b"
        assertThat(elsewhere).hasValue(0);
        assertThat(a).hasValue(1);
    }

    @Test
    void aPromotionNoticeReachesThePromotionListenersOfItsTopicWithItsPlaceAndForgedOnesAreIgnored() throws Exception {
        List<String> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
        wakeUps.listenForPromotions(NS, List.of("a", "b"), (topic, position) -> heard.add(topic + " " + position));
        List<String> elsewhere = new java.util.concurrent.CopyOnWriteArrayList<>();
        wakeUps.listenForPromotions("other", List.of("a"), (topic, position) -> elsewhere.add(topic));
        WakeUps.Registration closed = wakeUps.listenForPromotions(NS, List.of("a"), (topic, position) -> elsewhere.add(topic));
        closed.close();

        try (Connection sender = db.dataSource().getConnection(); Statement statement = sender.createStatement()) {
            for (String payload : List.of("promoted:" + NS + "/a/x/1/2", "promoted:" + NS + "/a/3", "promoted:/a/1/2/3",
                    "promoted:" + NS + "/b/4/1767225600000001/17", "promoted:" + NS + "/a/0/1767225600000000/5")) {
                statement.execute("SELECT pg_notify('" + db.schema + "_wakeup', '" + payload + "')");
            }
        }

        await().atMost(WAIT).until(() -> heard.size() >= 2);
        assertThat(heard).containsExactly(
                "b " + new dev.queue.domain.port.ClaimPosition(4, java.time.Instant.parse("2026-01-01T00:00:00.000001Z"), 17),
                "a " + new dev.queue.domain.port.ClaimPosition(0, java.time.Instant.parse("2026-01-01T00:00:00Z"), 5));
        assertThat(elsewhere).isEmpty();
    }

    @Test
    void aClosedRegistrationIsNotWokenAnyMore() {
        AtomicInteger kept = counter(wakeUps, NS, "a");
        AtomicInteger gone = new AtomicInteger();
        wakeUps.listen(NS, List.of("a"), gone::incrementAndGet).close();

        db.publish(message("a"), storeClock());

        await().atMost(WAIT).until(() -> kept.get() == 1);
        assertThat(gone).hasValue(0);
    }

    @Test
    void aTransactionNotifiesOncePerNamespaceAndTopicWhateverItPublishes() throws Exception {
        try (Connection listener = db.dataSource().getConnection()) {
            try (Statement statement = listener.createStatement()) {
                statement.execute("LISTEN \"" + db.schema + "_wakeup\"");
            }
            List<NewMessage> batch = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                batch.add(message(i % 2 == 0 ? "x" : "y"));
            }
            db.publishAll(batch, storeClock());
            db.publish(message("marker"), storeClock());

            List<String> payloads = new ArrayList<>();
            await().atMost(WAIT).until(() -> {
                PGNotification[] got = listener.unwrap(PGConnection.class).getNotifications(100);
                if (got != null) {
                    for (PGNotification notification : got) {
                        payloads.add(notification.getParameter());
                    }
                }
                return payloads.contains(NS + "/marker");
            });
            assertThat(payloads).containsExactlyInAnyOrder(NS + "/x", NS + "/y", NS + "/marker");
        }
    }

    @Test
    void aRolledBackPublishSendsNoWakeUp() throws Exception {
        AtomicInteger rolledBack = counter(wakeUps, NS, "rolled-back");
        AtomicInteger committed = counter(wakeUps, NS, "committed");

        try (Connection caller = db.pool.getConnection()) {
            caller.setAutoCommit(false);
            db.store.publishOn(caller, new PublishCommand(List.of(message("rolled-back")), storeClock()));
            caller.rollback();
            db.store.publishOn(caller, new PublishCommand(List.of(message("committed")), storeClock()));
            caller.commit();
        }

        await().atMost(WAIT).until(() -> committed.get() == 1);
        assertThat(rolledBack).hasValue(0);
        assertThat(db.query("SELECT topic FROM $s.messages")).containsExactly("committed");
    }

    @Test
    void afterItsBackendIsKilledTheListenerReconnectsSweepsAndDeliversAgain() {
        AtomicInteger woken = counter(wakeUps, NS, "t");
        int firstPid = wakeUps.backendPid();
        assertThat(firstPid).isPositive();

        PostgresTestServer.execute("SELECT pg_terminate_backend(" + firstPid + ")");

        // back with a new connection, and every listener was called once without any publish (the sweep)
        await().atMost(WAIT).until(() -> wakeUps.connectCount() == 2 && wakeUps.isListening());
        assertThat(wakeUps.backendPid()).isNotEqualTo(firstPid);
        await().atMost(WAIT).until(() -> woken.get() >= 1);

        int before = woken.get();
        db.publish(message("t"), storeClock());
        await().atMost(WAIT).until(() -> woken.get() > before);
    }

    @Test
    void whenListenDoesNotDeliverItSaysSoAndPollsTheListenersInstead() {
        // a probe that never arrives is what a transaction-pooling proxy looks like from here
        try (PostgresWakeUps proxied = newWakeUps(payload -> { }, Duration.ofMillis(200))) {
            proxied.start();
            AtomicInteger woken = counter(proxied, NS, "t");

            assertThat(proxied.isPolling()).isTrue();
            assertThat(proxied.isListening()).isFalse();
            await().atMost(WAIT).until(() -> woken.get() >= 3);
        }
    }

    @Test
    void theListenConnectionHasALiveBackendUntilClosed() {
        int pid = wakeUps.backendPid();
        assertThat(db.query("SELECT count(*) FROM pg_stat_activity WHERE pid = " + pid)).containsExactly(1L);

        wakeUps.close();

        assertThat(wakeUps.backendPid()).isZero();
        await().atMost(WAIT).until(() -> db.query("SELECT count(*) FROM pg_stat_activity WHERE pid = " + pid)
                .equals(List.of(0L)));
    }
}
