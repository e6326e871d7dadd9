package dev.queue.cli;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Every command against an embedded PostgreSQL: what it prints, what it changes, and its exit code. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class QueueCliTest {

    private static final AtomicInteger NAMESPACES = new AtomicInteger();
    private EmbeddedPostgres postgres;
    private String url;

    /** What one run printed, and its exit code. */
    record Run(int exitCode, String out, String err) {
    }

    @BeforeAll
    void startDatabase() throws Exception {
        postgres = EmbeddedPostgres.builder().start();
        url = postgres.getJdbcUrl("postgres", "postgres");
        Run migrated = run("migrate");
        assertThat(migrated.exitCode()).as(migrated.err()).isZero();
        assertThat(migrated.out()).contains("applied migrations [1, 2, 3, R__input_checks.sql, R__rules.sql, R__tenants.sql");
    }

    @AfterAll
    void stopDatabase() throws Exception {
        postgres.close();
    }

    private Run run(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.add("--database-url=" + url);
        return runWithout(all.toArray(String[]::new));
    }

    private static Run runWithout(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = QueueCli.commandLine(new PrintWriter(out, true), new PrintWriter(err, true)).execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    private static String newNamespace() {
        return "cli-" + NAMESPACES.incrementAndGet();
    }

    private List<Object> sql(String statement, Object... params) {
        try (Connection connection = DriverManager.getConnection(url);
             PreparedStatement prepared = connection.prepareStatement(statement)) {
            for (int i = 0; i < params.length; i++) {
                prepared.setObject(i + 1, params[i]);
            }
            List<Object> values = new ArrayList<>();
            if (prepared.execute()) {
                try (ResultSet rows = prepared.getResultSet()) {
                    while (rows.next()) {
                        values.add(rows.getObject(1));
                    }
                }
            }
            return values;
        } catch (SQLException e) {
            throw new IllegalStateException(e.getMessage() + " in " + statement, e);
        }
    }

    private long push(String namespace, String topic, String extra) {
        return ((Number) sql("SELECT queue.push(?, ?, '{}'::json" + extra + ")", namespace, topic).get(0)).longValue();
    }

    private long dead(String namespace, String topic, String error) {
        long id = push(namespace, topic, "");
        sql("SELECT id FROM queue.pull(?, ?)", namespace, topic);
        sql("SELECT queue.fail(?, ?, ?)", namespace, id, error);
        return id;
    }

    @Test
    void migrateAgainHasNothingToDo() {
        Run run = run("migrate");
        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).contains("schema queue is up to date");
        assertThat(run("migrate", "--json").out()).contains("\"applied\": []");
    }

    @Test
    void statusIsHealthyThenWarnsWithEvidenceAndAdviceAndExitsNonZero() {
        String ns = newNamespace();
        Run healthy = run("status", "-n", ns);
        assertThat(healthy.exitCode()).isZero();
        assertThat(healthy.out()).contains("healthy: no warnings for namespace " + ns);

        push(ns, "reports", ", p_run_at := now() - interval '1 hour'");
        Run warned = run("status", "--namespace", ns);
        assertThat(warned.exitCode()).isEqualTo(1);
        assertThat(warned.out()).contains("WARNING no_subscriber (" + ns + "/reports)", "no live worker subscribes", "evidence: {",
                "to do: start a worker");

        Run json = run("status", "-n", ns, "--json");
        assertThat(json.exitCode()).isEqualTo(1);
        assertThat(json.out()).startsWith("[{\"code\": \"no_subscriber\"").contains("\"evidence\": {\"waiting\"");

        sql("DELETE FROM queue.messages WHERE namespace = ?", ns);
        assertThat(run("status", "-n", ns).exitCode()).isZero();
    }

    @Test
    void statsAndTopicsCountMessagesAndSubscribers() {
        String ns = newNamespace();
        push(ns, "email", "");
        push(ns, "email", "");
        dead(ns, "sms", "no route");
        sql("SELECT queue.worker_heartbeat('p-" + ns + "', 'host-a', 7, now(), '1.0', 'LISTENING', ?::jsonb)",
                "[{\"namespace\": \"" + ns + "\", \"topics\": [\"email\"], \"worker\": \"w\", \"concurrency\": 2, \"in_flight\": 0}]");
        try {
            Run stats = run("stats", "-n", ns);
            assertThat(stats.exitCode()).isZero();
            assertThat(stats.out()).contains("TOTAL: 3", "PENDING: 2", "DEAD: 1", "TOPICS: 2");

            Run topics = run("topics", "-n", ns);
            assertThat(topics.out().lines().toList()).hasSize(3);
            assertThat(topics.out().lines().toList().get(0)).startsWith("TOPIC").contains("LIVE_SUBSCRIBERS");
            assertThat(topics.out().lines().toList().get(1))
                    .matches("email\\s+2\\s+0\\s+0\\s+0\\s+2\\s+1\\s+true\\s+false\\s+[0-9-]+ [0-9:]+");
            assertThat(topics.out().lines().toList().get(2)).matches("sms\\s+0\\s+0\\s+0\\s+1\\s+1\\s+0\\s+true\\s+false.*");
            assertThat(run("topics", "-n", ns, "--json").out()).contains("{\"topic\": \"email\", \"pending\": 2");
        } finally {
            sql("SELECT queue.worker_stop(?)", "p-" + ns);
        }
    }

    @Test
    void topicsPauseAndResumeATopicRecordingTheActorAndShowItPaused() {
        String ns = newNamespace();
        push(ns, "email", "");

        Run pause = run("topics", "pause", "email", "-n", ns, "--actor", "dave");
        assertThat(pause.exitCode()).as(pause.err()).isZero();
        assertThat(pause.out()).contains("paused topic email as dave");
        assertThat(sql("SELECT paused_by FROM queue.paused_topics WHERE namespace = ?", ns)).containsExactly("dave");
        assertThat(sql("SELECT count(*) FROM queue.pull(?, 'email')", ns)).containsExactly(0L);
        assertThat(run("topics", "pause", "email", "-n", ns).out()).contains("topic email was already paused");
        assertThat(run("topics", "-n", ns).out().lines().toList().get(1)).matches("email\\s+1\\s+0\\s+0\\s+0\\s+1\\s+0\\s+true\\s+true.*");
        assertThat(run("topics", "-n", ns, "--json").out()).contains("\"paused\": true");

        Run resume = run("topics", "resume", "email", "-n", ns, "--actor", "dave", "--json");
        assertThat(resume.out()).contains("\"changed\": true");
        assertThat(sql("SELECT action FROM queue.audit_log WHERE namespace = ? AND actor = 'dave' ORDER BY id", ns))
                .containsExactly("pause_queue", "resume_queue");
        assertThat(run("topics", "-n", ns).out().lines().toList().get(1)).contains(" false ");

        Run badTopic = run("topics", "pause", "no spaces", "-n", ns);
        assertThat(badTopic.exitCode()).isEqualTo(2);
        assertThat(badTopic.err()).contains("invalid topic", "no spaces");
    }

    @Test
    void topicsLimitSetsListsAndClearsATopicsLimitsRecordingTheActor() {
        String ns = newNamespace();
        push(ns, "email", "");
        push(ns, "email", "");

        Run limit = run("topics", "limit", "email", "-n", ns, "--max-running", "1", "--rate", "10/1s", "--actor", "fay");
        assertThat(limit.exitCode()).as(limit.err()).isZero();
        assertThat(limit.out()).contains("set the limits of topic email as fay");
        assertThat(sql("SELECT count(*) FROM queue.pull_batch(?, 'email', 10)", ns)).containsExactly(1L);
        assertThat(run("topics", "limit", "email", "-n", ns, "--max-running", "1", "--rate", "10/1s").out())
                .contains("topic email had these limits already");
        assertThat(run("topics", "limits", "-n", ns).out().lines().toList().get(1)).startsWith("email").contains(" 1 ", " 10 ", "fay");
        assertThat(run("topics", "limits", "-n", ns, "--json").out()).contains("\"maxRunning\": 1", "\"rateLimit\": 10");

        Run clear = run("topics", "limit", "email", "-n", ns, "--clear", "--actor", "fay", "--json");
        assertThat(clear.out()).contains("\"changed\": true");
        assertThat(sql("SELECT count(*) FROM queue.pull_batch(?, 'email', 10)", ns)).containsExactly(1L);
        assertThat(sql("SELECT action FROM queue.audit_log WHERE namespace = ? AND actor = 'fay' ORDER BY id", ns))
                .containsExactly("set_queue_limits", "clear_queue_limits");

        Run badRate = run("topics", "limit", "email", "-n", ns, "--rate", "ten a second");
        assertThat(badRate.exitCode()).isEqualTo(2);
        assertThat(badRate.err()).contains("invalid --rate", "ten a second");
        Run zero = run("topics", "limit", "email", "-n", ns, "--max-running", "0");
        assertThat(zero.exitCode()).isEqualTo(2);
        assertThat(zero.err()).contains("invalid maxRunning", "0");
    }

    @Test
    void topicsLimitPartitionsByTheOrderingKey() {
        String ns = newNamespace();
        sql("SELECT queue.push(?, 'hooks', '{}', p_ordering_key := 'customer-1')", ns);
        sql("SELECT queue.push(?, 'hooks', '{}', p_ordering_key := 'customer-2')", ns);

        Run limit = run("topics", "limit", "hooks", "-n", ns, "--partition-ordering-key", "--partition-rate", "1/1h",
                "--actor", "fay");
        assertThat(limit.exitCode()).as(limit.err()).isZero();
        assertThat(limit.out()).contains("set the limits of topic hooks as fay");
        assertThat(sql("SELECT partition_kind FROM queue.list_queue_limits(?)", ns)).containsExactly("ordering_key");
        assertThat(run("topics", "limits", "-n", ns, "--json").out())
                .contains("\"partitionKind\": \"ordering_key\"", "\"partitionRateLimit\": 1");
        assertThat(run("topics", "limits", "-n", ns).out().lines().toList().get(1)).startsWith("hooks")
                .contains("ordering_key");
        // one start per key: both keys start, each once
        assertThat(sql("SELECT ordering_key FROM queue.pull_batch(?, 'hooks', 10) ORDER BY 1", ns))
                .containsExactly("customer-1", "customer-2");

        Run both = run("topics", "limit", "hooks", "-n", ns, "--partition-ordering-key", "--partition-header", "c",
                "--max-running-per-partition", "1");
        assertThat(both.exitCode()).isEqualTo(2);
        assertThat(both.err()).contains("invalid --partition-header", "c");
        Run alone = run("topics", "limit", "hooks", "-n", ns, "--partition-ordering-key", "--max-running", "1");
        assertThat(alone.exitCode()).isEqualTo(2);
        assertThat(alone.err()).contains("invalid partitionKind", "ordering_key");
        assertThat(sql("SELECT partition_rate_limit FROM queue.list_queue_limits(?)", ns)).containsExactly(1);
    }

    @Test
    void topicsOrderingShowsAndSetsTheChoiceBehindADeadLetter() {
        String ns = newNamespace();
        assertThat(run("topics", "ordering", "webhooks", "-n", ns).out()).contains("its ordering keys wait");

        Run set = run("topics", "ordering", "webhooks", "continue", "-n", ns, "--actor", "erin");
        assertThat(set.exitCode()).as(set.err()).isZero();
        assertThat(set.out()).contains("continue now, as erin");
        assertThat(run("topics", "ordering", "webhooks", "continue", "-n", ns).out()).contains("already");
        assertThat(run("topics", "ordering", "webhooks", "-n", ns, "--json").out()).contains("\"behindDeadLetter\": \"continue\"");
        assertThat(sql("SELECT action FROM queue.audit_log WHERE namespace = ? AND actor = 'erin'", ns))
                .containsExactly("ordering_continue");

        Run bad = run("topics", "ordering", "webhooks", "skip", "-n", ns);
        assertThat(bad.exitCode()).isEqualTo(2);
        assertThat(bad.err()).contains("behindDeadLetter", "skip");
    }

    @Test
    void cancelTakesAPendingMessageOutAndExitsOneWhenThereIsNone() {
        String ns = newNamespace();
        long id = push(ns, "email", "");

        Run cancel = run("cancel", String.valueOf(id), "-n", ns, "--actor", "erin");
        assertThat(cancel.exitCode()).as(cancel.err()).isZero();
        assertThat(cancel.out()).contains("cancelled message " + id + " as erin");
        assertThat(sql("SELECT count(*) FROM queue.messages WHERE id = ?", id)).containsExactly(0L);
        assertThat(sql("SELECT actor FROM queue.audit_log WHERE namespace = ? AND action = 'cancel'", ns)).containsExactly("erin");

        Run again = run("cancel", String.valueOf(id), "-n", ns);
        assertThat(again.exitCode()).isEqualTo(1);
        assertThat(again.out()).contains("no pending or running message " + id);
        assertThat(run("cancel", "0", "-n", ns).err()).contains("invalid id", "0");
    }

    @Test
    void findByUniqueKeyAndByHeaderWithinATopicsWindow() {
        String ns = newNamespace();
        long keyed = push(ns, "orders", ", p_unique_key := 'order-42'");
        long tagged = push(ns, "orders", ", p_headers := '{\"tenant\": \"acme\"}'");
        push(ns, "orders", ", p_headers := '{\"tenant\": \"globex\"}'");

        Run byKey = run("find", "--unique-key", "order-42", "-n", ns);
        assertThat(byKey.exitCode()).as(byKey.err()).isZero();
        assertThat(byKey.out().lines().toList()).hasSize(2);
        assertThat(byKey.out().lines().toList().get(1)).startsWith(keyed + " ").contains("orders", "pending", "order-42");

        Run byHeader = run("find", "--header", "tenant=acme", "--topic", "orders", "-n", ns, "--json");
        assertThat(byHeader.exitCode()).isZero();
        assertThat(byHeader.out()).startsWith("[{\"id\": " + tagged).contains("\"headers\": {\"tenant\": \"acme\"}").doesNotContain("globex");

        assertThat(run("find", "--unique-key", "order-43", "-n", ns).exitCode()).isEqualTo(1);
        Run noTopic = run("find", "--header", "tenant", "-n", ns);
        assertThat(noTopic.exitCode()).isEqualTo(2);
        assertThat(noTopic.err()).contains("invalid topic");
        Run both = run("find", "--header", "tenant", "--unique-key", "k", "-n", ns);
        assertThat(both.exitCode()).isEqualTo(2);
        assertThat(both.err()).contains("mutually exclusive");
    }

    @Test
    void workersListsLiveAndGoneProcesses() {
        String ns = newNamespace();
        String subscriptions = "[{\"namespace\": \"" + ns + "\", \"topics\": [\"email\"], \"worker\": \"w\", \"concurrency\": 8, \"in_flight\": 3}]";
        sql("SELECT queue.worker_heartbeat('alive-" + ns + "', 'host-a', 11, now(), '1.0', 'LISTENING', ?::jsonb)", subscriptions);
        sql("SELECT queue.worker_heartbeat('gone-" + ns + "', 'host-b', 12, now(), '1.0', 'LISTENING', ?::jsonb)", subscriptions);
        sql("UPDATE queue.workers SET heartbeat_at = now() - interval '1 minute' WHERE id = ?", "gone-" + ns);
        try {
            Run workers = run("workers", "-n", ns);
            assertThat(workers.exitCode()).isZero();
            List<String> lines = workers.out().lines().toList();
            assertThat(lines).hasSize(3);
            assertThat(lines.get(1)).startsWith("alive-" + ns).contains("host-a", "11", "alive", "LISTENING", ns + "/email", " 8 ", " 3 ");
            assertThat(lines.get(2)).startsWith("gone-" + ns).contains("gone");
            assertThat(run("workers", "-n", "nobody-here").out()).contains("(none)");
            assertThat(run("workers", "-n", ns, "--json").out()).contains("\"status\": \"alive\"", "\"inFlight\": 3");
        } finally {
            sql("DELETE FROM queue.workers WHERE id IN (?, ?)", "alive-" + ns, "gone-" + ns);
        }
    }

    @Test
    void inspectPrintsTheVerdictFirstThenTheFactsAndExitsOneForAnUnknownId() {
        String ns = newNamespace();
        long id = push(ns, "email", "");
        sql("SELECT id FROM queue.pull(?, 'email')", ns);
        sql("SELECT queue.nack(?, ?, p_error := 'SMTP timeout', p_delay := interval '10 minutes')", ns, id);

        Run inspect = run("inspect", String.valueOf(id), "-n", ns);
        assertThat(inspect.exitCode()).isZero();
        assertThat(inspect.out().lines().findFirst().orElseThrow()).startsWith("VERDICT: waiting for its retry at")
                .contains("attempt 2 of 20", "last error: SMTP timeout");
        assertThat(inspect.out()).contains("STATE: pending", "LAST_ERROR: SMTP timeout", "LIVE_SUBSCRIBERS: 0");

        Run explain = run("explain", String.valueOf(id), "-n", ns, "--json");
        assertThat(explain.out()).startsWith("{\"verdict\": \"waiting for its retry").contains("\"attemptHistory\": [{\"actor\": null, \"error\": \"SMTP timeout\"", "\"outcome\": \"retry\"");

        Run unknown = run("inspect", "987654321", "-n", ns);
        assertThat(unknown.exitCode()).isEqualTo(1);
        assertThat(unknown.out()).contains("no message 987654321 in namespace " + ns);
    }

    @Test
    void deadListPagesByIdAndFiltersByTopic() {
        String ns = newNamespace();
        long first = dead(ns, "billing", "card declined");
        long second = dead(ns, "billing", "card expired");
        long third = dead(ns, "shipping", "no address");

        Run page = run("dead", "list", "-n", ns, "--limit", "2");
        assertThat(page.exitCode()).isZero();
        assertThat(page.out()).contains("card declined", "card expired").doesNotContain("no address")
                .contains("next page: --after-id " + second);
        assertThat(run("dead", "list", "-n", ns, "--after-id", String.valueOf(second)).out()).contains("no address")
                .doesNotContain("card");
        assertThat(run("dead", "list", "-n", ns, "--topic", "shipping").out()).contains(String.valueOf(third)).doesNotContain("billing");
        assertThat(run("dead", "list", "-n", ns, "--json").out()).startsWith("[{\"id\": " + first);
    }

    @Test
    void deadRedriveCountsOnADryRunThenRedrivesByIdsRecordingTheActor() {
        String ns = newNamespace();
        long a = dead(ns, "billing", "card declined");
        long b = dead(ns, "billing", "card declined");
        dead(ns, "billing", "card declined");

        Run dry = run("dead", "redrive", String.valueOf(a), String.valueOf(b), "-n", ns, "--dry-run");
        assertThat(dry.exitCode()).isZero();
        assertThat(dry.out()).contains("would redrive 2 dead letters in namespace " + ns + " (2 given ids)");
        assertThat(sql("SELECT count(*) FROM queue.dead_letters WHERE namespace = ?", ns)).containsExactly(3L);

        Run redrive = run("dead", "redrive", String.valueOf(a), String.valueOf(b), "-n", ns, "--actor", "alice");
        assertThat(redrive.exitCode()).as(redrive.err()).isZero();
        assertThat(redrive.out()).contains("found 2 dead letters", "redrove 2 of 2 dead letters as alice");
        assertThat(sql("SELECT redriven_by FROM queue.messages WHERE id = ?", a)).containsExactly("alice");
        assertThat(sql("SELECT actor FROM queue.audit_log WHERE namespace = ? AND action = 'redrive_dead_letters'", ns))
                .containsExactly("alice");
    }

    @Test
    void deadPurgeByTopicGoesInBoundedBatches() {
        String ns = newNamespace();
        for (int i = 0; i < 5; i++) {
            dead(ns, "billing", "card declined");
        }
        dead(ns, "shipping", "no address");

        Run purge = run("dead", "purge", "--topic", "billing", "-n", ns, "--batch-size", "2", "--actor", "bob", "--json");
        assertThat(purge.exitCode()).as(purge.err()).isZero();
        assertThat(purge.out()).contains("\"purged\": 5", "\"actor\": \"bob\"");
        assertThat(sql("SELECT count FROM queue.audit_log WHERE namespace = ? AND action = 'purge_dead_letters' ORDER BY id", ns))
                .containsExactly(2, 2, 1);
        assertThat(sql("SELECT topic FROM queue.dead_letters WHERE namespace = ?", ns)).containsExactly("shipping");

        Run all = run("dead", "purge", "--all", "-n", ns);
        assertThat(all.out()).contains("purged 1 dead letters");
    }

    @Test
    void schedulesListPauseResumeAndRunNow() {
        String ns = newNamespace();
        sql("SELECT queue.create_schedule(?, 'nightly', 'reports', '{}', p_cron_expression := '0 3 * * *')", ns);

        assertThat(run("schedules", "list", "-n", ns).out()).contains("nightly", "reports", "0 3 * * *", "false");
        Run pause = run("schedules", "pause", "nightly", "-n", ns, "--actor", "carol");
        assertThat(pause.out()).contains("paused nightly");
        assertThat(sql("SELECT paused_by FROM queue.schedules WHERE namespace = ?", ns)).containsExactly("carol");
        assertThat(run("schedules", "pause", "nightly", "-n", ns).out()).contains("nightly was already paused");
        assertThat(run("schedules", "list", "-n", ns, "--json").out()).contains("\"paused\": true");
        assertThat(run("schedules", "resume", "nightly", "-n", ns).out()).contains("resumed nightly");

        Run now = run("schedules", "run-now", "nightly", "-n", ns, "--actor", "carol");
        assertThat(now.exitCode()).isZero();
        assertThat(now.out()).startsWith("published message ");
        assertThat(sql("SELECT published_by FROM queue.messages WHERE namespace = ? AND topic = 'reports'", ns)).containsExactly("carol");

        Run unknown = run("schedules", "pause", "nope", "-n", ns);
        assertThat(unknown.exitCode()).isEqualTo(1);
        assertThat(unknown.err()).contains("nope");
    }

    @Test
    void badArgumentsGiveAUsageErrorNamingTheValueWithExitCodeTwo() {
        Run notANumber = run("dead", "list", "--limit", "lots");
        assertThat(notANumber.exitCode()).isEqualTo(2);
        assertThat(notANumber.err()).contains("'lots'", "--limit", "Usage:");

        Run badId = run("inspect", "forty-two");
        assertThat(badId.exitCode()).isEqualTo(2);
        assertThat(badId.err()).contains("'forty-two'");

        Run badNamespace = run("stats", "-n", "no spaces");
        assertThat(badNamespace.exitCode()).isEqualTo(2);
        assertThat(badNamespace.err()).contains("invalid namespace", "no spaces");

        Run tooMany = run("dead", "list", "--limit", "5000");
        assertThat(tooMany.exitCode()).isEqualTo(2);
        assertThat(tooMany.err()).contains("invalid limit", "5000");

        Run noSelection = run("dead", "purge");
        assertThat(noSelection.exitCode()).isEqualTo(2);
        assertThat(noSelection.err()).contains("Missing required argument");

        Run unknownCommand = run("frobnicate");
        assertThat(unknownCommand.exitCode()).isEqualTo(2);
        assertThat(unknownCommand.err()).contains("frobnicate");

        Run badUrl = runWithout("stats", "--database-url", "mysql://db/app");
        assertThat(badUrl.exitCode()).isEqualTo(2);
        assertThat(badUrl.err()).contains("mysql://db/app");
    }

    @Test
    void everyCommandHasHelp() {
        Run help = runWithout("dead", "purge", "--help");
        assertThat(help.exitCode()).isZero();
        assertThat(help.out()).contains("Usage: queue dead purge", "--dry-run", "--batch-size", "--actor");
        assertThat(runWithout("--help").out()).contains("status", "workers", "inspect, explain", "Exit codes:");
    }

    @Test
    void theDatabaseUrlComesFromQueueDatabaseUrlWhenNotGiven() {
        Run missing = runWithout("stats");
        assertThat(missing.exitCode()).isEqualTo(2);
        assertThat(missing.err()).contains("--database-url", "QUEUE_DATABASE_URL");

        System.setProperty("QUEUE_DATABASE_URL", url);
        try {
            Run stats = runWithout("stats", "-n", newNamespace());
            assertThat(stats.exitCode()).as(stats.err()).isZero();
            assertThat(stats.out()).contains("TOTAL: 0");
        } finally {
            System.clearProperty("QUEUE_DATABASE_URL");
        }
    }

    @Test
    void anUnreachableDatabaseFailsWithExitCodeThree() {
        Run run = runWithout("status", "--database-url", "jdbc:postgresql://127.0.0.1:1/none?connectTimeout=2");
        assertThat(run.exitCode()).isEqualTo(3);
        assertThat(run.err()).contains("PostgreSQL failed");
    }

    @Test
    void dashboardServesUntilInterruptedAndRefusesAShortToken() throws Exception {
        String ns = newNamespace();
        push(ns, "email", "");
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        AtomicInteger exit = new AtomicInteger(-1);
        Thread serving = new Thread(() -> exit.set(QueueCli.commandLine(new PrintWriter(out, true), new PrintWriter(err, true))
                .execute("dashboard", "--port", "0", "-n", ns, "--database-url=" + url)));
        serving.start();
        try {
            Matcher started = Pattern.compile("dashboard on http://127\\.0\\.0\\.1:(\\d+)/ \\(read-only\\)").matcher("");
            await().atMost(Duration.ofSeconds(30)).until(() -> started.reset(out.toString()).find());
            HttpResponse<String> page = HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + started.group(1) + "/")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.body()).contains("Namespace " + ns, "email");
        } finally {
            serving.interrupt();
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> !serving.isAlive());
        assertThat(exit.get()).as(err.toString()).isZero();

        Run shortToken = run("dashboard", "--port", "0", "--write-token", "short");
        assertThat(shortToken.exitCode()).isEqualTo(2);
        assertThat(shortToken.err()).contains("invalid writeToken", "5 characters");

        Run badAddress = run("dashboard", "--port", "0", "--address", "no-such-host.invalid");
        assertThat(badAddress.exitCode()).isEqualTo(2);
        assertThat(badAddress.err()).contains("address", "no-such-host.invalid");
    }
}
