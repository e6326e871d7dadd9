package dev.queue.postgres;

import dev.queue.api.Message;
import dev.queue.api.MessageId;
import dev.queue.api.Namespace;
import dev.queue.api.StoreUnavailableException;
import dev.queue.api.Subscriber;
import dev.queue.testkit.CapturedLog;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The pool {@link PostgresQueue#connect} makes: its sessions say whose they are in pg_stat_activity, and when the
 * server kills every one of them, busy or idle, the queue goes on working and the pool logs each dead connection
 * at most once.
 */
class PoolBackendKillTest {

    private static final Pattern CONNECTION = Pattern.compile("PgConnection@[0-9a-f]+");

    @Test
    void theSessionsNameTheQueueAndItsSchema() {
        String schema = PostgresTestServer.freshSchema("named");
        try (PostgresQueue queue = PostgresQueue.connect(PostgresTestServer.jdbcUrl(), null, null,
                PostgresQueueConfig.defaults().schema(schema).poolSize(2))) {
            // The listener connects for the first subscription.
            queue.defaultNamespace().subscribe(Subscriber.on("t").handleDelivery((delivery, context) -> { }));
            await().atMost(Duration.ofSeconds(10)).until(() -> backendsNamed("queue " + schema).size() == 2
                    && backendsNamed("queue " + schema + " listener").size() == 1);
        } finally {
            PostgresTestServer.dropSchema(schema);
        }
    }

    @Test
    void killingEveryPoolBackendLogsEachDeadConnectionAtMostOnce() throws Exception {
        String schema = PostgresTestServer.freshSchema("poolkill");
        String application = "queue " + schema;
        Map<MessageId, Boolean> handled = new ConcurrentHashMap<>();
        int publishFailures = 0;
        List<Object> killed;
        String logged;
        try (CapturedLog log = CapturedLog.start();
             PostgresQueue queue = PostgresQueue.connect(PostgresTestServer.jdbcUrl(), null, null,
                     PostgresQueueConfig.defaults().schema(schema).poolSize(4))) {
            Namespace ns = queue.defaultNamespace();
            ns.subscribe(Subscriber.on("t").concurrency(2).handleDelivery((delivery, context) -> handled.put(delivery.id(), true)));
            List<MessageId> before = publish(ns, 20);
            await().atMost(Duration.ofSeconds(10)).until(() -> handled.keySet().containsAll(before));
            await().atMost(Duration.ofSeconds(10)).until(() -> backendsNamed(application).size() == 4);

            // Some are busy with the subscription's claims and extensions, most are idle in the pool.
            killed = backendsNamed(application);
            for (Object pid : killed) {
                PostgresTestServer.execute("SELECT pg_terminate_backend(" + pid + ")");
            }

            List<MessageId> after = new ArrayList<>();
            while (after.size() < 20) {
                try {
                    after.add(ns.publish(Message.to("t")).id());
                } catch (StoreUnavailableException e) {
                    // A publish on a connection whose backend was killed under it, before the pool could know.
                    publishFailures++;
                }
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> handled.keySet().containsAll(after));
            await().atMost(Duration.ofSeconds(20)).until(() -> backendsNamed(application).size() == 4
                    && killed.stream().noneMatch(backendsNamed(application)::contains));
            logged = log.text();
        } finally {
            PostgresTestServer.dropSchema(schema);
        }
        List<String> poolWarnings = logged.lines()
                .filter(line -> line.contains(" WARN com.zaxxer.hikari") && line.contains("queue-" + schema))
                .toList();
        Map<String, Long> warningsPerConnection = poolWarnings.stream().map(PoolBackendKillTest::connectionOf)
                .collect(Collectors.groupingBy(Function.identity(), Collectors.counting()));
        assertThat(warningsPerConnection).as("pool warnings per connection: " + poolWarnings)
                .allSatisfy((connection, count) -> assertThat(count).isEqualTo(1));
        assertThat(poolWarnings).hasSizeLessThanOrEqualTo(killed.size());
        assertThat(publishFailures).isLessThanOrEqualTo(killed.size());
    }

    private static String connectionOf(String warning) {
        Matcher matcher = CONNECTION.matcher(warning);
        assertThat(matcher.find()).as("a pool warning that names its connection: " + warning).isTrue();
        return matcher.group();
    }

    private static List<MessageId> publish(Namespace ns, int count) {
        List<MessageId> ids = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            ids.add(ns.publish(Message.to("t")).id());
        }
        return ids;
    }

    private static List<Object> backendsNamed(String application) {
        return StoreFixture.firstColumn(PostgresTestServer.dataSource(),
                "SELECT pid FROM pg_stat_activity WHERE application_name = '" + application + "'");
    }
}
