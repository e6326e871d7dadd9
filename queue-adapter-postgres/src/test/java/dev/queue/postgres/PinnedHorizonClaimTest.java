package dev.queue.postgres;

import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.PublishResult;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Claims while an open transaction holds back vacuum: eight subscriptions over two replicas resume each claim where
 * their last one left off, and none of 50,000 messages is lost, handled twice or held by two handlers. Messages
 * that become visible behind the claimers' positions (a transactional publish that commits after the claimers
 * passed its place, while they work through a later batch) are found by the fleet's look behind the positions,
 * within about a sweep interval.
 */
@Tag("slow")
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
            Connection late = null;
            MessageId lateId = null;
            MessageId passed = null;
            for (int start = 0; start < MESSAGES; start += 1000) {
                if (late == null && start % lateEvery == 2000) {
                    // takes its id and due time now, becomes visible only after the claimers moved past both (not
                    // in the first batch: a transaction that registers the topic would hold up every other publish)
                    late = DriverManager.getConnection(PostgresTestServer.jdbcUrl());
                    late.setAutoCommit(false);
                    lateId = first.namespace(PostgresQueue.DEFAULT_NAMESPACE)
                            .publish(late, Message.to("work").json("{\"late\":" + start + "}")).id();
                    published.add(lateId);
                    passed = null;
                }
                List<Message> batch = new ArrayList<>(1000);
                for (int i = start; i < start + 1000; i++) {
                    batch.add(Message.to("work").json("{\"i\":" + i + "}"));
                }
                for (PublishResult result : ((start / 1000) % 2 == 0 ? first : second).defaultNamespace().publishAll(batch)) {
                    published.add(result.id());
                }
                if (late != null && passed == null) {
                    // the claimers have passed its place once they handled the last message published after it
                    MessageId last = published.get(published.size() - 1);
                    await().atMost(Duration.ofMinutes(1)).until(() -> seen.handled.containsKey(last));
                    passed = last;
                } else if (late != null) {
                    // committed while the claimers work through the batch just published, resuming after positions
                    // ahead of it: only a look behind them finds it
                    late.commit();
                    committedAtNanos.put(lateId, System.nanoTime());
                    late.close();
                    late = null;
                }
            }
            if (late != null) {
                late.commit();
                committedAtNanos.put(lateId, System.nanoTime());
                late.close();
            }

            await().atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofMillis(100))
                    .until(() -> seen.total.get() >= published.size() || !seen.violations.isEmpty());
            subscriptions.forEach(Subscription::close);

            assertThat(horizonStillPinned(horizon)).as("the open transaction kept its snapshot throughout").isTrue();
            assertThat(seen.violations).isEmpty();
            assertThat(seen.handled.keySet()).containsExactlyInAnyOrderElementsOf(published);
            assertThat(seen.handled.values()).allSatisfy(count -> assertThat(count).hasValue(1));
            Map<MessageId, Long> waitedMillis = new TreeMap<>(Comparator.comparing(MessageId::toString));
            for (Map.Entry<MessageId, Long> committed : committedAtNanos.entrySet()) {
                waitedMillis.put(committed.getKey(),
                        Duration.ofNanos(seen.firstHandledNanos.get(committed.getKey()) - committed.getValue()).toMillis());
            }
            // one sweep interval, and the claim and hand-off to a handler on top, on a machine that runs other work
            assertThat(waitedMillis.values()).as("milliseconds from commit to handler of the messages committed behind "
                    + "the claimers' positions: %s", waitedMillis).hasSize(LATE_COMMITS)
                    .allSatisfy(ms -> assertThat(ms).isLessThan(SWEEP.multipliedBy(2).toMillis()));
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
