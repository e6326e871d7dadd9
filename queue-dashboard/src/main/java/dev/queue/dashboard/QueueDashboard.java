package dev.queue.dashboard;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import dev.queue.api.InvalidInputException;
import dev.queue.api.NamespaceAccessDeniedException;
import dev.queue.api.QueueException;
import dev.queue.api.ScheduleNotFoundException;
import dev.queue.postgres.PostgresOperator;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The operator's web page over {@link PostgresOperator}: namespaces and topics (pause, resume), a message's
 * explanation (cancel), a search by unique key or header, dead letters (redrive, purge), schedules (pause, resume,
 * run now), live workers and health warnings. Server-rendered HTML, every value escaped, no script.
 *
 * <p>Mount it in an application's {@link HttpServer} under {@link Builder#basePath(String)}, or run it alone with
 * {@link #start(int)}. Read-only unless {@link Builder#writeToken(String)} is set; a write (POST) then needs the token
 * (header {@value #TOKEN_HEADER} or form field {@code token}) and an Origin (or Referer) of the same host, so that
 * another site cannot make an operator's browser post. Every write records its actor through the operator's
 * set_actor.
 *
 * <p>What it reads is bounded: counts come from topic_overview (exact up to a cap per topic, estimated past it),
 * rates from the per-minute counters of topic_rates, lists are pages of at most
 * {@value #PAGE} rows, and redrive and purge run in transactions of at most {@link Builder#batchSize(int)} rows.
 */
public final class QueueDashboard implements HttpHandler {

    public static final String TOKEN_HEADER = "X-Queue-Token";
    /** Dead letters shown per page. */
    static final int PAGE = 50;
    /** Form bodies are small; a larger one is refused, not read. */
    private static final int MAX_BODY = 64 * 1024;
    /** Namespaces the overview names, read from the database (by name). */
    static final int LISTED_NAMESPACES = 100;
    /** Namespaces the overview shows with their counts when none are configured: each costs a bounded read. */
    static final int DETAILED_NAMESPACES = 10;
    /** Rows per state a header search reads: headers have no index, so it searches a window. */
    static final int SEARCH_WINDOW = 1000;
    /** Namespaces whose counts are kept between requests at most, so that requests naming others cannot grow the map. */
    private static final int CACHED_NAMESPACES = 64;

    private final PostgresOperator operator;
    private final List<String> namespaces;
    private final byte[] token;
    private final String actor;
    private final int batchSize;
    private final String base;
    private final Duration countsMaxAge;
    /** Per namespace, the last topic counts and when they were read: see {@link Builder#countsMaxAge(Duration)}. */
    private final Map<String, Counts> counts = new ConcurrentHashMap<>();

    /** A namespace's topic counts and the last hour of its per-minute rates, as read at {@code readAt}. */
    private record Counts(List<PostgresOperator.TopicStats> topics, List<PostgresOperator.TopicRate> rates,
                          java.util.Set<String> paused, Instant readAt) {

        /** The rates of one topic, or of all with null, per minute slot of the chart. */
        long[][] slots(String topic) {
            return RateChart.slots(topic == null ? rates : rates.stream().filter(r -> r.topic().equals(topic)).toList(), readAt);
        }
    }

    private QueueDashboard(Builder b) {
        this.operator = b.operator;
        this.namespaces = b.namespaces == null ? null : List.copyOf(b.namespaces);
        this.token = b.token == null ? null : b.token.getBytes(StandardCharsets.UTF_8);
        this.actor = b.actor;
        this.batchSize = b.batchSize;
        this.base = b.basePath;
        this.countsMaxAge = b.countsMaxAge;
    }

    public static Builder builder(PostgresOperator operator) {
        return new Builder(InvalidInputException.requireNonNull(operator, "operator", "a PostgresOperator"));
    }

    /** What the dashboard shows and may change. */
    public static final class Builder {
        private final PostgresOperator operator;
        private List<String> namespaces;
        private String token;
        private String actor = "queue-dashboard";
        private int batchSize = 1000;
        private String basePath = "";
        private Duration countsMaxAge = Duration.ofSeconds(5);

        private Builder(PostgresOperator operator) {
            this.operator = operator;
        }

        /**
         * The namespaces the overview shows with their counts. Default: those in the database (the first
         * {@value #DETAILED_NAMESPACES} by name; it names up to {@value #LISTED_NAMESPACES}). Other pages take any
         * namespace by parameter, "default" without one.
         */
        public Builder namespaces(List<String> namespaces) {
            if (namespaces == null || namespaces.isEmpty() || namespaces.stream().anyMatch(java.util.Objects::isNull)) {
                throw new InvalidInputException("namespaces", namespaces, "at least one namespace name");
            }
            this.namespaces = List.copyOf(namespaces);
            return this;
        }

        /** Enables writes for requests that carry this token; at least 16 characters so that it is not guessed. */
        public Builder writeToken(String token) {
            if (token != null && (token.length() < 16 || token.chars().anyMatch(Character::isISOControl))) {
                throw new InvalidInputException("writeToken", token == null ? null : "(" + token.length() + " characters)",
                        "null (read-only) or at least 16 characters without control characters");
            }
            this.token = token;
            return this;
        }

        /** Who the writes are recorded as (the remote address is appended); default "queue-dashboard". */
        public Builder actor(String actor) {
            if (actor == null || actor.isBlank() || actor.length() > 64 || actor.chars().anyMatch(Character::isISOControl)) {
                throw new InvalidInputException("actor", actor, "1 to 64 characters without control characters");
            }
            this.actor = actor;
            return this;
        }

        /** Rows a redrive or purge takes per transaction: 1 to {@link PostgresOperator#MAX_BATCH}; default 1000. */
        public Builder batchSize(int batchSize) {
            if (batchSize < 1 || batchSize > PostgresOperator.MAX_BATCH) {
                throw new InvalidInputException("batchSize", batchSize, "1 to " + PostgresOperator.MAX_BATCH);
            }
            this.batchSize = batchSize;
            return this;
        }

        /** The path the handler is mounted at, such as "/queue"; "" (default) for the root. */
        public Builder basePath(String basePath) {
            if (basePath == null || !(basePath.isEmpty() || basePath.matches("(/[A-Za-z0-9._~-]+)+"))) {
                throw new InvalidInputException("basePath", basePath, "\"\" or a path such as /queue, without a trailing slash");
            }
            this.basePath = basePath;
            return this;
        }

        /**
         * How long the overview and topic pages reuse a namespace's counts and rates (default 5 s; zero: read every
         * time). Each read is bounded, but many open dashboards need not each repeat it per request.
         */
        public Builder countsMaxAge(Duration maxAge) {
            if (maxAge == null || maxAge.isNegative() || maxAge.compareTo(Duration.ofHours(1)) > 0) {
                throw new InvalidInputException("countsMaxAge", maxAge, "0 to 1 hour");
            }
            this.countsMaxAge = maxAge;
            return this;
        }

        public QueueDashboard build() {
            return new QueueDashboard(this);
        }
    }

    /** A standalone server on the port (0: any free one) of every address; stop it with {@link Server#close()}. */
    public Server start(int port) throws IOException {
        return start(null, port);
    }

    /**
     * A standalone server on the address (such as "127.0.0.1" to serve this host only; null or "*": every address)
     * and port (0: any free one); stop it with {@link Server#close()}.
     */
    public Server start(String address, int port) throws IOException {
        if (port < 0 || port > 65535) {
            throw new InvalidInputException("port", port, "0 to 65535");
        }
        InetSocketAddress bind;
        if (address == null || address.equals("*")) {
            bind = new InetSocketAddress(port);
        } else {
            bind = new InetSocketAddress(address, port);
            if (bind.isUnresolved()) {
                throw new InvalidInputException("address", address, "an IP address or host name of this machine, or *");
            }
        }
        HttpServer server;
        try {
            server = HttpServer.create(bind, 0);
        } catch (java.net.BindException e) {
            throw new InvalidInputException("address", (address == null ? "*" : address) + ":" + port,
                    "a free port on an address of this machine (" + e.getMessage() + ")");
        }
        server.createContext(base.isEmpty() ? "/" : base, this);
        // a few threads: each page is a few short queries, and the database is the bound, not the server
        ExecutorService executor = Executors.newFixedThreadPool(4);
        server.setExecutor(executor);
        server.start();
        return new Server(server, executor);
    }

    /** A running standalone dashboard. */
    public static final class Server implements AutoCloseable {
        private final HttpServer server;
        private final ExecutorService executor;

        private Server(HttpServer server, ExecutorService executor) {
            this.server = server;
            this.executor = executor;
        }

        public int port() {
            return server.getAddress().getPort();
        }

        @Override
        public void close() {
            server.stop(0);
            executor.shutdownNow();
        }
    }

    // ------------------------------------------------------------------ dispatch

    /** A response that ends a request early with a status and a message for the operator. */
    static final class Refused extends RuntimeException {
        final int status;

        Refused(int status, String message) {
            super(message);
            this.status = status;
        }
    }

    @Override
    public void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            int status = 200;
            String body;
            try {
                body = route(exchange);
            } catch (Refused e) {
                status = e.status;
                body = page("Refused", "<p class=\"error\">" + esc(e.getMessage()) + "</p>");
            } catch (ScheduleNotFoundException e) {
                status = 404;
                body = page("Not found", "<p class=\"error\">" + esc(e.getMessage()) + "</p>");
            } catch (InvalidInputException e) {
                status = 400;
                body = page("Bad request", "<p class=\"error\">" + esc(e.getMessage()) + "</p>");
            } catch (NamespaceAccessDeniedException e) {
                status = 403;
                body = page("Refused", "<p class=\"error\">" + esc(e.getMessage()) + "</p>");
            } catch (QueueException e) {
                status = 503;
                body = page("Database error", "<p class=\"error\">" + esc(e.getMessage()) + "</p>");
            }
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            var headers = exchange.getResponseHeaders();
            headers.set("Content-Type", "text/html; charset=utf-8");
            // no script, no frames, forms post only here: a stray injected tag can do little
            headers.set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; "
                    + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
            headers.set("X-Content-Type-Options", "nosniff");
            headers.set("Referrer-Policy", "same-origin");
            headers.set("Cache-Control", "no-store");
            if ("HEAD".equals(exchange.getRequestMethod())) {
                // the JDK's server sends no body to a HEAD request and refuses one written
                exchange.sendResponseHeaders(status, -1);
                return;
            }
            exchange.sendResponseHeaders(status, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    private String route(HttpExchange exchange) throws IOException {
        String path = exchange.getRequestURI().getRawPath();
        if (!path.startsWith(base)) {
            throw new Refused(404, "no page " + path);
        }
        path = path.substring(base.length());
        if (path.isEmpty()) {
            path = "/";
        }
        String method = exchange.getRequestMethod();
        Map<String, String> query = parse(exchange.getRequestURI().getRawQuery());
        if ("GET".equals(method) || "HEAD".equals(method)) {
            return switch (path) {
                case "/" -> overview(emptyToNull(query.get("ns")));
                case "/find" -> find(ns(query), emptyToNull(query.get("topic")), emptyToNull(query.get("key")),
                        emptyToNull(query.get("header")));
                case "/topic" -> topic(ns(query), required(query, "topic"));
                case "/message" -> message(ns(query), id(query.get("id")));
                case "/dead" -> deadLetters(ns(query), query.get("topic"), after(query.get("after")));
                case "/dead/confirm" -> confirm(ns(query), query.get("action"), query.get("topic"), query.get("id"));
                case "/schedules" -> schedules(ns(query));
                case "/workers" -> workers();
                case "/health" -> health();
                default -> throw new Refused(404, "no page " + path);
            };
        }
        if ("POST".equals(method)) {
            Map<String, String> form = form(exchange);
            authorize(exchange, form);
            String who = actor + " from " + exchange.getRemoteAddress().getAddress().getHostAddress();
            String ns = ns(form);
            return switch (path) {
                case "/dead/redrive" -> redrive(ns, form, who);
                case "/dead/purge" -> purge(ns, form, who);
                case "/schedules/pause" -> scheduleChange(ns, required(form, "name"), "pause", who);
                case "/schedules/resume" -> scheduleChange(ns, required(form, "name"), "resume", who);
                case "/schedules/run" -> scheduleChange(ns, required(form, "name"), "run", who);
                case "/topic/pause" -> topicChange(ns, required(form, "topic"), true, who);
                case "/topic/resume" -> topicChange(ns, required(form, "topic"), false, who);
                case "/message/cancel" -> cancel(ns, id(form.get("id")), who);
                default -> throw new Refused(404, "no action " + path);
            };
        }
        exchange.getResponseHeaders().set("Allow", "GET, HEAD, POST");
        throw new Refused(405, "method " + method + " is not allowed");
    }

    /** Token first (read-only without one), then same origin: a page of another site must not post here. */
    private void authorize(HttpExchange exchange, Map<String, String> form) {
        if (token == null) {
            throw new Refused(403, "the dashboard is read-only: no write token is configured");
        }
        String given = exchange.getRequestHeaders().getFirst(TOKEN_HEADER);
        if (given == null) {
            given = form.get("token");
        }
        if (given == null || given.isEmpty()) {
            throw new Refused(403, "a write needs the write token (form field token or header " + TOKEN_HEADER + ")");
        }
        if (!MessageDigest.isEqual(token, given.getBytes(StandardCharsets.UTF_8))) {
            throw new Refused(403, "the write token is wrong");
        }
        String host = exchange.getRequestHeaders().getFirst("Host");
        String origin = exchange.getRequestHeaders().getFirst("Origin");
        String source = origin != null && !"null".equals(origin) ? origin : exchange.getRequestHeaders().getFirst("Referer");
        if (host == null || source == null) {
            throw new Refused(403, "a write needs an Origin or Referer header of this host (cross-site protection)");
        }
        String sourceHost;
        try {
            sourceHost = URI.create(source).getRawAuthority();
        } catch (IllegalArgumentException e) {
            throw new Refused(403, "cross-site write refused: unreadable origin " + source);
        }
        if (!host.equalsIgnoreCase(sourceHost)) {
            throw new Refused(403, "cross-site write refused: origin " + source + " is not this host " + host);
        }
    }

    // ------------------------------------------------------------------ pages

    /** The namespace's topic counts and rates, read again once older than countsMaxAge. */
    private Counts counts(String ns) {
        Instant now = Instant.now();
        if (!counts.containsKey(ns) && counts.size() >= CACHED_NAMESPACES) {
            return read(ns, now);
        }
        Counts cached = counts.get(ns);
        if (cached != null && cached.readAt().plus(countsMaxAge).isAfter(now)) {
            return cached;
        }
        Counts fresh = read(ns, now);
        counts.put(ns, fresh);
        return fresh;
    }

    private Counts read(String ns, Instant now) {
        java.util.Set<String> paused = new java.util.HashSet<>();
        operator.pausedTopics(ns).forEach(p -> paused.add(p.topic()));
        return new Counts(operator.topics(ns), operator.topicRates(ns, RateChart.MINUTES), paused, now);
    }

    private String overview(String selected) {
        // the database's namespaces, walked from an index and capped: a tenant's login sees its own only
        List<String> known = operator.namespaces(LISTED_NAMESPACES);
        List<String> shown = selected != null ? List.of(selected) : namespaces != null ? namespaces
                : known.isEmpty() ? List.of("default") : known.subList(0, Math.min(DETAILED_NAMESPACES, known.size()));
        StringBuilder html = new StringBuilder("<p class=\"namespaces\">Namespaces in the database");
        html.append(known.size() == LISTED_NAMESPACES ? " (the first " + LISTED_NAMESPACES + " by name)" : "").append(": ");
        if (known.isEmpty()) {
            html.append("none yet");
        }
        for (String ns : known) {
            html.append("<a href=\"").append(link("/", "ns", ns)).append("\">").append(esc(ns)).append("</a> ");
        }
        html.append("</p>");
        for (String ns : shown) {
            Counts c = counts(ns);
            // the namespace's totals are the sums of its topics': one count of the messages instead of two
            long pending = c.topics().stream().mapToLong(PostgresOperator.TopicStats::pending).sum();
            long running = c.topics().stream().mapToLong(PostgresOperator.TopicStats::running).sum();
            long dead = c.topics().stream().mapToLong(PostgresOperator.TopicStats::dead).sum();
            long completed = c.topics().stream().mapToLong(PostgresOperator.TopicStats::completed).sum();
            String about = c.topics().stream().allMatch(PostgresOperator.TopicStats::exact) ? "" : "~";
            long[][] slots = c.slots(null);
            html.append("<section><h2>Namespace ").append(esc(ns)).append("</h2>")
                    .append("<p class=\"stats\">pending <b>").append(about).append(pending).append("</b>, running <b>")
                    .append(about).append(running).append("</b>, dead <b>").append(about).append(dead).append("</b>, completed ")
                    .append(completed).append(", topics ").append(c.topics().size()).append(" <small>(counted at ")
                    .append(time(c.readAt())).append(about.isEmpty() ? "" : "; ~: an estimate past "
                            + PostgresOperator.EXACT_UP_TO + " per topic").append(")</small></p>")
                    .append("<p class=\"hour\">last hour: in <b class=\"in\">").append(total(slots[0]))
                    .append("</b>, out <b class=\"out\">").append(total(slots[1])).append("</b></p>")
                    .append(RateChart.svg("messages in and out per minute, last hour, namespace " + ns, slots))
                    .append(topicTable(ns, c))
                    .append("<p><a href=\"").append(link("/dead", "ns", ns)).append("\">dead letters</a> · <a href=\"")
                    .append(link("/schedules", "ns", ns)).append("\">schedules</a></p>")
                    .append("<form method=\"get\" action=\"").append(esc(base + "/message")).append("\" class=\"find\">")
                    .append("<input type=\"hidden\" name=\"ns\" value=\"").append(esc(ns)).append("\">")
                    .append("<label>Message id <input name=\"id\" inputmode=\"numeric\" required></label> ")
                    .append("<button type=\"submit\">Explain</button></form>")
                    .append(searchForms(ns, null)).append("</section>");
        }
        int warnings = operator.health(null).size();
        html.append("<p><a href=\"").append(esc(base + "/health")).append("\">health: ")
                .append(warnings == 0 ? "no warnings" : warnings + " warning" + (warnings == 1 ? "" : "s"))
                .append("</a> · <a href=\"").append(esc(base + "/workers")).append("\">workers</a></p>");
        return page("Overview", html.toString());
    }

    private String topicTable(String ns, Counts c) {
        return topicTable(ns, c, c.topics());
    }

    private String topicTable(String ns, Counts c, List<PostgresOperator.TopicStats> topics) {
        if (topics.isEmpty()) {
            return "<p>No topics.</p>";
        }
        StringBuilder html = new StringBuilder("<table class=\"topics\"><tr><th>Topic</th><th>Pending</th><th>Running</th>"
                + "<th>Dead</th><th>Completed</th><th title=\"messages published in the last full minute\">In/min</th>"
                + "<th title=\"messages completed in the last full minute\">Out/min</th><th>In (hour)</th><th>Out (hour)</th>"
                + "<th>Oldest due</th><th>Live subscribers</th></tr>");
        for (PostgresOperator.TopicStats t : topics) {
            long[][] slots = c.slots(t.topic());
            String about = t.exact() ? "" : "~";
            html.append("<tr id=\"topic-").append(esc(t.topic())).append("\"><td><a href=\"")
                    .append(link("/topic", "ns", ns, "topic", t.topic())).append("\">")
                    .append(esc(t.topic())).append("</a>").append(c.paused().contains(t.topic()) ? " <span class=\"paused\">paused</span>" : "")
                    .append("</td><td class=\"pending\">").append(about).append(t.pending())
                    .append("</td><td>").append(about).append(t.running()).append("</td><td>").append(about).append(t.dead())
                    .append("</td><td>").append(t.completed())
                    .append("</td><td class=\"in-minute\">").append(slots[0][RateChart.MINUTES - 2])
                    .append("</td><td class=\"out-minute\">").append(slots[1][RateChart.MINUTES - 2])
                    .append("</td><td class=\"in-hour\">").append(total(slots[0]))
                    .append("</td><td class=\"out-hour\">").append(total(slots[1]))
                    .append("</td><td>").append(time(t.oldestDueAt())).append("</td><td>").append(t.liveSubscribers()).append("</td></tr>");
        }
        return html.append("</table>").toString();
    }

    private static long total(long[] slots) {
        long sum = 0;
        for (long n : slots) {
            sum += n;
        }
        return sum;
    }

    private String topic(String ns, String topic) {
        Counts c = counts(ns);
        PostgresOperator.TopicStats stats = c.topics().stream().filter(t -> t.topic().equals(topic)).findFirst()
                .orElseThrow(() -> new Refused(404, "no topic " + topic + " in namespace " + ns));
        boolean paused = c.paused().contains(topic);
        String flow = "<p class=\"flow\">" + (paused ? "Paused: no message of this topic starts until it is resumed; running ones finish. "
                : "Running. ") + "<form method=\"post\" class=\"" + (paused ? "resume" : "pause") + "\" action=\""
                + esc(base + "/topic/" + (paused ? "resume" : "pause")) + "\">" + hidden("ns", ns) + hidden("topic", topic) + tokenField()
                + "<button type=\"submit\">" + (paused ? "resume" : "pause") + " topic</button></form></p>";
        return page("Topic " + topic + " (" + ns + ")", topicTable(ns, c, List.of(stats)) + flow
                + searchForms(ns, topic)
                + RateChart.svg("messages in and out per minute, last hour, topic " + topic, c.slots(topic))
                + deadTable(ns, topic, operator.deadLetters(ns, topic, 0, PAGE))
                + "<p><a href=\"" + link("/dead", "ns", ns, "topic", topic) + "\">all dead letters of " + esc(topic) + "</a></p>");
    }

    private String message(String ns, long id) {
        PostgresOperator.Explanation e = operator.explain(ns, id);
        Map<String, Object> facts = new LinkedHashMap<>();
        facts.put("topic", e.topic());
        facts.put("state", e.state());
        facts.put("now", e.now());
        facts.put("run at", e.runAt());
        facts.put("attempts", e.attempts() == null ? null : e.attempts() + " of " + e.maxAttempts());
        facts.put("last error", e.lastError());
        facts.put("worker", e.worker());
        facts.put("lease until", e.leaseUntil());
        facts.put("worker alive", e.workerAlive());
        facts.put("live subscribers", e.liveSubscribers());
        facts.put("unique key", e.uniqueKey());
        facts.put("key held by", e.keyHeldBy());
        facts.put("failed at", e.failedAt());
        facts.put("completed at", e.completedAt());
        facts.put("attempt history", e.attemptHistory());
        // shown only when the history lost some: a zero would be noise on every message
        facts.put("older attempts not kept", e.attemptsNotKept() == null || e.attemptsNotKept() == 0 ? null : e.attemptsNotKept());
        StringBuilder html = new StringBuilder("<p class=\"verdict\">").append(esc(e.verdict())).append("</p><dl class=\"facts\">");
        facts.forEach((k, v) -> {
            if (v != null) {
                html.append("<dt>").append(esc(k)).append("</dt><dd>").append(esc(String.valueOf(v))).append("</dd>");
            }
        });
        html.append("</dl>");
        if ("pending".equals(e.state()) || "running".equals(e.state())) {
            html.append("<form method=\"post\" class=\"cancel\" action=\"").append(esc(base + "/message/cancel")).append("\">")
                    .append(hidden("ns", ns)).append(hidden("id", String.valueOf(id))).append(tokenField())
                    .append("<button type=\"submit\">cancel message</button></form> <small>(it leaves the queue without running")
                    .append("running".equals(e.state()) ? "; its handler is told to stop and its result will not count" : "")
                    .append(")</small>");
        }
        return page("Message " + id + " (" + ns + ")", html.toString());
    }

    /** The search forms: by unique key (every topic, or this one), and by header within one topic's window. */
    private String searchForms(String ns, String topic) {
        StringBuilder html = new StringBuilder("<div class=\"search\"><form method=\"get\" class=\"find-key\" action=\"")
                .append(esc(base + "/find")).append("\">").append(hidden("ns", ns)).append(topic == null ? "" : hidden("topic", topic))
                .append("<label>Unique key <input name=\"key\" required></label> <button type=\"submit\">Find</button></form>");
        if (topic != null) {
            html.append("<form method=\"get\" class=\"find-header\" action=\"").append(esc(base + "/find")).append("\">")
                    .append(hidden("ns", ns)).append(hidden("topic", topic))
                    .append("<label>Header <input name=\"header\" placeholder=\"name=value\" required></label> ")
                    .append("<button type=\"submit\">Find</button></form>");
        }
        return html.append("</div>").toString();
    }

    /** A bounded search by unique key or by header ("name" or "name=value", within one topic's window). */
    private String find(String ns, String topic, String key, String header) {
        if ((key == null) == (header == null)) {
            throw new InvalidInputException(key == null ? "key" : "header", key == null ? null : header,
                    "exactly one of key (a unique key) and header (name or name=value)");
        }
        List<PostgresOperator.FoundMessage> rows;
        String searched;
        String title;
        if (key != null) {
            rows = operator.findByUniqueKey(ns, topic, key, PAGE);
            title = "Unique key " + key + " (" + ns + ")";
            searched = "Searched by unique key " + (topic == null ? "in every topic (up to " + PostgresOperator.MAX_TOPICS + ")"
                    : "in topic " + topic) + ": the live message holding it, and the dead letters and archived messages that "
                    + "had it (archived only when the queue archives completed messages).";
        } else {
            if (topic == null) {
                throw new InvalidInputException("topic", null, "a topic: a header search reads a window of one topic's messages");
            }
            int eq = header.indexOf('=');
            String name = eq < 0 ? header : header.substring(0, eq);
            String value = eq < 0 ? null : header.substring(eq + 1);
            rows = operator.findByHeader(ns, topic, name, value, SEARCH_WINDOW, PAGE);
            title = "Header " + header + " (" + ns + ")";
            searched = "Searched only a window of topic " + topic + ", since headers have no index: the next " + SEARCH_WINDOW
                    + " pending messages in claim order, up to " + SEARCH_WINDOW + " running ones, and the newest " + SEARCH_WINDOW
                    + " dead letters and archived messages. A message outside that window is not found.";
        }
        StringBuilder html = new StringBuilder("<p class=\"searched\">").append(esc(searched))
                .append(rows.size() == PAGE ? esc(" Showing the first " + PAGE + " matches.") : "").append("</p>");
        if (rows.isEmpty()) {
            html.append("<p class=\"empty\">No message found.</p>");
        } else {
            html.append("<table class=\"found\"><tr><th>Id</th><th>Topic</th><th>State</th><th>Unique key</th><th>Headers</th>"
                    + "<th>Attempts</th><th>Published</th><th>Failed or completed</th><th>Last error</th></tr>");
            for (PostgresOperator.FoundMessage m : rows) {
                String id = String.valueOf(m.id());
                html.append("<tr id=\"found-").append(id).append("\"><td><a href=\"").append(link("/message", "ns", ns, "id", id))
                        .append("\">").append(id).append("</a></td><td>").append(esc(m.topic())).append("</td><td>").append(esc(m.state()))
                        .append("</td><td>").append(esc(m.uniqueKey())).append("</td><td><code>").append(esc(m.headers()))
                        .append("</code></td><td>").append(m.attempts()).append(" of ").append(m.maxAttempts()).append("</td><td>")
                        .append(time(m.publishedAt())).append("</td><td>").append(time(m.finishedAt())).append("</td><td>")
                        .append(esc(m.lastError())).append("</td></tr>");
            }
            html.append("</table>");
        }
        return page(title, html.toString());
    }

    private String topicChange(String ns, String topic, boolean pause, String who) {
        boolean changed = pause ? operator.pauseTopic(ns, topic, who) : operator.resumeTopic(ns, topic, who);
        counts.remove(ns);
        String result = pause ? (changed ? "Paused topic " + topic + "." : "Topic " + topic + " was already paused.")
                : (changed ? "Resumed topic " + topic + "." : "Topic " + topic + " was not paused.");
        return page("Topic " + topic, "<p class=\"result\">" + esc(result) + "</p><p><a href=\"" + link("/topic", "ns", ns, "topic", topic)
                + "\">back to the topic</a></p>");
    }

    private String cancel(String ns, long id, String who) {
        boolean cancelled = operator.cancel(ns, id, who);
        counts.remove(ns);
        String result = cancelled ? "Cancelled message " + id + "." : "Message " + id + " was not pending or running: nothing cancelled.";
        return page("Message " + id, "<p class=\"result\">" + esc(result) + "</p><p><a href=\"" + link("/message", "ns", ns, "id",
                String.valueOf(id)) + "\">the message</a></p>");
    }

    private String deadLetters(String ns, String topic, long after) {
        List<PostgresOperator.DeadLetter> rows = operator.deadLetters(ns, topic, after, PAGE);
        StringBuilder html = new StringBuilder(deadTable(ns, topic, rows));
        if (rows.size() == PAGE) {
            html.append("<p><a href=\"").append(link("/dead", "ns", ns, "topic", topic, "after", String.valueOf(rows.get(PAGE - 1).id())))
                    .append("\">next page</a></p>");
        }
        if (!rows.isEmpty()) {
            String what = topic == null ? "all dead letters of namespace " + ns : "all dead letters of topic " + topic;
            html.append("<p>").append(esc(what)).append(": <a href=\"")
                    .append(link("/dead/confirm", "ns", ns, "action", "redrive", "topic", topic)).append("\">redrive</a> · <a href=\"")
                    .append(link("/dead/confirm", "ns", ns, "action", "purge", "topic", topic)).append("\">purge</a></p>");
        }
        return page("Dead letters " + (topic == null ? "" : "of " + topic + " ") + "(" + ns + ")", html.toString());
    }

    private String deadTable(String ns, String topic, List<PostgresOperator.DeadLetter> rows) {
        if (rows.isEmpty()) {
            return "<p class=\"empty\">No dead letters" + (topic == null ? "" : " of topic " + esc(topic)) + ".</p>";
        }
        StringBuilder html = new StringBuilder("<table class=\"dead\"><tr><th>Id</th><th>Topic</th><th>Attempts</th>"
                + "<th>Last error</th><th>Failed at</th><th>Failed by</th><th></th></tr>");
        for (PostgresOperator.DeadLetter d : rows) {
            String id = String.valueOf(d.id());
            html.append("<tr id=\"dead-").append(id).append("\"><td><a href=\"").append(link("/message", "ns", ns, "id", id)).append("\">")
                    .append(id).append("</a></td><td>").append(esc(d.topic())).append("</td><td>").append(d.attempts()).append(" of ")
                    .append(d.maxAttempts()).append("</td><td>").append(esc(d.lastError())).append("</td><td>").append(time(d.failedAt()))
                    .append("</td><td>").append(esc(d.failedBy())).append("</td><td><a class=\"redrive\" href=\"")
                    .append(link("/dead/confirm", "ns", ns, "action", "redrive", "id", id)).append("\">redrive</a> <a class=\"purge\" href=\"")
                    .append(link("/dead/confirm", "ns", ns, "action", "purge", "id", id)).append("\">purge</a></td></tr>");
        }
        return html.append("</table>").toString();
    }

    /** The confirmation of a redrive or purge: what it takes, counted, and the form that does it. */
    private String confirm(String ns, String action, String topic, String id) {
        if (!"redrive".equals(action) && !"purge".equals(action)) {
            throw new InvalidInputException("action", action, "redrive or purge");
        }
        List<Long> ids = id == null ? null : List.of(id(id));
        // capped: the confirmation is a page like any other, it must not count a million dead letters per request
        long count = operator.countDeadLettersUpTo(ns, topic, ids, PostgresOperator.EXACT_UP_TO);
        String counted = count > PostgresOperator.EXACT_UP_TO ? "more than " + PostgresOperator.EXACT_UP_TO + " messages"
                : count + " message" + (count == 1 ? "" : "s");
        String what = ids != null ? "dead letter " + id : topic != null ? "the dead letters of topic " + topic
                : "every dead letter of namespace " + ns;
        StringBuilder html = new StringBuilder("<p class=\"count\">")
                .append(esc(action.substring(0, 1).toUpperCase() + action.substring(1) + " " + what + ": " + counted
                        + ", in transactions of at most " + batchSize + "."))
                .append("</p><form method=\"post\" action=\"").append(esc(base + "/dead/" + action)).append("\">")
                .append(hidden("ns", ns)).append(topic == null ? "" : hidden("topic", topic)).append(id == null ? "" : hidden("id", id))
                .append(tokenField()).append("<button type=\"submit\" name=\"confirm\" value=\"yes\">Confirm ").append(esc(action))
                .append("</button></form><p><a href=\"").append(link("/dead", "ns", ns)).append("\">cancel</a></p>");
        return page("Confirm " + action, html.toString());
    }

    private String redrive(String ns, Map<String, String> form, String who) {
        confirmed(form);
        String id = form.get("id");
        PostgresOperator.Redriven r = operator.redriveDeadLetters(ns, emptyToNull(form.get("topic")),
                id == null ? null : List.of(id(id)), batchSize, who);
        return page("Redriven", "<p class=\"result\">Redrove " + r.redriven() + " of " + r.examined()
                + " dead letters examined (those whose unique key is held stay dead).</p>" + back(ns));
    }

    private String purge(String ns, Map<String, String> form, String who) {
        confirmed(form);
        String id = form.get("id");
        long n = operator.purgeDeadLetters(ns, emptyToNull(form.get("topic")), id == null ? null : List.of(id(id)), batchSize, who);
        return page("Purged", "<p class=\"result\">Purged " + n + " dead letters.</p>" + back(ns));
    }

    private static void confirmed(Map<String, String> form) {
        if (!"yes".equals(form.get("confirm"))) {
            throw new InvalidInputException("confirm", form.get("confirm"), "yes, from the confirmation page");
        }
    }

    private String schedules(String ns) {
        List<PostgresOperator.ScheduleInfo> rows = operator.schedules(ns);
        if (rows.isEmpty()) {
            return page("Schedules (" + ns + ")", "<p class=\"empty\">No schedules.</p>");
        }
        StringBuilder html = new StringBuilder("<table class=\"schedules\"><tr><th>Name</th><th>Topic</th><th>When</th><th>State</th>"
                + "<th>Next run</th><th>Last run</th><th></th></tr>");
        for (PostgresOperator.ScheduleInfo s : rows) {
            String when = s.cron() != null ? "cron " + s.cron() : "every " + s.every();
            html.append("<tr id=\"schedule-").append(esc(s.name())).append("\"><td>").append(esc(s.name())).append("</td><td>")
                    .append(esc(s.topic())).append("</td><td>").append(esc(when)).append(s.timeZone() == null ? "" : " " + esc(s.timeZone()))
                    .append("</td><td class=\"state\">").append(s.paused() ? "paused" : "active").append("</td><td>")
                    .append(time(s.nextRunAt())).append("</td><td>").append(time(s.lastRunAt())).append("</td><td>")
                    .append(scheduleForm(ns, s.name(), s.paused() ? "resume" : "pause"))
                    .append(scheduleForm(ns, s.name(), "run")).append("</td></tr>");
        }
        return page("Schedules (" + ns + ")", html.append("</table>").toString());
    }

    private String scheduleForm(String ns, String name, String action) {
        return "<form method=\"post\" class=\"" + action + "\" action=\"" + esc(base + "/schedules/" + action) + "\">"
                + hidden("ns", ns) + hidden("name", name) + tokenField()
                + "<button type=\"submit\">" + ("run".equals(action) ? "run now" : action) + "</button></form>";
    }

    private String scheduleChange(String ns, String name, String action, String who) {
        String result = switch (action) {
            case "pause" -> operator.pauseSchedule(ns, name, who) ? "Paused schedule " + name + "." : "Schedule " + name + " was already paused.";
            case "resume" -> operator.resumeSchedule(ns, name, who) ? "Resumed schedule " + name + "." : "Schedule " + name + " was not paused.";
            default -> {
                Long id = operator.runScheduleNow(ns, name, who);
                yield id == null ? "Schedule " + name + " did not fire: a live message holds this firing's key."
                        : "Schedule " + name + " fired message " + id + ".";
            }
        };
        return page("Schedule " + name, "<p class=\"result\">" + esc(result) + "</p><p><a href=\"" + link("/schedules", "ns", ns)
                + "\">schedules</a></p>");
    }

    private String workers() {
        List<PostgresOperator.Worker> rows = operator.workers(null);
        if (rows.isEmpty()) {
            return page("Workers", "<p class=\"empty\">No workers heartbeat.</p>");
        }
        StringBuilder html = new StringBuilder("<table class=\"workers\"><tr><th>Id</th><th>Status</th><th>Host</th><th>Pid</th>"
                + "<th>Version</th><th>Namespaces</th><th>Topics</th><th>In flight</th><th>Heartbeat</th></tr>");
        for (PostgresOperator.Worker w : rows) {
            html.append("<tr><td>").append(esc(w.id())).append("</td><td>").append(esc(w.status())).append("</td><td>")
                    .append(esc(w.host())).append("</td><td>").append(w.pid()).append("</td><td>").append(esc(w.version()))
                    .append("</td><td>").append(esc(String.join(" ", w.namespaces()))).append("</td><td>")
                    .append(esc(String.join(" ", w.topics()))).append("</td><td>").append(w.inFlight()).append(" of ")
                    .append(w.concurrency()).append("</td><td>").append(time(w.heartbeatAt())).append("</td></tr>");
        }
        return page("Workers", html.append("</table>").toString());
    }

    private String health() {
        List<PostgresOperator.Warning> rows = operator.health(null);
        if (rows.isEmpty()) {
            return page("Health", "<p class=\"healthy\">Healthy: no warnings.</p>");
        }
        StringBuilder html = new StringBuilder("<ul class=\"warnings\">");
        for (PostgresOperator.Warning w : rows) {
            String where = w.namespace() == null ? "" : " (" + w.namespace() + (w.topic() == null ? "" : "/" + w.topic()) + ")";
            html.append("<li><b>").append(esc(w.code() + where)).append("</b>: ").append(esc(w.message()))
                    .append("<br>evidence: <code>").append(esc(w.evidence())).append("</code><br>to do: ").append(esc(w.advice()))
                    .append("</li>");
        }
        return page("Health", html.append("</ul>").toString());
    }

    // ------------------------------------------------------------------ html and parameters

    private String page(String title, String body) {
        return "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + esc(title) + " · queue</title>"
                + "<style>body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse;margin:.5em 0}"
                + "td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}th{background:#f3f3f3}nav a{margin-right:1em}"
                + ".verdict{font-size:1.2em;font-weight:600}.error{color:#b00020;font-weight:600}dt{font-weight:600}"
                + "dd{margin:0 0 .4em 1.5em}form{display:inline;margin-right:.4em}</style></head><body><nav>"
                + "<a href=\"" + esc(base + "/") + "\">Overview</a><a href=\"" + esc(base + "/workers") + "\">Workers</a>"
                + "<a href=\"" + esc(base + "/health") + "\">Health</a>" + (token == null ? "<span>read-only</span>" : "")
                + "</nav><h1>" + esc(title) + "</h1>" + body + "</body></html>";
    }

    private String tokenField() {
        return token == null ? "" : "<label>token <input type=\"password\" name=\"token\" autocomplete=\"off\"></label> ";
    }

    private static String hidden(String name, String value) {
        return "<input type=\"hidden\" name=\"" + esc(name) + "\" value=\"" + esc(value) + "\">";
    }

    private String back(String ns) {
        return "<p><a href=\"" + link("/dead", "ns", ns) + "\">dead letters</a></p>";
    }

    /** An escaped href under the base path; null values are left out. */
    private String link(String path, String... pairs) {
        StringBuilder url = new StringBuilder(base).append(path);
        char sep = '?';
        for (int i = 0; i < pairs.length; i += 2) {
            if (pairs[i + 1] != null) {
                url.append(sep).append(pairs[i]).append('=').append(URLEncoder.encode(pairs[i + 1], StandardCharsets.UTF_8));
                sep = '&';
            }
        }
        return esc(url.toString());
    }

    private static String time(Instant instant) {
        return instant == null ? "" : esc(instant.toString());
    }

    static String esc(String s) {
        if (s == null) {
            return "";
        }
        StringBuilder out = new StringBuilder(s.length() + 16);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '&' -> out.append("&amp;");
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '"' -> out.append("&quot;");
                case '\'' -> out.append("&#39;");
                default -> out.append(c);
            }
        }
        return out.toString();
    }

    private String ns(Map<String, String> params) {
        String ns = params.get("ns");
        return ns != null && !ns.isEmpty() ? ns : namespaces != null ? namespaces.get(0) : "default";
    }

    private static String required(Map<String, String> params, String name) {
        String value = params.get(name);
        if (value == null || value.isEmpty()) {
            throw new InvalidInputException(name, value, "a value for parameter " + name);
        }
        return value;
    }

    private static String emptyToNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    private static long id(String value) {
        try {
            long id = Long.parseLong(value == null ? "" : value.trim());
            if (id > 0) {
                return id;
            }
        } catch (NumberFormatException e) {
            // reported below with the value
        }
        throw new InvalidInputException("id", value, "a message id, 1 or more");
    }

    private static long after(String value) {
        if (value == null || value.isEmpty()) {
            return 0;
        }
        try {
            long after = Long.parseLong(value);
            if (after >= 0) {
                return after;
            }
        } catch (NumberFormatException e) {
            // reported below with the value
        }
        throw new InvalidInputException("after", value, "0 or a message id");
    }

    private static Map<String, String> form(HttpExchange exchange) throws IOException {
        String type = exchange.getRequestHeaders().getFirst("Content-Type");
        if (type != null && !type.toLowerCase().startsWith("application/x-www-form-urlencoded")) {
            throw new Refused(415, "content type " + type + " is not application/x-www-form-urlencoded");
        }
        try (InputStream in = exchange.getRequestBody()) {
            byte[] body = in.readNBytes(MAX_BODY + 1);
            if (body.length > MAX_BODY) {
                throw new Refused(413, "a form body of more than " + MAX_BODY + " bytes");
            }
            return parse(new String(body, StandardCharsets.UTF_8));
        }
    }

    private static Map<String, String> parse(String raw) {
        Map<String, String> params = new LinkedHashMap<>();
        if (raw == null || raw.isEmpty()) {
            return params;
        }
        List<String> pairs = new ArrayList<>(List.of(raw.split("&")));
        for (String pair : pairs) {
            int eq = pair.indexOf('=');
            String key = eq < 0 ? pair : pair.substring(0, eq);
            String value = eq < 0 ? "" : pair.substring(eq + 1);
            try {
                params.putIfAbsent(URLDecoder.decode(key, StandardCharsets.UTF_8), URLDecoder.decode(value, StandardCharsets.UTF_8));
            } catch (IllegalArgumentException e) {
                throw new InvalidInputException("parameter", pair, "URL-encoded name=value");
            }
        }
        return params;
    }
}
