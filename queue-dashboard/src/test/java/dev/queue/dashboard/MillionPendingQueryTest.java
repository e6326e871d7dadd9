package dev.queue.dashboard;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.queue.postgres.PostgresOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Supplier;
import java.util.logging.Logger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every statement the dashboard's pages (and the CLI's topics and stats) run, with a million pending messages in
 * the hot table. The operator's connections load auto_explain, which reports each statement, the ones inside the
 * SQL functions included, as EXPLAIN (ANALYZE, FORMAT JSON) would, in a notice the driver hands to the statement.
 * No plan may scan messages or dead_letters sequentially, and none may read more than a bound of their rows.
 * The times are printed; docs/operations.md quotes them.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Tag("slow")
class MillionPendingQueryTest {

    private static final int PENDING = 1_000_000;
    private static final int DEAD = 100_000;
    /** Rows of messages or dead_letters one statement may read: a capped count reads the cap plus one. */
    private static final long MAX_ROWS_PER_STATEMENT = 2L * PostgresOperator.EXACT_UP_TO + 2;
    private static final Set<String> HOT = Set.of("messages", "dead_letters");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpClient http = HttpClient.newHttpClient();
    private final List<String> notices = new ArrayList<>();
    private Database db;
    private long someId;

    @BeforeAll
    void fill() throws Exception {
        db = new Database();
        long started = System.nanoTime();
        db.sql("INSERT INTO queue.topics (namespace, topic, first_published_at) SELECT 'big', 'topic-' || t, now()"
                + " FROM generate_series(0, 3) t");
        // one message in a thousand has a unique key, one in seven a header: what the searches look for
        db.sql("INSERT INTO queue.messages (namespace, topic, payload, max_attempts, run_at, published_at, unique_key, headers)"
                + " SELECT 'big', 'topic-' || (g % 4), '{\"n\": 1}', 3, now() - interval '2 hours' + g * interval '1 ms', now(),"
                + " CASE WHEN g % 1000 = 0 THEN 'order-' || g END,"
                + " CASE WHEN g % 7 = 0 THEN '{\"tenant\": \"acme\"}' ELSE '{}' END::jsonb"
                + " FROM generate_series(1, " + PENDING + ") g");
        db.sql("INSERT INTO queue.dead_letters (id, namespace, topic, payload, priority, attempts, max_attempts, last_error,"
                + " published_at, failed_at, unique_key) SELECT nextval('queue.message_ids'), 'big', 'topic-' || (g % 4), '{}', 0, 3, 3,"
                + " 'boom', now(), now() - g * interval '1 s', CASE WHEN g % 1000 = 0 THEN 'order-' || g END"
                + " FROM generate_series(1, " + DEAD + ") g");
        db.sql("VACUUM ANALYZE queue.messages");
        db.sql("VACUUM ANALYZE queue.dead_letters");
        db.schedule("big", "nightly", "topic-0");
        db.worker("big", "worker-1", "topic-1");
        someId = ((Number) db.sql("SELECT max(id) FROM queue.messages WHERE namespace = 'big'").get(0)).longValue();
        System.out.printf(Locale.ROOT, "filled %d pending messages and %d dead letters in %d ms%n", PENDING, DEAD,
                (System.nanoTime() - started) / 1_000_000);
    }

    @AfterAll
    void stop() throws Exception {
        db.close();
    }

    @Test
    void everyDashboardPageReadsBoundedRowsWithoutSequentialScansOfTheHotTables() throws Exception {
        PostgresOperator operator = PostgresOperator.create(explaining(db.url), "queue");
        QueueDashboard dashboard = QueueDashboard.builder(operator).namespaces(List.of("big")).countsMaxAge(java.time.Duration.ZERO).build();
        List<String> pages = List.of("/", "/topic?ns=big&topic=topic-1", "/message?ns=big&id=" + someId, "/dead?ns=big",
                "/dead?ns=big&topic=topic-2", "/dead/confirm?ns=big&action=purge&topic=topic-2", "/schedules?ns=big",
                "/workers", "/health", "/find?ns=big&key=order-1000", "/find?ns=big&topic=topic-1&header=tenant%3Dacme",
                "/?ns=big");
        try (QueueDashboard.Server server = dashboard.start("127.0.0.1", 0)) {
            // twice: the first pass includes planning and cold caches, the second is what an open dashboard sees
            for (String page : pages) {
                measure("GET " + page + " (first)", () -> get(server, page));
            }
            for (String page : pages) {
                measure("GET " + page, () -> {
                    HttpResponse<String> response = get(server, page);
                    assertThat(response.statusCode()).as(page + ": " + response.body()).isEqualTo(200);
                    return response.body();
                });
            }
            String overview = get(server, "/").body();
            // past the cap the counts are estimates, shown as such
            assertThat(overview).contains("pending <b>~").containsPattern("<td class=\"pending\">~2[0-9]{5}</td>");
        }
        measure("CLI topics", () -> operator.topics("big"));
        List<PostgresOperator.FoundMessage> found = measure("CLI find --unique-key", () -> operator.findByUniqueKey("big", null, "order-1000", 50));
        assertThat(found).extracting(PostgresOperator.FoundMessage::state).containsExactly("pending", "dead");
        assertThat(measure("CLI find --header", () -> operator.findByHeader("big", "topic-1", "tenant", "acme", 1000, 50))).hasSize(50);
        assertThat(measure("CLI namespaces", () -> operator.namespaces(100))).containsExactly("big");
        PostgresOperator.Stats stats = measure("CLI stats", () -> operator.stats("big"));
        assertThat(stats.exact()).isFalse();
        assertThat(stats.pending()).isBetween(PENDING / 2L, PENDING * 2L);
        // past the cap an estimate from ANALYZE's sample, each topic's rounded on its own
        assertThat(stats.dead()).isBetween(DEAD - DEAD / 100L, DEAD + DEAD / 100L);
    }

    /** Runs the work with the notices cleared, then checks and prints every plan it caused. */
    private <T> T measure(String what, Supplier<T> work) {
        synchronized (notices) {
            notices.clear();
        }
        long started = System.nanoTime();
        T result = work.get();
        double millis = (System.nanoTime() - started) / 1e6;
        List<String> plans;
        synchronized (notices) {
            plans = List.copyOf(notices);
        }
        assertThat(plans).as("plans of " + what).isNotEmpty();
        long maxRows = 0;
        long allRows = 0;
        StringBuilder details = new StringBuilder();
        for (String notice : plans) {
            int start = notice.indexOf('{');
            int at = notice.indexOf("duration: ");
            String duration = at < 0 ? "?" : notice.substring(at + 10, notice.indexOf(" ms", at));
            JsonNode plan;
            try {
                plan = JSON.readTree(notice.substring(start));
            } catch (Exception e) {
                throw new IllegalStateException("unreadable plan: " + notice, e);
            }
            String query = plan.path("Query Text").asText().replaceAll("\\s+", " ");
            long[] read = new long[1];
            List<String> seqScans = new ArrayList<>();
            // auto_explain reports a plain EXPLAIN's plan (the overview's estimate past its exact bound) without
            // any actual figures: it never runs, so whatever scan the planner picked for it reads nothing
            boolean estimateOnly = plan.path("Plan").path("Actual Loops").isMissingNode();
            if (estimateOnly) {
                assertThat(query).as("a plan without actual figures in " + what).startsWith("EXPLAIN (FORMAT JSON) ");
            } else {
                walk(plan.path("Plan"), read, seqScans);
            }
            details.append(String.format(Locale.ROOT, "    %8s ms %7d hot rows  %s%n", duration, read[0],
                    query.length() > 110 ? query.substring(0, 110) + "..." : query));
            maxRows = Math.max(maxRows, read[0]);
            allRows += read[0];
            assertThat(seqScans).as("sequential scans of the hot tables in " + what + ": " + query).isEmpty();
            assertThat(read[0]).as("rows of the hot tables read by " + what + ": " + query).isLessThanOrEqualTo(MAX_ROWS_PER_STATEMENT);
        }
        System.out.printf(Locale.ROOT, "%-62s %8.1f ms, %3d statements, hot rows read: %6d in all, %5d at most by one%n",
                what, millis, plans.size(), allRows, maxRows);
        System.out.print(details);
        return result;
    }

    /** Sums the rows scans of messages and dead_letters read (returned or filtered away, over all loops). */
    private static void walk(JsonNode node, long[] read, List<String> seqScans) {
        String relation = node.path("Relation Name").asText("");
        if (HOT.contains(relation)) {
            String type = node.path("Node Type").asText();
            // a node that never ran (its plan's other branch was taken) reports no loops and read nothing
            boolean ran = node.path("Actual Loops").asLong() > 0;
            if (type.equals("Seq Scan") && ran) {
                seqScans.add(relation);
            }
            long rows = node.path("Actual Rows").asLong() + node.path("Rows Removed by Filter").asLong()
                    + node.path("Rows Removed by Index Recheck").asLong();
            read[0] += rows * Math.max(1, node.path("Actual Loops").asLong());
        }
        for (JsonNode child : node.path("Plans")) {
            walk(child, read, seqScans);
        }
    }

    private HttpResponse<String> get(QueueDashboard.Server server, String path) {
        try {
            return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Connections with auto_explain reporting every statement (nested ones too) with its actual rows as a notice;
     * each statement's notices are collected when it closes.
     */
    private DataSource explaining(String url) {
        PGSimpleDataSource plain = new PGSimpleDataSource();
        plain.setUrl(url);
        InvocationHandler source = (proxy, method, args) -> {
            if (method.getName().equals("getConnection")) {
                Connection connection = plain.getConnection();
                try (Statement setup = connection.createStatement()) {
                    setup.execute("LOAD 'auto_explain'");
                    setup.execute("SET auto_explain.log_min_duration = 0");
                    setup.execute("SET auto_explain.log_analyze = on");
                    setup.execute("SET auto_explain.log_nested_statements = on");
                    setup.execute("SET auto_explain.log_format = json");
                    setup.execute("SET auto_explain.log_level = notice");
                }
                return wrap(Connection.class, connection);
            }
            return switch (method.getName()) {
                case "getLogWriter" -> new PrintWriter(System.out);
                case "getParentLogger" -> Logger.getGlobal();
                case "unwrap" -> null;
                case "isWrapperFor" -> false;
                case "toString" -> "explaining " + url;
                case "hashCode" -> System.identityHashCode(proxy);
                case "equals" -> proxy == args[0];
                default -> method.invoke(plain, args);
            };
        };
        return (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {DataSource.class}, source);
    }

    /** A connection whose statements hand their notices over when closed. */
    private <T> T wrap(Class<T> type, Object target) {
        InvocationHandler handler = (proxy, method, args) -> {
            if (Statement.class.isAssignableFrom(type) && method.getName().equals("close")) {
                collect(((Statement) target).getWarnings());
            }
            Object result;
            try {
                result = method.invoke(target, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
            if (type == Connection.class && result instanceof Statement statement) {
                Class<? extends Statement> kind = statement instanceof java.sql.CallableStatement ? java.sql.CallableStatement.class
                        : statement instanceof java.sql.PreparedStatement ? java.sql.PreparedStatement.class : Statement.class;
                return wrap(kind, statement);
            }
            return result;
        };
        return type.cast(Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {type}, handler));
    }

    private void collect(SQLWarning warning) throws SQLException {
        synchronized (notices) {
            for (SQLWarning w = warning; w != null; w = w.getNextWarning()) {
                if (w.getMessage() != null && w.getMessage().contains("plan:")) {
                    notices.add(w.getMessage());
                }
            }
        }
    }
}
