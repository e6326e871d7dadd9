package dev.queue.dashboard;

import com.sun.net.httpserver.HttpServer;
import dev.queue.api.InvalidInputException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Each page and each write over plain HTTP against an embedded PostgreSQL: what it shows, changes and refuses. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class QueueDashboardHttpTest {

    private static final String TOKEN = "s3cret-token-of-the-tests";
    private static final AtomicInteger NAMESPACES = new AtomicInteger();
    private final HttpClient http = HttpClient.newHttpClient();
    private Database db;

    @BeforeAll
    void start() throws Exception {
        db = new Database();
    }

    @AfterAll
    void stop() throws Exception {
        db.close();
    }

    private static String newNamespace() {
        return "web-" + NAMESPACES.incrementAndGet();
    }

    private QueueDashboard.Server serve(String ns, String token) throws Exception {
        return QueueDashboard.builder(db.operator).namespaces(List.of(ns)).writeToken(token).batchSize(2).build().start(0);
    }

    private HttpResponse<String> get(QueueDashboard.Server server, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + server.port() + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** A form post as a browser of this page sends it: with Origin; origin null leaves it out. */
    private HttpResponse<String> post(QueueDashboard.Server server, String path, String origin, Map<String, String> form)
            throws Exception {
        String body = form.entrySet().stream()
                .map(e -> e.getKey() + "=" + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + server.port() + path))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (origin != null) {
            request.header("Origin", origin);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String self(QueueDashboard.Server server) {
        return "http://localhost:" + server.port();
    }

    @Test
    void overviewShowsTheNamespaceItsTopicsCountsAndLinks() throws Exception {
        String ns = newNamespace();
        db.push(ns, "email", "");
        db.push(ns, "email", "");
        db.dead(ns, "sms", "no route");
        try (var server = serve(ns, null)) {
            HttpResponse<String> page = get(server, "/");
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.headers().firstValue("Content-Security-Policy")).hasValueSatisfying(v -> assertThat(v).contains("default-src 'none'"));
            assertThat(page.body()).contains("Namespace " + ns, "pending <b>2</b>", "dead <b>1</b>",
                    "href=\"/topic?ns=" + ns + "&amp;topic=email\"", "href=\"/dead?ns=" + ns + "\"", "read-only");
        }
    }

    @Test
    void countsAreReusedForTheirMaximumAgeOnly() throws Exception {
        String ns = newNamespace();
        db.push(ns, "email", "");
        QueueDashboard.Builder builder = QueueDashboard.builder(db.operator).namespaces(List.of(ns));
        try (var cached = builder.countsMaxAge(Duration.ofHours(1)).build().start(0)) {
            assertThat(get(cached, "/").body()).contains("pending <b>1</b>");
            db.push(ns, "email", "");
            assertThat(get(cached, "/").body()).contains("pending <b>1</b>");
        }
        try (var fresh = builder.countsMaxAge(Duration.ZERO).build().start(0)) {
            assertThat(get(fresh, "/").body()).contains("pending <b>2</b>");
        }
        try (var fresh = builder.countsMaxAge(Duration.ZERO).build().start(0)) {
            assertThat(get(fresh, "/").body()).contains("<td class=\"in-hour\">2</td>", "<td class=\"out-hour\">0</td>");
            long id = ((Number) db.sql("SELECT id FROM queue.pull(?, 'email')", ns).get(0)).longValue();
            db.sql("SELECT queue.ack(?, ?)", ns, id);
            // SQL pushes count inline, a completion shows from the live counters in the current minute
            assertThat(get(fresh, "/").body()).contains("<td class=\"in-hour\">2</td>", "<td class=\"out-hour\">1</td>",
                    "<svg class=\"rates\"", "<polyline class=\"in\"", "<polyline class=\"out\"");
        }
        assertThatThrownBy(() -> builder.countsMaxAge(Duration.ofSeconds(-1))).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("countsMaxAge").hasMessageContaining("-1");
    }

    @Test
    void topicPageCountsAndListsItsDeadLettersEscaped() throws Exception {
        String ns = newNamespace();
        long id = db.dead(ns, "sms", "<script>alert('x')</script> & more");
        try (var server = serve(ns, null)) {
            HttpResponse<String> page = get(server, "/topic?ns=" + ns + "&topic=sms");
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.body()).contains("Topic sms", "href=\"/message?ns=" + ns + "&amp;id=" + id + "\"",
                    "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; more").doesNotContain("<script>");
            HttpResponse<String> missing = get(server, "/topic?ns=" + ns + "&topic=nope");
            assertThat(missing.statusCode()).isEqualTo(404);
            assertThat(missing.body()).contains("no topic nope in namespace " + ns);
        }
    }

    @Test
    void messagePageGivesTheVerdictThenTheFacts() throws Exception {
        String ns = newNamespace();
        long id = db.dead(ns, "sms", "no route");
        try (var server = serve(ns, null)) {
            HttpResponse<String> page = get(server, "/message?ns=" + ns + "&id=" + id);
            assertThat(page.statusCode()).isEqualTo(200);
            String body = page.body();
            assertThat(body).contains("<p class=\"verdict\">", "<dt>state</dt><dd>dead</dd>", "<dt>last error</dt><dd>no route</dd>");
            assertThat(body.indexOf("class=\"verdict\"")).isLessThan(body.indexOf("<dl"));

            HttpResponse<String> bad = get(server, "/message?ns=" + ns + "&id=abc");
            assertThat(bad.statusCode()).isEqualTo(400);
            assertThat(bad.body()).contains("invalid id", "abc");
            HttpResponse<String> badNs = get(server, "/message?ns=bad%20name&id=1");
            assertThat(badNs.statusCode()).isEqualTo(400);
            assertThat(badNs.body()).contains("invalid namespace", "bad name");
        }
    }

    @Test
    void deadLettersPageAndConfirmationCountWhatARedriveTakes() throws Exception {
        String ns = newNamespace();
        long a = db.dead(ns, "billing", "card declined");
        db.dead(ns, "billing", "card expired");
        try (var server = serve(ns, TOKEN)) {
            assertThat(get(server, "/dead?ns=" + ns).body()).contains("id=\"dead-" + a + "\"", "card declined", "card expired");
            HttpResponse<String> confirm = get(server, "/dead/confirm?ns=" + ns + "&action=redrive&topic=billing");
            assertThat(confirm.statusCode()).isEqualTo(200);
            assertThat(confirm.body()).contains("Redrive the dead letters of topic billing: 2 messages, in transactions of at most 2.",
                    "name=\"token\"", "name=\"confirm\" value=\"yes\"");
            HttpResponse<String> bad = get(server, "/dead/confirm?ns=" + ns + "&action=explode");
            assertThat(bad.statusCode()).isEqualTo(400);
            assertThat(bad.body()).contains("invalid action", "explode");
        }
    }

    @Test
    void redriveNeedsTheTokenAndTheSameOriginAndRecordsTheActor() throws Exception {
        String ns = newNamespace();
        long id = db.dead(ns, "billing", "card declined");
        try (var server = serve(ns, TOKEN)) {
            Map<String, String> noToken = Map.of("ns", ns, "id", String.valueOf(id), "confirm", "yes");
            HttpResponse<String> refused = post(server, "/dead/redrive", self(server), noToken);
            assertThat(refused.statusCode()).isEqualTo(403);
            assertThat(refused.body()).contains("needs the write token");

            Map<String, String> wrong = Map.of("ns", ns, "id", String.valueOf(id), "confirm", "yes", "token", "guess-guess-guess");
            assertThat(post(server, "/dead/redrive", self(server), wrong).body()).contains("the write token is wrong");

            Map<String, String> withToken = Map.of("ns", ns, "id", String.valueOf(id), "confirm", "yes", "token", TOKEN);
            HttpResponse<String> crossSite = post(server, "/dead/redrive", "https://evil.example", withToken);
            assertThat(crossSite.statusCode()).isEqualTo(403);
            assertThat(crossSite.body()).contains("cross-site write refused", "evil.example");
            HttpResponse<String> noOrigin = post(server, "/dead/redrive", null, withToken);
            assertThat(noOrigin.statusCode()).isEqualTo(403);
            assertThat(noOrigin.body()).contains("needs an Origin or Referer");
            assertThat(db.sql("SELECT count(*) FROM queue.dead_letters WHERE namespace = ?", ns)).containsExactly(1L);

            HttpResponse<String> done = post(server, "/dead/redrive", self(server), withToken);
            assertThat(done.statusCode()).as(done.body()).isEqualTo(200);
            assertThat(done.body()).contains("Redrove 1 of 1");
            assertThat(db.sql("SELECT count(*) FROM queue.dead_letters WHERE namespace = ?", ns)).containsExactly(0L);
            assertThat(db.sql("SELECT redriven_by FROM queue.messages WHERE id = ?", id)).containsExactly("queue-dashboard from 127.0.0.1");
            assertThat(get(server, "/dead?ns=" + ns).body()).contains("No dead letters");
        }
    }

    @Test
    void redriveWithTheTokenInTheHeaderAndWithoutConfirmation() throws Exception {
        String ns = newNamespace();
        long id = db.dead(ns, "billing", "card declined");
        try (var server = serve(ns, TOKEN)) {
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(self(server) + "/dead/redrive"))
                    .header("Content-Type", "application/x-www-form-urlencoded").header("Referer", self(server) + "/dead")
                    .header(QueueDashboard.TOKEN_HEADER, TOKEN);
            HttpResponse<String> unconfirmed = http.send(request.POST(HttpRequest.BodyPublishers.ofString("ns=" + ns + "&id=" + id)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(unconfirmed.statusCode()).isEqualTo(400);
            assertThat(unconfirmed.body()).contains("invalid confirm");
            HttpResponse<String> done = http.send(request.POST(HttpRequest.BodyPublishers.ofString("ns=" + ns + "&id=" + id
                    + "&confirm=yes")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(done.body()).contains("Redrove 1 of 1");
        }
    }

    @Test
    void purgeByTopicRunsInBoundedBatchesAndIsAudited() throws Exception {
        String ns = newNamespace();
        for (int i = 0; i < 5; i++) {
            db.dead(ns, "billing", "card declined " + i);
        }
        long other = db.dead(ns, "sms", "no route");
        try (var server = serve(ns, TOKEN)) {
            assertThat(get(server, "/dead/confirm?ns=" + ns + "&action=purge&topic=billing").body())
                    .contains("Purge the dead letters of topic billing: 5 messages");
            HttpResponse<String> done = post(server, "/dead/purge", self(server),
                    Map.of("ns", ns, "topic", "billing", "confirm", "yes", "token", TOKEN));
            assertThat(done.body()).contains("Purged 5 dead letters.");
            assertThat(db.sql("SELECT id FROM queue.dead_letters WHERE namespace = ?", ns)).containsExactly(other);
            // batches of 2: three transactions, each audited with the actor
            assertThat(db.sql("SELECT count(*) FROM queue.audit_log WHERE namespace = ? AND actor = 'queue-dashboard from 127.0.0.1'", ns))
                    .containsExactly(3L);
        }
    }

    @Test
    void schedulesPauseResumeAndRunNow() throws Exception {
        String ns = newNamespace();
        db.schedule(ns, "nightly", "reports");
        try (var server = serve(ns, TOKEN)) {
            assertThat(get(server, "/schedules?ns=" + ns).body()).contains("nightly", "reports", "cron 0 3 * * *", "active", "pause");
            Map<String, String> form = Map.of("ns", ns, "name", "nightly", "token", TOKEN);
            assertThat(post(server, "/schedules/pause", self(server), form).body()).contains("Paused schedule nightly.");
            assertThat(db.sql("SELECT paused_by FROM queue.schedules WHERE namespace = ?", ns)).containsExactly("queue-dashboard from 127.0.0.1");
            assertThat(get(server, "/schedules?ns=" + ns).body()).contains("<td class=\"state\">paused</td>", "resume");
            assertThat(post(server, "/schedules/pause", self(server), form).body()).contains("was already paused");
            assertThat(post(server, "/schedules/resume", self(server), form).body()).contains("Resumed schedule nightly.");
            assertThat(post(server, "/schedules/run", self(server), form).body()).containsPattern("fired message \\d+");
            HttpResponse<String> unknown = post(server, "/schedules/pause", self(server), Map.of("ns", ns, "name", "weekly", "token", TOKEN));
            assertThat(unknown.statusCode()).isEqualTo(404);
            assertThat(unknown.body()).contains("no schedule named &quot;weekly&quot; in namespace " + ns);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"/dead/redrive", "/dead/purge", "/schedules/pause", "/schedules/resume", "/schedules/run", "/topic/pause",
            "/topic/resume", "/message/cancel"})
    void everyWriteRefusesAMissingTokenAndAnotherSiteAndChangesNothing(String path) throws Exception {
        String ns = newNamespace();
        long id = db.dead(ns, "billing", "card declined");
        db.schedule(ns, "nightly", "reports");
        Map<String, String> form = Map.of("ns", ns, "id", String.valueOf(id), "name", "nightly", "topic", "billing", "confirm", "yes");
        Map<String, String> withToken = new HashMap<>(form);
        withToken.put("token", TOKEN);
        // compared with before, not zero: the setup's own calls may be audited too
        List<Object> audited = db.sql("SELECT count(*) FROM queue.audit_log WHERE namespace = ?", ns);
        try (var server = serve(ns, TOKEN)) {
            HttpResponse<String> noToken = post(server, path, self(server), form);
            assertThat(noToken.statusCode()).isEqualTo(403);
            assertThat(noToken.body()).contains("needs the write token");
            HttpResponse<String> crossSite = post(server, path, "http://localhost:1", withToken);
            assertThat(crossSite.statusCode()).isEqualTo(403);
            assertThat(crossSite.body()).contains("cross-site write refused");
        }
        assertThat(db.sql("SELECT count(*) FROM queue.dead_letters WHERE namespace = ?", ns)).containsExactly(1L);
        assertThat(db.sql("SELECT count(*) FROM queue.messages WHERE namespace = ?", ns)).containsExactly(0L);
        assertThat(db.sql("SELECT paused FROM queue.schedules WHERE namespace = ?", ns)).containsExactly(false);
        assertThat(db.sql("SELECT count(*) FROM queue.paused_topics WHERE namespace = ?", ns)).containsExactly(0L);
        assertThat(db.sql("SELECT count(*) FROM queue.audit_log WHERE namespace = ?", ns)).isEqualTo(audited);
    }

    @Test
    void overviewNamesTheDatabasesNamespacesAndShowsOneByParameter() throws Exception {
        String withTopic = newNamespace();
        String withSchedule = newNamespace();
        db.push(withTopic, "email", "");
        db.schedule(withSchedule, "nightly", "reports");
        try (var server = QueueDashboard.builder(db.operator).build().start(0)) {
            String overview = get(server, "/").body();
            assertThat(overview).contains("Namespaces in the database", "href=\"/?ns=" + withTopic + "\"",
                    "href=\"/?ns=" + withSchedule + "\"");
            String one = get(server, "/?ns=" + withTopic).body();
            assertThat(one).contains("<h2>Namespace " + withTopic + "</h2>", "pending <b>1</b>")
                    .doesNotContain("<h2>Namespace " + withSchedule + "</h2>");
            assertThat(get(server, "/?ns=no%20spaces").statusCode()).isEqualTo(400);
        }
    }

    @Test
    void findsByUniqueKeyAndByHeaderSayingWhatWasSearched() throws Exception {
        String ns = newNamespace();
        long keyed = db.push(ns, "orders", ", p_unique_key := 'order-42'");
        long tagged = db.push(ns, "orders", ", p_headers := '{\"tenant\": \"acme\"}'");
        db.push(ns, "orders", ", p_headers := '{\"tenant\": \"globex\"}'");
        try (var server = serve(ns, null)) {
            assertThat(get(server, "/topic?ns=" + ns + "&topic=orders").body()).contains("class=\"find-key\"", "class=\"find-header\"");
            String byKey = get(server, "/find?ns=" + ns + "&key=order-42").body();
            assertThat(byKey).contains("Searched by unique key in every topic", "id=\"found-" + keyed + "\"",
                    "href=\"/message?ns=" + ns + "&amp;id=" + keyed + "\"").doesNotContain("found-" + tagged);
            String byHeader = get(server, "/find?ns=" + ns + "&topic=orders&header=tenant%3Dacme").body();
            assertThat(byHeader).contains("Searched only a window of topic orders", "id=\"found-" + tagged + "\"")
                    .doesNotContain("globex").doesNotContain("found-" + keyed);
            assertThat(get(server, "/find?ns=" + ns + "&key=order-43").body()).contains("No message found.");

            HttpResponse<String> noTopic = get(server, "/find?ns=" + ns + "&header=tenant");
            assertThat(noTopic.statusCode()).isEqualTo(400);
            assertThat(noTopic.body()).contains("invalid topic");
            HttpResponse<String> badHeader = get(server, "/find?ns=" + ns + "&topic=orders&header=no%20spaces%3Dx");
            assertThat(badHeader.statusCode()).isEqualTo(400);
            assertThat(badHeader.body()).contains("invalid header", "no spaces");
        }
    }

    @Test
    void pausesAndResumesATopicAndCancelsAMessageRecordingTheActor() throws Exception {
        String ns = newNamespace();
        long id = db.push(ns, "email", "");
        try (var server = serve(ns, TOKEN)) {
            Map<String, String> form = Map.of("ns", ns, "topic", "email", "token", TOKEN);
            assertThat(get(server, "/topic?ns=" + ns + "&topic=email").body()).contains("class=\"pause\"", "pause topic");
            assertThat(post(server, "/topic/pause", self(server), form).body()).contains("Paused topic email.");
            assertThat(db.sql("SELECT paused_by FROM queue.paused_topics WHERE namespace = ?", ns))
                    .containsExactly("queue-dashboard from 127.0.0.1");
            assertThat(get(server, "/").body()).contains("email</a> <span class=\"paused\">paused</span>");
            assertThat(get(server, "/topic?ns=" + ns + "&topic=email").body()).contains("Paused: no message", "resume topic");
            assertThat(post(server, "/topic/pause", self(server), form).body()).contains("was already paused");
            assertThat(post(server, "/topic/resume", self(server), form).body()).contains("Resumed topic email.");
            assertThat(get(server, "/").body()).doesNotContain("class=\"paused\"");

            assertThat(get(server, "/message?ns=" + ns + "&id=" + id).body()).contains("class=\"cancel\"", "cancel message");
            Map<String, String> cancel = Map.of("ns", ns, "id", String.valueOf(id), "token", TOKEN);
            assertThat(post(server, "/message/cancel", self(server), cancel).body()).contains("Cancelled message " + id + ".");
            assertThat(post(server, "/message/cancel", self(server), cancel).body()).contains("was not pending or running");
            assertThat(get(server, "/message?ns=" + ns + "&id=" + id).body()).doesNotContain("class=\"cancel\"");
            assertThat(db.sql("SELECT action || ' ' || actor FROM queue.audit_log WHERE namespace = ? ORDER BY id", ns))
                    .containsExactly("pause_queue queue-dashboard from 127.0.0.1", "resume_queue queue-dashboard from 127.0.0.1",
                            "cancel queue-dashboard from 127.0.0.1");
        }
    }

    @Test
    void workersAndHealthPages() throws Exception {
        String ns = newNamespace();
        db.worker(ns, "w-" + ns, "email");
        db.push(ns, "reports", ", p_run_at := now() - interval '1 hour'");
        try (var server = serve(ns, null)) {
            assertThat(get(server, "/workers").body()).contains("w-" + ns, "host-a", "email");
            assertThat(get(server, "/health").body()).contains("no_subscriber (" + ns + "/reports)", "evidence:", "to do:");
            assertThat(get(server, "/").body()).containsPattern("health: \\d+ warnings?");
        }
    }

    @Test
    void readOnlyWithoutATokenShowsNoFormsAndRefusesWrites() throws Exception {
        String ns = newNamespace();
        db.schedule(ns, "nightly", "reports");
        try (var server = serve(ns, null)) {
            assertThat(get(server, "/schedules?ns=" + ns).body()).doesNotContain("name=\"token\"");
            HttpResponse<String> refused = post(server, "/schedules/pause", self(server), Map.of("ns", ns, "name", "nightly", "token", TOKEN));
            assertThat(refused.statusCode()).isEqualTo(403);
            assertThat(refused.body()).contains("read-only: no write token is configured");
            assertThat(db.sql("SELECT paused FROM queue.schedules WHERE namespace = ?", ns)).containsExactly(false);
            assertThat(get(server, "/nope").statusCode()).isEqualTo(404);
            HttpResponse<String> put = http.send(HttpRequest.newBuilder(URI.create(self(server) + "/"))
                    .PUT(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(put.statusCode()).isEqualTo(405);
            HttpResponse<String> head = http.send(HttpRequest.newBuilder(URI.create(self(server) + "/"))
                    .method("HEAD", HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(head.statusCode()).isEqualTo(200);
            assertThat(head.body()).isEmpty();
        }
    }

    @Test
    void mountsUnderABasePathInTheApplicationsServer() throws Exception {
        String ns = newNamespace();
        db.push(ns, "email", "");
        HttpServer app = HttpServer.create(new InetSocketAddress(0), 0);
        QueueDashboard dashboard = QueueDashboard.builder(db.operator).namespaces(List.of(ns)).basePath("/queue").build();
        app.createContext("/queue", dashboard);
        app.start();
        try {
            String root = "http://localhost:" + app.getAddress().getPort();
            HttpResponse<String> page = http.send(HttpRequest.newBuilder(URI.create(root + "/queue/")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.body()).contains("href=\"/queue/topic?ns=" + ns + "&amp;topic=email\"", "action=\"/queue/message\"");
        } finally {
            app.stop(0);
        }
    }

    @Test
    void badConfigurationNamesTheValue() {
        var builder = QueueDashboard.builder(db.operator);
        assertThatThrownBy(() -> builder.writeToken("short")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("writeToken").hasMessageContaining("5 characters");
        assertThatThrownBy(() -> builder.basePath("queue/")).isInstanceOf(InvalidInputException.class).hasMessageContaining("queue/");
        assertThatThrownBy(() -> builder.batchSize(0)).isInstanceOf(InvalidInputException.class).hasMessageContaining("0");
        assertThatThrownBy(() -> builder.build().start(70000)).isInstanceOf(InvalidInputException.class).hasMessageContaining("70000");
    }
}
