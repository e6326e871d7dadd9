package dev.queue.postgres;

import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.PublishResult;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Claims while an open transaction holds back vacuum: eight subscriptions over two replicas resume each claim where
 * their last one left off, and none of 50,000 messages is lost, handled twice or held by two handlers. Messages
 * that become visible behind the claimers' positions (a transactional publish that commits after the claimers
 * passed its place) are found by the next claim from the head, within a sweep interval or so.
 */
class PinnedHorizonClaimTest {

    private static final int MESSAGES = 50_000;
    private static final int LATE_COMMITS = 10;
    private static final Duration SWEEP = Duration.ofMillis(500);

    @Test
    void claimersResumingAfterTheirPositionsLoseNothingAndFindLateCommitsBehindThem() throws Exception {
        String schema = PostgresTestServer.freshSchema("pinned");
        PostgresQueueConfig config = PostgresQueueConfig.defaults().schema(schema).poolSize(8)
                .queueOptions(QueueOptions.defaults().sweepInterval(SWEEP));
        HandledOnce seen = new HandledOnce();

        try (Connection horizon = DriverManager.getConnection(PostgresTestServer.jdbcUrl());
             PostgresQueue first = PostgresQueue.connect(PostgresTestServer.jdbcUrl(), null, null, config);
             PostgresQueue second = PostgresQueue.connect(PostgresTestServer.jdbcUrl(), null, null, config)) {
            horizon.setAutoCommit(false);
            try (Statement pin = horizon.createStatement()) {
                pin.execute("SELECT txid_current()");
            }
            List<Subscription> subscriptions = new ArrayList<>();
            for (PostgresQueue replica : List.of(first, second)) {
                for (int s = 0; s < 4; s++) {
                    String name = (replica == first ? "replica-1-" : "replica-2-") + s;
                    subscriptions.add(replica.defaultNamespace().subscribe(Subscriber.on("work").concurrency(4)
                            .lease(Duration.ofMinutes(5)).worker(name)
                            .handleDelivery((delivery, ctx) -> seen.record(delivery, name))));
                }
            }

            List<MessageId> published = new ArrayList<>(MESSAGES + LATE_COMMITS);
            Map<MessageId, Long> committedAtNanos = new ConcurrentHashMap<>();
            int lateEvery = MESSAGES / LATE_COMMITS;
            for (int start = 0; start < MESSAGES; start += 1000) {
                Connection late = null;
                MessageId lateId = null;
                if (start % lateEvery == lateEvery / 2) {
                    // takes its id and due time now, becomes visible only after the claimers moved past both (not
                    // in the first batch: a transaction that registers the topic would hold up every other publish)
                    late = DriverManager.getConnection(PostgresTestServer.jdbcUrl());
                    late.setAutoCommit(false);
                    lateId = first.namespace(PostgresQueue.DEFAULT_NAMESPACE)
                            .publish(late, Message.to("work").json("{\"late\":" + start + "}")).id();
                    published.add(lateId);
                }
                List<Message> batch = new ArrayList<>(1000);
                for (int i = start; i < start + 1000; i++) {
                    batch.add(Message.to("work").json("{\"i\":" + i + "}"));
                }
                for (PublishResult result : ((start / 1000) % 2 == 0 ? first : second).defaultNamespace().publishAll(batch)) {
                    published.add(result.id());
                }
                if (late != null) {
                    int before = seen.total.get();
                    await().atMost(Duration.ofMinutes(1)).until(() -> seen.total.get() >= before + 500);
                    late.commit();
                    committedAtNanos.put(lateId, System.nanoTime());
                    late.close();
                }
            }

            await().atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofMillis(100))
                    .until(() -> seen.total.get() >= published.size() || !seen.violations.isEmpty());
            subscriptions.forEach(Subscription::close);

            assertThat(horizonStillPinned(horizon)).as("the open transaction kept its snapshot throughout").isTrue();
            assertThat(seen.violations).isEmpty();
            assertThat(seen.handled.keySet()).containsExactlyInAnyOrderElementsOf(published);
            assertThat(seen.handled.values()).allSatisfy(count -> assertThat(count).hasValue(1));
            for (Map.Entry<MessageId, Long> late : committedAtNanos.entrySet()) {
                Duration waited = Duration.ofNanos(seen.firstHandledNanos.get(late.getKey()) - late.getValue());
                assertThat(waited).as("message %s committed behind the claimers' positions", late.getKey())
                        .isLessThan(SWEEP.multipliedBy(6));
            }
            horizon.rollback();
        } finally {
            PostgresTestServer.dropSchema(schema);
        }
    }

    private static boolean horizonStillPinned(Connection horizon) throws Exception {
        try (Statement statement = horizon.createStatement();
             ResultSet row = statement.executeQuery("SELECT backend_xid IS NOT NULL FROM pg_stat_activity WHERE pid = pg_backend_pid()")) {
            return row.next() && row.getBoolean(1);
        }
    }
}
