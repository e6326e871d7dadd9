package dev.queue.postgres;

import dev.queue.postgres.HostileValues.Value;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * One role's pass of {@link HostileInputTest} over one migrated schema: every function and procedure of the schema
 * without a leading underscore that the role may execute (read from pg_proc, so a new one is covered without being
 * listed), called once with baselines only and then once per parameter and hostile value of its type, the other
 * arguments at their baselines (parameters with a default left out). Each call runs alone, in a transaction of its
 * own that is rolled back (so every call meets the same fixture: a leased message, a dead letter, a schedule, a
 * policy, in 'acme' and in 'globex'), under a statement and a lock timeout, and is classified: success, typed error
 * (SQLSTATE class QU) or raw error (anything else, timeouts and exhaustion included). A success may hold at most
 * 1,000 locks, and a tenant's success must leave every row of other namespaces as it was (read inside the call's
 * transaction). After each call no lock is left held by the calling session and the server answers; after each
 * function's calls (typed errors included) every table is as it was (a digest of each table's rows, read by the
 * superuser: as every call is rolled back, a difference is a change that outlived a call of that function).
 */
final class HostileInputRun {

    static final String SCHEMA = "queue";
    /** Per call: a hostile value must be refused quickly, and must not wait on a lock. */
    private static final String SESSION_OPTIONS = "-c statement_timeout=5s -c lock_timeout=1s";
    private static final String OWN_NAMESPACE = "acme";
    /** The bound of docs/sql.md: no single call takes more locks. */
    private static final int MAX_LOCKS = 1000;
    /** Held by every run's calls (shared) and by the calls that must run alone (exclusive); fair, so these get in. */
    private static final ReentrantReadWriteLock CLUSTER = new ReentrantReadWriteLock(true);
    /** A function of the superuser's (outside the schema under test) digesting the rows of other namespaces. */
    private static final String PROBE = "hostile_probe.other_namespaces";

    record Parameter(String name, String type, boolean hasDefault) {
    }

    record Routine(String name, String signature, boolean procedure, boolean callable, List<Parameter> parameters) {
    }

    /** A raw error: what to fix. */
    record Raw(String function, String parameter, String value, String sqlState, String message) {
        String line() {
            return function + "(" + parameter + " := " + value + "): " + sqlState + " " + message;
        }
    }

    /** What one role's pass found. */
    record Result(String role, int functions, int notExecutable, int calls, int successes, int typed, List<Raw> raws,
                  List<String> violations, List<String> unconstructible, List<String> unknownTypes,
                  List<String> refusedBaselines, List<String> acceptedBadNames, List<String> slowest, long millis) {

        String summary() {
            return String.format("hostile input as %s: %d calls over %d functions (%d not executable), %d successes, "
                            + "%d typed errors, %d raw errors, %d other violations, %.1f s",
                    role, calls, functions, notExecutable, successes, typed, raws.size(), violations.size(), millis / 1000.0);
        }

        /** The raw errors grouped by function and SQLSTATE, and whatever else a reader fixing them needs. */
        String report() {
            StringBuilder out = new StringBuilder("== ").append(summary()).append('\n');
            Map<String, Map<String, List<Raw>>> grouped = new TreeMap<>();
            for (Raw raw : raws) {
                grouped.computeIfAbsent(raw.function(), f -> new TreeMap<>())
                        .computeIfAbsent(raw.sqlState(), s -> new ArrayList<>()).add(raw);
            }
            grouped.forEach((function, byState) -> {
                out.append(function).append('\n');
                byState.forEach((state, list) -> {
                    out.append("  ").append(state).append(" (").append(list.size()).append(")\n");
                    list.forEach(raw -> out.append("    ").append(raw.parameter()).append(" := ").append(raw.value())
                            .append(": ").append(raw.message()).append('\n'));
                });
            });
            section(out, "other violations", violations);
            section(out, "successes with a name that breaks the name rule (not asserted: the rule is the issue's)",
                    acceptedBadNames);
            section(out, "baseline calls refused (hostile values of these functions stop at the same check)", refusedBaselines);
            section(out, "values the server could not build (not the function's fault, skipped)", unconstructible);
            section(out, "parameter types without hostile values (add them to HostileValues)", unknownTypes);
            section(out, "slowest calls", slowest);
            return out.toString();
        }

        private static void section(StringBuilder out, String title, List<String> lines) {
            if (!lines.isEmpty()) {
                out.append("-- ").append(title).append(" (").append(lines.size()).append(")\n");
                lines.forEach(line -> out.append("  ").append(line).append('\n'));
            }
        }
    }

    private final String role;
    private final DataSource superuser;
    private final PGSimpleDataSource caller;
    private final String callerRole;
    private final boolean tenant;
    private final String tenantLogin;
    private final String globexLogin;

    private Connection callerConnection;
    private Connection superConnection;
    private long leasedId;
    private long leaseToken;
    private long deadId;
    private List<Routine> routines;
    private String digestSql;
    private Map<String, String> digest;
    private String otherNamespaces;

    private int calls;
    private int successes;
    private int typed;
    private final List<Raw> raws = new ArrayList<>();
    private final List<String> violations = new ArrayList<>();
    private final TreeSet<String> unconstructible = new TreeSet<>();
    private final TreeSet<String> unknownTypes = new TreeSet<>();
    private final List<String> refusedBaselines = new ArrayList<>();
    private final List<String> acceptedBadNames = new ArrayList<>();
    private final List<Map.Entry<String, Long>> timings = new ArrayList<>();

    /**
     * @param role        the name in the summary
     * @param database    the database of the schema copy (migrated, roles set up by {@link #prepare})
     * @param login       the login to call as, or null for the superuser of the tests
     * @param password    its password
     * @param tenant      whether the login is a tenant of 'acme' only (then other namespaces must not change)
     * @param tenantLogin the login granted 'acme' in this database (grant_tenant's baseline role)
     * @param globexLogin the login granted 'globex'
     */
    HostileInputRun(String role, String database, String login, String password, boolean tenant, String tenantLogin,
                    String globexLogin) {
        this.role = role;
        this.superuser = PostgresTestServer.databaseSource(database);
        this.tenant = tenant;
        this.tenantLogin = tenantLogin;
        this.globexLogin = globexLogin;
        PGSimpleDataSource ds = new PGSimpleDataSource();
        if (login == null) {
            ds.setUrl(PostgresTestServer.jdbcUrl(database));
        } else {
            // the driver would let the superuser's credentials in the URL override the login's
            ds.setUrl(withoutCredentials(PostgresTestServer.jdbcUrl(database)));
            ds.setUser(login);
            ds.setPassword(password);
        }
        ds.setOptions(SESSION_OPTIONS);
        this.caller = ds;
        this.callerRole = login;
    }

    /**
     * Sets up the fixture (roles, grants, objects of both namespaces). Runs of several databases prepare one after
     * the other: roles and their memberships are the cluster's, and concurrent grants of one role collide.
     */
    void prepare() throws SQLException {
        superConnection = superuser.getConnection();
        update("CALL queue.setup_roles()");
        createProbe();
        update("SELECT queue.grant_tenant('acme', " + HostileValues.literal(tenantLogin) + ")");
        update("SELECT queue.grant_tenant('globex', " + HostileValues.literal(globexLogin) + ")");
        // acme last: its leased message and dead letter are the ones the baselines name
        for (String namespace : List.of("globex", OWN_NAMESPACE)) {
            String ns = HostileValues.literal(namespace);
            update("SELECT queue.set_queue_policy(" + ns + ", 'email', p_max_attempts := 5)");
            update("SELECT queue.push(" + ns + ", 'email', '{\"k\":1}')");
            update("SELECT queue.pause_queue(" + ns + ", 'paused')");
            update("SELECT queue.set_queue_limits(" + ns + ", 'limited', p_max_running := 5)");
            update("SELECT queue.create_schedule(" + ns + ", 'nightly', 'email', '{}', p_every_interval := '1 hour')");
            lease(namespace);
            bury(namespace);
        }
        routines = routines();
        digest = digest();
        otherNamespaces = probeOtherNamespaces();
        callerConnection = callerConnection();
    }

    /** The calls, after {@link #prepare}; closes the connections when done. */
    Result run() throws SQLException {
        long start = System.nanoTime();
        try (Connection admin = superConnection) {
            int notExecutable = 0;
            for (Routine routine : routines) {
                if (!routine.callable()) {
                    notExecutable++;
                    continue;
                }
                guarded(routine, null, null);
                for (Parameter parameter : routine.parameters()) {
                    List<Value> values = HostileValues.hostile(parameter.type(), baseline(routine, parameter));
                    if (!HostileValues.knows(parameter.type())) {
                        unknownTypes.add(parameter.type() + " (" + routine.name() + "." + parameter.name() + ")");
                    }
                    for (Value value : values) {
                        guarded(routine, parameter, value);
                    }
                }
                // every call was rolled back: whatever differs now outlived a call of this function
                Map<String, String> after;
                CLUSTER.readLock().lock();
                try {
                    after = digest();
                } finally {
                    CLUSTER.readLock().unlock();
                }
                if (!after.equals(digest)) {
                    violations.add(routine.name() + ": a call (typed errors included) left a change in "
                            + changed(digest, after));
                    digest = after;
                }
            }
            callerConnection.close();
            timings.sort(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder()));
            List<String> slowest = timings.stream().limit(5)
                    .map(t -> t.getValue() + " ms " + t.getKey()).toList();
            return new Result(role, routines.size(), notExecutable, calls, successes, typed, List.copyOf(raws),
                    List.copyOf(violations), List.copyOf(unconstructible), List.copyOf(unknownTypes),
                    List.copyOf(refusedBaselines), List.copyOf(acceptedBadNames), slowest, (System.nanoTime() - start) / 1_000_000);
        } finally {
            superConnection = null;
        }
    }

    /** Pushes and pulls a message of the namespace: the leased message of the baselines. */
    private void lease(String namespace) throws SQLException {
        String ns = HostileValues.literal(namespace);
        update("SELECT queue.push(" + ns + ", 'leased', '{\"k\":2}')");
        try (Statement statement = superConnection.createStatement();
             ResultSet rs = statement.executeQuery("SELECT id, lease_token FROM queue.pull(" + ns
                     + ", 'leased', 'worker-1', p_visibility_timeout := '1 hour')")) {
            if (!rs.next()) {
                throw new IllegalStateException("the fixture could not lease a message of " + namespace);
            }
            leasedId = rs.getLong(1);
            leaseToken = rs.getLong(2);
        }
    }

    /** Makes a dead letter of the namespace: the dead letter of the baselines. */
    private void bury(String namespace) throws SQLException {
        String ns = HostileValues.literal(namespace);
        update("SELECT queue.push(" + ns + ", 'dead', '{\"k\":3}')");
        try (Statement statement = superConnection.createStatement();
             ResultSet rs = statement.executeQuery("SELECT id, lease_token FROM queue.pull(" + ns
                     + ", 'dead', 'worker-1', p_visibility_timeout := '1 hour')")) {
            if (!rs.next()) {
                throw new IllegalStateException("the fixture could not pull a message of " + namespace + " to bury");
            }
            deadId = rs.getLong(1);
            update("SELECT queue.fail(" + ns + ", " + deadId + ", 'gave up', " + rs.getLong(2) + ")");
        }
    }

    /** The public functions and procedures, with their input parameters and whether the caller may execute them. */
    private List<Routine> routines() throws SQLException {
        Map<String, Routine> routines = new LinkedHashMap<>();
        String sql = """
                SELECT p.oid::regprocedure::text AS signature, p.proname::text AS name, p.prokind = 'p' AS procedure,
                       has_function_privilege(coalesce(?, current_user), p.oid, 'EXECUTE') AS callable,
                       p.pronargs - p.pronargdefaults AS required, a.ord, a.name AS parameter,
                       format_type(a.type, NULL) AS type
                FROM pg_catalog.pg_proc p
                LEFT JOIN LATERAL (
                    SELECT row_number() OVER (ORDER BY x.ord) AS ord, x.name, x.type
                    FROM unnest(coalesce(p.proallargtypes, p.proargtypes::oid[]),
                                coalesce(p.proargmodes::text[], array_fill('i'::text, ARRAY[p.pronargs::integer])),
                                p.proargnames) WITH ORDINALITY AS x(type, mode, name, ord)
                    WHERE x.mode IN ('i', 'b', 'v')) a ON true
                WHERE p.pronamespace = ?::regnamespace AND p.prokind IN ('f', 'p') AND left(p.proname, 1) <> '_'
                ORDER BY p.proname, p.oid, a.ord
                """;
        try (PreparedStatement statement = superConnection.prepareStatement(sql)) {
            statement.setString(1, callerRole);
            statement.setString(2, SCHEMA);
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    String signature = rs.getString("signature");
                    Routine routine = routines.computeIfAbsent(signature, s -> {
                        try {
                            return new Routine(rs.getString("name"), s, rs.getBoolean("procedure"),
                                    rs.getBoolean("callable"), new ArrayList<>());
                        } catch (SQLException e) {
                            throw new IllegalStateException(e);
                        }
                    });
                    if (rs.getString("type") != null) {
                        int ordinal = rs.getInt("ord");
                        routine.parameters().add(new Parameter(rs.getString("parameter"), rs.getString("type"),
                                ordinal > rs.getInt("required")));
                    }
                }
            }
        }
        return List.copyOf(routines.values());
    }

    private String baseline(Routine routine, Parameter parameter) {
        return HostileValues.baseline(routine.name(), parameter.name(), parameter.type());
    }

    /**
     * A call with a value that can exhaust what the runs share, the server's lock table (arrays and objects of
     * 100,000 elements: a lock per queue or key), runs while no other run calls anything, so that its exhaustion
     * is charged to it alone; the other calls run at once.
     */
    private void guarded(Routine routine, Parameter attacked, Value value) throws SQLException {
        boolean alone = value != null && value.label().contains(HostileValues.HUGE_COUNT_LABEL);
        var lock = alone ? CLUSTER.writeLock() : CLUSTER.readLock();
        lock.lock();
        try {
            call(routine, attacked, value);
        } finally {
            lock.unlock();
        }
    }

    /** One call: the baselines, with {@code value} for {@code attacked} (both null: the baseline call). */
    private void call(Routine routine, Parameter attacked, Value value) throws SQLException {
        String sql = fill(callSql(routine, attacked, value));
        String parameter = attacked == null ? "(baseline)" : attacked.name();
        String shown = value == null ? "baselines" : value.label();
        String where = routine.name() + "(" + parameter + " := " + shown + ")";
        calls++;
        String state = null;
        String message = null;
        long begin = System.nanoTime();
        try (Statement statement = callerConnection.createStatement()) {
            try {
                statement.execute(sql);
            } catch (SQLException e) {
                state = e.getSQLState() == null ? "(none)" : e.getSQLState();
                message = firstLine(e.getMessage());
            }
            if (state == null) {
                checkSuccess(statement, where);
            }
        } finally {
            // nothing a call does is kept: every call meets the same fixture, and the tables stay small
            rollback();
        }
        long millis = (System.nanoTime() - begin) / 1_000_000;
        timings.add(Map.entry(where, millis));
        if (timings.size() > 50) {
            timings.sort(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder()));
            timings.subList(20, timings.size()).clear();
        }
        checkSession(where);
        if (state == null) {
            successes++;
            if (attacked != null && HostileValues.breaksNameRule(attacked.name(), value)) {
                acceptedBadNames.add(where);
            }
        } else if (state.startsWith("QU")) {
            typed++;
            if (attacked == null) {
                refusedBaselines.add(routine.name() + ": " + state + " " + message);
            }
        } else if (value != null && !constructible(value, attacked.type())) {
            calls--;
            unconstructible.add(attacked.type() + " " + value.label() + ": " + state + " " + message);
        } else {
            raws.add(new Raw(routine.name(), parameter, shown, state, message));
        }
    }

    /**
     * In the successful call's own transaction: it holds at most {@link #MAX_LOCKS} locks, and as a tenant it changed
     * no row of another namespace (read by the superuser's probe, which sees the transaction's own changes).
     */
    private void checkSuccess(Statement statement, String where) {
        try (ResultSet rs = statement.executeQuery("SELECT (SELECT count(*) FROM pg_catalog.pg_locks l "
                + "WHERE l.pid = pg_catalog.pg_backend_pid()), " + (tenant ? PROBE + "()" : "NULL"))) {
            rs.next();
            long locks = rs.getLong(1);
            if (locks > MAX_LOCKS) {
                violations.add(where + " took " + locks + " locks");
            }
            if (tenant && !otherNamespaces.equals(rs.getString(2))) {
                violations.add(where + " succeeded and changed another namespace's rows in "
                        + changed(parse(otherNamespaces), parse(rs.getString(2))));
            }
        } catch (SQLException e) {
            violations.add(where + " succeeded but left a transaction that cannot be checked: " + e.getSQLState() + " "
                    + firstLine(e.getMessage()));
        }
    }

    private void rollback() {
        try {
            callerConnection.rollback();
        } catch (SQLException e) {
            // a broken connection: checkSession reports it and connects again
        }
    }

    private String callSql(Routine routine, Parameter attacked, Value value) {
        boolean named = routine.parameters().stream().allMatch(p -> p.name() != null && !p.name().isEmpty());
        List<String> arguments = new ArrayList<>();
        for (Parameter parameter : routine.parameters()) {
            String expression;
            if (parameter == attacked) {
                expression = value.sql();
            } else if (named && !HostileValues.inBaseline(routine.name(), parameter.name(),
                    attacked == null ? null : attacked.name(), parameter.hasDefault())) {
                continue;
            } else {
                expression = Objects.requireNonNullElse(baseline(routine, parameter), "NULL");
            }
            String argument = "(" + expression + ")::" + parameter.type();
            arguments.add(named ? "\"" + parameter.name() + "\" => " + argument : argument);
        }
        String call = "\"" + SCHEMA + "\".\"" + routine.name() + "\"(" + String.join(", ", arguments) + ")";
        return routine.procedure() ? "CALL " + call : "SELECT count(*) FROM " + call;
    }

    private String fill(String sql) {
        return sql.replace(HostileValues.LEASED_ID, Long.toString(leasedId))
                .replace(HostileValues.LEASE_TOKEN, Long.toString(leaseToken))
                .replace(HostileValues.DEAD_ID, Long.toString(deadId))
                .replace(HostileValues.TENANT_LOGIN, HostileValues.literal(tenantLogin));
    }

    /** Whether PostgreSQL can build the value at all (a failure there is the server's, not the function's). */
    private boolean constructible(Value value, String type) {
        try (Statement statement = superConnection.createStatement()) {
            statement.execute("SET statement_timeout = '5s'");
            statement.execute(fill("SELECT (" + value.sql() + ")::" + type + " IS NULL"));
            return true;
        } catch (SQLException e) {
            return false;
        }
    }

    /**
     * No lock of the calling session outlives its call's transaction (only session-level locks can), and the server
     * still answers.
     */
    private void checkSession(String where) throws SQLException {
        try (Statement statement = callerConnection.createStatement()) {
            try (ResultSet rs = statement.executeQuery("SELECT string_agg(l.locktype || ' ' || l.mode, ', ') "
                    + "FROM pg_catalog.pg_locks l WHERE l.pid = pg_catalog.pg_backend_pid() AND l.locktype <> 'virtualxid' "
                    + "AND NOT (l.locktype = 'relation' AND l.relation < 16384)")) {
                rs.next();
                String held = rs.getString(1);
                if (held != null) {
                    violations.add(where + " left locks held: " + held);
                    statement.execute("SELECT pg_catalog.pg_advisory_unlock_all()");
                }
            }
            // the next call runs in the transaction this check began: it only read
        } catch (SQLException e) {
            violations.add(where + " left a session that no longer answers: " + e.getSQLState() + " " + firstLine(e.getMessage()));
            try {
                callerConnection.close();
            } catch (SQLException ignored) {
                // the connection is broken: a new one replaces it
            }
            callerConnection = callerConnection();
        }
    }

    /** The calling session: each call in a transaction of its own, rolled back. */
    private Connection callerConnection() throws SQLException {
        Connection connection = caller.getConnection();
        connection.setAutoCommit(false);
        return connection;
    }

    /** Per table: the row count and an md5 of the rows, read by the superuser. */
    private Map<String, String> digest() throws SQLException {
        if (digestSql == null) {
            List<String> parts = new ArrayList<>();
            try (Statement statement = superConnection.createStatement();
                 ResultSet rs = statement.executeQuery("SELECT c.relname::text FROM pg_catalog.pg_class c "
                         + "WHERE c.relnamespace = '" + SCHEMA + "'::regnamespace AND c.relkind = 'r' ORDER BY 1")) {
                while (rs.next()) {
                    parts.add("SELECT '" + rs.getString(1) + "', count(*) || ':' || coalesce(md5(string_agg(t::text, '|' "
                            + "ORDER BY t::text)), '') FROM \"" + SCHEMA + "\".\"" + rs.getString(1) + "\" t");
                }
            }
            digestSql = String.join(" UNION ALL ", parts);
        }
        Map<String, String> digest = new TreeMap<>();
        try (Statement statement = superConnection.createStatement(); ResultSet rs = statement.executeQuery(digestSql)) {
            while (rs.next()) {
                digest.put(rs.getString(1), rs.getString(2));
            }
        }
        return digest;
    }

    /**
     * Creates the probe: per table with a namespace column, the count and md5 of the rows of namespaces other than
     * 'acme', as "table=digest" pairs. SECURITY DEFINER as the superuser, so that it reads past row-level security
     * inside the tenant's own transaction, and outside the schema under test.
     */
    private void createProbe() throws SQLException {
        update("CREATE SCHEMA IF NOT EXISTS hostile_probe");
        update("GRANT USAGE ON SCHEMA hostile_probe TO PUBLIC");
        update("""
                CREATE OR REPLACE FUNCTION hostile_probe.other_namespaces() RETURNS text
                LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
                DECLARE
                    v_table  text;
                    v_digest text;
                    v_all    text := '';
                BEGIN
                    FOR v_table IN
                        SELECT c.relname FROM pg_class c
                        WHERE c.relnamespace = '%1$s'::regnamespace AND c.relkind = 'r'
                          AND EXISTS (SELECT 1 FROM pg_attribute a
                                      WHERE a.attrelid = c.oid AND a.attname = 'namespace' AND NOT a.attisdropped)
                        ORDER BY 1
                    LOOP
                        EXECUTE format('SELECT count(*) || '':'' || coalesce(md5(string_agg(t::text, ''|'' '
                                       'ORDER BY t::text)), '''') FROM %%I.%%I t WHERE t.namespace <> ''acme''',
                                       '%1$s', v_table) INTO v_digest;
                        v_all := v_all || v_table || '=' || v_digest || ' ';
                    END LOOP;
                    RETURN v_all;
                END
                $$""".formatted(SCHEMA));
        update("GRANT EXECUTE ON FUNCTION " + PROBE + "() TO PUBLIC");
    }

    private String probeOtherNamespaces() throws SQLException {
        try (Statement statement = superConnection.createStatement();
             ResultSet rs = statement.executeQuery("SELECT " + PROBE + "()")) {
            rs.next();
            return rs.getString(1);
        }
    }

    /** The probe's "table=digest" pairs. */
    private static Map<String, String> parse(String probed) {
        Map<String, String> tables = new TreeMap<>();
        for (String pair : probed == null ? new String[0] : probed.trim().split(" ")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                tables.put(pair.substring(0, eq), pair.substring(eq + 1));
            }
        }
        return tables;
    }

    private static String changed(Map<String, String> before, Map<String, String> after) {
        return before.keySet().stream().filter(key -> !Objects.equals(before.get(key), after.get(key)))
                .toList().toString();
    }

    private void update(String sql) throws SQLException {
        try (Statement statement = superConnection.createStatement()) {
            statement.execute(sql);
        } catch (SQLException e) {
            throw new SQLException("fixture SQL failed: " + sql + ": " + e.getMessage(), e.getSQLState(), e);
        }
    }

    private long count(String sql) throws SQLException {
        try (Statement statement = superConnection.createStatement(); ResultSet rs = statement.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static String withoutCredentials(String url) {
        int query = url.indexOf('?');
        if (query < 0) {
            return url;
        }
        List<String> kept = new ArrayList<>();
        for (String pair : url.substring(query + 1).split("&")) {
            String key = pair.contains("=") ? pair.substring(0, pair.indexOf('=')) : pair;
            if (!pair.isEmpty() && !key.equalsIgnoreCase("user") && !key.equalsIgnoreCase("password")) {
                kept.add(pair);
            }
        }
        return url.substring(0, query) + (kept.isEmpty() ? "" : "?" + String.join("&", kept));
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "";
        }
        String line = message.lines().findFirst().orElse("").replaceFirst("^ERROR: ", "");
        return line.length() > 160 ? line.substring(0, 160) + "..." : line;
    }
}
