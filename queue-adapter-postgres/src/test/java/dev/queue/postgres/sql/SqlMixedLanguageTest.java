package dev.queue.postgres.sql;

import dev.queue.api.Backoff;
import dev.queue.api.Delivery;
import dev.queue.api.MessageId;
import dev.queue.api.Outcome;
import dev.queue.api.Pull;
import dev.queue.api.QueueOptions;
import dev.queue.api.Subscriber;
import dev.queue.api.Subscription;
import dev.queue.postgres.CompletedRetention;
import dev.queue.postgres.PostgresNamespace;
import dev.queue.postgres.PostgresQueue;
import dev.queue.postgres.PostgresQueueConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The same queue from two languages: psql pushes for a Java subscriber, Java publishes for SQL. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlMixedLanguageTest {

    private SqlTestDatabase db;

    @BeforeAll
    void createDatabase() {
        db = SqlTestDatabase.create("sqlmixed");
    }

    @AfterAll
    void dropDatabase() {
        db.close();
    }

    /**
     * The subscriber sweeps only once an hour, so within the wait below only the NOTIFY of the psql push can wake
     * it (after its first, empty claim at start).
     */
    @Test
    void aMessagePushedWithPsqlIsHandledByAJavaSubscriberWokenByNotify() throws Exception {
        PostgresQueueConfig config = PostgresQueueConfig.defaults().schema(SqlTestDatabase.SCHEMA).listen(true)
                .queueOptions(QueueOptions.defaults().sweepInterval(Duration.ofHours(1)));
        List<String> handled = new CopyOnWriteArrayList<>();
        try (PostgresQueue queue = PostgresQueue.create(db.dataSource, db.dataSource, config);
             Subscription subscription = queue.namespace("acme").subscribe(Subscriber.on("email")
                     .handleDelivery((delivery, ctx) -> handled.add(delivery.id().value() + " " + delivery.json())))) {
            assertThat(subscription).isNotNull();

            String output = psql("SELECT queue.push('acme', 'email', '{\"to\": \"alice@example.com\"}')");
            long id = Long.parseLong(output.strip());

            await().atMost(30, TimeUnit.SECONDS).untilAsserted(() -> assertThat(handled)
                    .as("handled; rows " + db.rows("SELECT id, namespace, topic, state, attempts, worker FROM queue.messages"))
                    .contains(id + " {\"to\": \"alice@example.com\"}"));
            await().atMost(30, TimeUnit.SECONDS).until(() -> db.count("SELECT completed FROM queue.get_stats('acme')") == 1);
        }
    }

    @Test
    void aMessagePublishedFromJavaIsPulledAckedAndCountedFromSql() {
        PostgresQueueConfig config = PostgresQueueConfig.defaults().schema(SqlTestDatabase.SCHEMA).listen(false);
        MessageId id;
        try (PostgresQueue queue = PostgresQueue.create(db.dataSource, config)) {
            PostgresNamespace shop = queue.namespace("shop");
            id = shop.publish("order.paid", Map.of("order", "o-1"));
        }

        List<Map<String, Object>> pulled = db.rows("SELECT * FROM queue.pull('shop', 'order.paid', p_worker_id := 'python-1')");
        assertThat(pulled).singleElement().satisfies(row -> {
            assertThat(row.get("id")).isEqualTo(id.value());
            assertThat(row.get("payload").toString()).isEqualTo("{\"order\":\"o-1\"}");
            assertThat(row.get("attempts")).isEqualTo(1);
        });
        assertThat(db.value("SELECT queue.ack('shop', ?, ?)", id.value(), pulled.get(0).get("lease_token"))).isEqualTo(true);
        assertThat(db.rows("SELECT * FROM queue.get_stats('shop')")).extracting(r -> r.values().toString())
                .containsExactly("[1, 0, 0, 1, 0, 1]");

        try (PostgresQueue queue = PostgresQueue.create(db.dataSource, config)) {
            assertThat(queue.namespace("shop").stats().completed()).isEqualTo(1);
        }
    }

    /**
     * Who published a message pushed from SQL stays on it whichever engine moves it: the Java engine's dead letter,
     * redrive and archive carry the column along.
     */
    @Test
    void theSqlPublisherIsKeptThroughTheJavaEnginesDeadLetterRedriveAndArchive() throws Exception {
        long id;
        try (Connection connection = db.connect()) {
            SqlTestDatabase.rows(connection, "SELECT queue.set_actor('alice')");
            id = ((Number) SqlTestDatabase.rows(connection, "SELECT queue.push('archive', 'keep', '{}') AS id").get(0).get("id")).longValue();
            SqlTestDatabase.rows(connection, "SELECT queue.clear_actor()");
        }
        PostgresQueueConfig config = PostgresQueueConfig.defaults().schema(SqlTestDatabase.SCHEMA).listen(false)
                .completedRetention(CompletedRetention.ARCHIVE);
        try (PostgresQueue queue = PostgresQueue.create(db.dataSource, config)) {
            PostgresNamespace archive = queue.namespace("archive");
            Delivery first = archive.pullOne(Pull.from("keep")).orElseThrow();
            assertThat(archive.fail(first, "bad")).isEqualTo(Outcome.DEAD_LETTERED);
            assertThat(db.value("SELECT published_by FROM queue.dead_letters WHERE id = ?", id)).isEqualTo("alice");

            assertThat(archive.deadLetters().redrive(MessageId.of(id))).isTrue();
            assertThat(db.value("SELECT published_by FROM queue.messages WHERE id = ?", id)).isEqualTo("alice");

            Delivery second = archive.pullOne(Pull.from("keep")).orElseThrow();
            assertThat(archive.ack(second)).isEqualTo(Outcome.ACKED);
            assertThat(db.value("SELECT published_by FROM queue.completed_messages WHERE id = ?", id)).isEqualTo("alice");
        }
    }

    /** A Java queue's options become the policy SQL callers follow: max attempts and each topic's backoff. */
    @Test
    void aJavaQueuesOptionsAreThePolicySqlCallersFollow() {
        QueueOptions options = QueueOptions.defaults().defaultMaxAttempts(3).backoff("slow", Backoff.fixed(Duration.ofSeconds(7)));
        PostgresQueueConfig config = PostgresQueueConfig.defaults().schema(SqlTestDatabase.SCHEMA).listen(false).queueOptions(options);
        try (PostgresQueue queue = PostgresQueue.create(db.dataSource, config)) {
            assertThat(queue).isNotNull();
        }

        assertThat(db.rows("SELECT max_attempts, backoff_base::text, backoff_jitter FROM queue.get_queue_policy('policies', 'slow')"))
                .extracting(r -> r.values().toString()).containsExactly("[3, 00:00:07, 0.0]");
        assertThat(db.rows("SELECT max_attempts, backoff_base::text, backoff_cap::text, backoff_jitter FROM queue.get_queue_policy('policies', 'fast')"))
                .extracting(r -> r.values().toString()).containsExactly("[3, 00:00:01, 01:00:00, 0.2]");

        long id = ((Number) db.value("SELECT queue.push('policies', 'slow', '{}')")).longValue();
        assertThat(db.value("SELECT max_attempts FROM queue.messages WHERE id = ?", id)).isEqualTo(3);
        Object token = db.rows("SELECT lease_token FROM queue.pull('policies', 'slow')").get(0).get("lease_token");
        assertThat(db.value("SELECT queue.nack('policies', ?, p_error := 'later', p_lease_token := ?)", id, token)).isEqualTo(true);
        assertThat(db.value("SELECT run_at - statement_timestamp() BETWEEN interval '6 seconds' AND interval '7 seconds' "
                + "FROM queue.messages WHERE id = ?", id)).as("due after the topic's fixed 7 s backoff").isEqualTo(true);
    }

    /**
     * Runs the real psql client against the test database and returns what it printed (tuples only, unaligned).
     * Where no psql is installed, the same text goes through JDBC, so the test still shows the SQL works.
     */
    private String psql(String sql) throws IOException, InterruptedException {
        if (!psqlInstalled()) {
            return String.valueOf(db.value(sql));
        }
        Map<String, String> parts = db.connectionParts();
        ProcessBuilder builder = new ProcessBuilder("psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1",
                "-h", parts.get("host"), "-p", parts.get("port"), "-U", parts.get("user"), "-d", parts.get("dbname"), "-c", sql);
        if (parts.containsKey("password")) {
            builder.environment().put("PGPASSWORD", parts.get("password"));
        }
        builder.redirectErrorStream(true);
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
        return output;
    }

    private static boolean psqlInstalled() {
        String path = System.getenv("PATH");
        return path != null && Arrays.stream(path.split(File.pathSeparator))
                .anyMatch(dir -> Files.isExecutable(Path.of(dir, "psql")));
    }
}
