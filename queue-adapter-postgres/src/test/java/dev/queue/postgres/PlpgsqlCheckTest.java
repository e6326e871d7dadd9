package dev.queue.postgres;

import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The static checker plpgsql_check over every PL/pgSQL function and procedure of a freshly migrated schema, trigger
 * functions on each table a trigger calls them for: it finds what PL/pgSQL itself reports only when a statement
 * runs (a query whose columns do not match the function's result, a misspelt column, a missing RETURN, a dead
 * variable). Any error fails the test; so does any warning outside {@link #ALLOWED_WARNINGS}, where each false
 * positive is kept with its reason. Needs a real PostgreSQL 15 of Debian with the package
 * postgresql-15-plpgsql-check ({@link LocalPostgresCluster}): skipped without them, except on CI (CI=true).
 */
class PlpgsqlCheckTest {

    private static final String SCHEMA = "plcheck";

    /** A warning kept: the function's name, a regular expression found in the message, and why it is kept. */
    record Allowed(String function, Pattern message, String reason) {

        static Allowed warning(String function, String messageRegex, String reason) {
            return new Allowed(function, Pattern.compile(messageRegex), reason);
        }

        boolean matches(Finding finding) {
            return finding.function().equals(function) && message.matcher(finding.message()).find();
        }
    }

    /** Genuine false positives only; never an error. */
    static final List<Allowed> ALLOWED_WARNINGS = List.of(
            Allowed.warning("_estimate", "^text type variable is not sanitized$",
                    "owner-only helper (no EXECUTE for the queue's roles) whose one caller, topic_overview, builds "
                            + "p_query with format() and %I/%L; the check does not follow values across calls"),
            Allowed.warning("_schedule_latest", "^control reached end of function without RETURN$",
                    "the function ends in a LOOP no EXIT leaves (the one EXIT is the inner loop's), so only its "
                            + "RETURNs end it; plpgsql_check treats any LOOP as one that may fall through"));

    /** One row of plpgsql_check_function_tb, with the function's signature and, for a trigger, its table. */
    record Finding(String function, String signature, String table, String level, Integer line, String sqlstate,
                   String message, String detail, String hint, String statement, String query, String context) {

        boolean error() {
            return "error".equals(level);
        }

        @Override
        public String toString() {
            StringBuilder text = new StringBuilder(level).append(": ").append(signature);
            if (table != null) {
                text.append(" (trigger on ").append(table).append(')');
            }
            text.append(line == null ? "" : " line " + line).append(statement == null ? "" : " at " + statement)
                    .append(": ").append(message).append(" [").append(sqlstate).append(']');
            if (detail != null) {
                text.append("\n    detail: ").append(detail);
            }
            if (hint != null) {
                text.append("\n    hint: ").append(hint);
            }
            if (query != null) {
                text.append("\n    query: ").append(query.strip().replaceAll("\\s+", " "));
            }
            if (context != null) {
                text.append("\n    context: ").append(context);
            }
            return text.toString();
        }
    }

    /** A function to check: for a trigger function, once per table (and transition tables) a trigger calls it on. */
    private record Target(long oid, String name, String signature, Long relid, String table, String oldTable,
                          String newTable) {
    }

    @Test
    void everyPlpgsqlFunctionPassesPlpgsqlCheck() throws SQLException {
        LocalPostgresCluster.assumeAvailable();
        try (LocalPostgresCluster cluster = LocalPostgresCluster.startNew()) {
            PGSimpleDataSource database = new PGSimpleDataSource();
            database.setUrl(cluster.jdbcUrl());
            try (Connection connection = database.getConnection()) {
                LocalPostgresCluster.assumePrerequisite(single(connection,
                        "SELECT count(*) FROM pg_available_extensions WHERE name = 'plpgsql_check'") == 0
                        ? "no extension plpgsql_check in the server (apt-get install postgresql-15-plpgsql-check)" : null);
                execute(connection, "CREATE EXTENSION plpgsql_check SCHEMA public");
            }
            SchemaMigrator.migrate(MyBatisSupport.sessionFactory(database, SCHEMA), SCHEMA);

            List<Finding> findings = new ArrayList<>();
            List<String> unchecked = new ArrayList<>();
            int targets;
            try (Connection connection = database.getConnection()) {
                List<Target> toCheck = targets(connection, unchecked);
                assertThat(toCheck).as("PL/pgSQL functions of the migrated schema").hasSizeGreaterThan(50);
                assertThat(toCheck).as("trigger functions checked on their tables").anyMatch(t -> t.relid() != null);
                for (Target target : toCheck) {
                    findings.addAll(check(connection, target));
                }
                targets = toCheck.size();
            }

            List<Finding> errors = findings.stream().filter(Finding::error).toList();
            List<Finding> warnings = new ArrayList<>();
            Set<Allowed> used = new LinkedHashSet<>();
            // the whole report in the test's output (target/surefire-reports), the allowed warnings included
            System.out.println(targets + " checks of PL/pgSQL functions, " + findings.size() + " findings");
            for (Finding finding : findings) {
                Allowed allowed = finding.error() ? null
                        : ALLOWED_WARNINGS.stream().filter(a -> a.matches(finding)).findFirst().orElse(null);
                System.out.println(finding + (allowed == null ? "" : "\n    allowed: " + allowed.reason()));
                if (allowed != null) {
                    used.add(allowed);
                } else if (!finding.error()) {
                    warnings.add(finding);
                }
            }
            List<Allowed> stale = ALLOWED_WARNINGS.stream().filter(a -> !used.contains(a)).toList();

            StringBuilder report = new StringBuilder();
            section(report, "errors", errors);
            section(report, "warnings not in ALLOWED_WARNINGS", warnings);
            section(report, "trigger functions no trigger calls (plpgsql_check needs the table)", unchecked);
            section(report, "ALLOWED_WARNINGS entries that no longer match anything (remove them)", stale);
            assertThat(report.toString()).as("plpgsql_check over schema %s", SCHEMA).isEmpty();
        }
    }

    /**
     * Every PL/pgSQL function and procedure of the schema. A trigger function once per distinct table and transition
     * tables of its triggers; one without a trigger goes to {@code unchecked}, plpgsql_check needing the table.
     */
    private static List<Target> targets(Connection connection, List<String> unchecked) throws SQLException {
        List<Target> targets = new ArrayList<>();
        String sql = """
                SELECT p.oid, p.proname, p.oid::regprocedure::text, t.tgrelid, t.tgrelid::regclass::text,
                       t.tgoldtable, t.tgnewtable, p.prorettype = 'pg_catalog.trigger'::regtype
                FROM pg_proc p
                JOIN pg_language l ON l.oid = p.prolang
                LEFT JOIN (SELECT DISTINCT tgfoid, tgrelid, tgoldtable, tgnewtable FROM pg_trigger WHERE NOT tgisinternal) t
                       ON t.tgfoid = p.oid AND p.prorettype = 'pg_catalog.trigger'::regtype
                WHERE p.pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = ?) AND l.lanname = 'plpgsql'
                ORDER BY 3, 5
                """;
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setString(1, SCHEMA);
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    long relid = rs.getLong(4);
                    boolean noTrigger = rs.wasNull();
                    boolean trigger = rs.getBoolean(8);
                    if (trigger && noTrigger) {
                        unchecked.add(rs.getString(3));
                        continue;
                    }
                    targets.add(new Target(rs.getLong(1), rs.getString(2), rs.getString(3), trigger ? relid : null,
                            rs.getString(5), rs.getString(6), rs.getString(7)));
                }
            }
        }
        return targets;
    }

    /*
     * The options:
     * - fatal_errors false: every error of a function, not only its first.
     * - other_warnings true: what compiles but is wrong or dead (a value converted through text because no
     *   assignment cast exists, an assignment of more or fewer columns than its target has, unused variables,
     *   unreachable code).
     * - extra_warnings true: variables and parameters never read, OUT parameters never set, a function that may
     *   end without RETURN; cheap to keep at zero, each one is dead code or a missed use.
     * - security_warnings true: the public functions run SECURITY DEFINER (migration 11), so dynamic SQL built from
     *   their text arguments is an injection into the owner's rights; plpgsql_check traces such strings.
     * - performance_warnings false: its advice is every implicit numeric cast of an assignment (integer to bigint,
     *   numeric to double precision: some twenty, none on a hot path's predicate) and "should be IMMUTABLE" guesses;
     *   the engine's plans are held by the plan tests (QueryPlanTest), its volatility is declared on purpose.
     * - compatibility_warnings true: obsolete constructs; silent today, and free.
     */
    private static List<Finding> check(Connection connection, Target target) throws SQLException {
        String sql = """
                SELECT level, lineno, statement, sqlstate, message, detail, hint, query, context
                FROM public.plpgsql_check_function_tb(?::oid::regprocedure, coalesce(?::oid, 0)::regclass,
                    fatal_errors := false, other_warnings := true, extra_warnings := true,
                    security_warnings := true, performance_warnings := false, compatibility_warnings := true,
                    oldtable := ?::name, newtable := ?::name)
                """;
        List<Finding> findings = new ArrayList<>();
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setLong(1, target.oid());
            statement.setObject(2, target.relid());
            statement.setString(3, target.oldTable());
            statement.setString(4, target.newTable());
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    int line = rs.getInt(2);
                    Integer lineno = rs.wasNull() ? null : line;
                    findings.add(new Finding(target.name(), target.signature(), target.table(), rs.getString(1), lineno,
                            rs.getString(4), rs.getString(5), rs.getString(6), rs.getString(7), rs.getString(3),
                            rs.getString(8), rs.getString(9)));
                }
            }
        }
        return findings;
    }

    private static void section(StringBuilder report, String title, List<?> items) {
        if (!items.isEmpty()) {
            report.append('\n').append(items.size()).append(' ').append(title).append(":\n");
            items.forEach(item -> report.append("  ").append(item.toString().replace("\n", "\n  ")).append('\n'));
        }
    }

    private static long single(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void execute(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }
}
