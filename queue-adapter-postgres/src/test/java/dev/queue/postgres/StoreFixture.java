package dev.queue.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.queue.domain.port.ClaimCommand;
import dev.queue.domain.port.ClaimedMessage;
import dev.queue.domain.port.CommandTime;
import dev.queue.domain.port.NewMessage;
import dev.queue.domain.port.PublishCommand;
import dev.queue.domain.port.StoredOutcome;
import org.apache.ibatis.session.SqlSessionFactory;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.Map;

import static dev.queue.domain.port.CommandTime.at;

/**
 * A migrated schema of its own (a copy of a template in a database of its own: {@link MigratedSchema}) and a store
 * over it, for tests that drive the port directly. Connections that must meet the store's (a horizon holder, a
 * LISTEN, a lock) come from {@link #dataSource()}: the server's own DataSource may be another database.
 */
final class StoreFixture implements AutoCloseable {

    static final String NS = "ns";

    final MigratedSchema migrated;
    final HikariDataSource pool;
    final String schema;
    final SqlSessionFactory sessions;
    final PostgresMessageStore store;

    StoreFixture(String prefix, CompletedRetention retention) {
        this(prefix, retention, 12);
    }

    StoreFixture(String prefix, CompletedRetention retention, int connections) {
        this.migrated = PostgresTestServer.migratedSchema(prefix);
        this.pool = migrated.newPool(prefix, connections);
        this.schema = migrated.schema();
        this.sessions = MyBatisSupport.sessionFactory(pool, schema);
        this.store = new PostgresMessageStore(sessions, retention);
    }

    /** A new physical connection per call (no pool) to the fixture's database, as the superuser. */
    javax.sql.DataSource dataSource() {
        return migrated.dataSource();
    }

    /** A JDBC URL of the fixture's database carrying the credentials. */
    String jdbcUrl() {
        return migrated.jdbcUrl();
    }

    static NewMessage message(String topic) {
        return new NewMessage(NS, topic, "{}", Map.of(), 0, 3, null, null, Duration.ZERO);
    }

    static NewMessage message(String namespace, String topic, String json) {
        return new NewMessage(namespace, topic, json, Map.of(), 0, 3, null, null, Duration.ZERO);
    }

    long publish(NewMessage message, CommandTime time) {
        List<StoredOutcome> outcomes = store.messageInsertMany(new PublishCommand(List.of(message), time));
        return outcomes.get(0).id();
    }

    List<StoredOutcome> publishAll(List<NewMessage> messages, CommandTime time) {
        return store.messageInsertMany(new PublishCommand(messages, time));
    }

    List<ClaimedMessage> claim(String topic, int limit, long token, CommandTime time) {
        return store.messageClaimDue(new ClaimCommand(NS, List.of(topic), "w", limit, Duration.ofSeconds(30), token, time));
    }

    /** The plans of the claim's statements as the store binds it (rolled back: nothing is claimed). */
    List<String> explainClaim(ClaimCommand command) {
        MessageMapper.Claim claim = store.claimParams(command);
        return nestedPlans(false, "SELECT * FROM $s._engine_claim(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", claimArguments(claim));
    }

    private static Object[] claimArguments(MessageMapper.Claim claim) {
        return new Object[] {claim.namespace(), claim.topics(), claim.worker(), claim.limit(), claim.leaseToken(),
                claim.leaseMicros(), claim.now() == null ? null : OffsetDateTime.ofInstant(claim.now(), ZoneOffset.UTC),
                claim.async(), claim.afterPriorities(), claim.afterRunAtMicros(), claim.afterIds(), claim.behind()};
    }

    /**
     * The plan of every statement a call runs, the statements inside the engine's PL/pgSQL functions included, as
     * auto_explain logs them (verbose, sent to this client as notices), on a connection of its own and in a
     * transaction rolled back afterwards. {@code genericPlans}: plans as they are after a statement's first five
     * executions at the latest, not knowing the parameters. "$s" stands for the schema.
     */
    List<String> nestedPlans(boolean genericPlans, String sql, Object... params) {
        try (Connection connection = DriverManager.getConnection(jdbcUrl())) {
            try (Statement setup = connection.createStatement()) {
                setup.execute("LOAD 'auto_explain'");
                setup.execute("SET auto_explain.log_min_duration = 0");
                setup.execute("SET auto_explain.log_nested_statements = on");
                setup.execute("SET auto_explain.log_verbose = on");
                setup.execute("SET client_min_messages = log");
                if (genericPlans) {
                    setup.execute("SET plan_cache_mode = force_generic_plan");
                }
            }
            connection.setAutoCommit(false);
            try (PreparedStatement statement = connection.prepareStatement(sql.replace("$s", "\"" + schema + "\""))) {
                for (int i = 0; i < params.length; i++) {
                    statement.setObject(i + 1, params[i]);
                }
                statement.execute();
                List<String> plans = new ArrayList<>();
                for (SQLWarning warning = statement.getWarnings(); warning != null; warning = warning.getNextWarning()) {
                    if (warning.getMessage() != null && warning.getMessage().contains("Query Text:")) {
                        plans.add(warning.getMessage());
                    }
                }
                return plans;
            } finally {
                connection.rollback();
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    /**
     * The shared buffers the claim touched, the statements inside the engine function included, as the store binds
     * it, on a connection of its own: the second of two calls (the first one plans); what they claimed is rolled
     * back.
     */
    long claimBuffers(ClaimCommand command) {
        String sql = "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT * FROM \"" + schema
                + "\"._engine_claim(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
        try (Connection connection = DriverManager.getConnection(jdbcUrl())) {
            connection.setAutoCommit(false);
            try (PreparedStatement statement = connection.prepareStatement(sql)) {
                Object[] arguments = claimArguments(store.claimParams(command));
                for (int i = 0; i < arguments.length; i++) {
                    statement.setObject(i + 1, arguments[i]);
                }
                // the first call in a session also reads the catalog to plan the function's statements
                statement.executeQuery().close();
                try (ResultSet rs = statement.executeQuery()) {
                    rs.next();
                    String json = rs.getString(1);
                    Matcher hit = Pattern.compile("\"Shared Hit Blocks\": (\\d+)").matcher(json);
                    Matcher read = Pattern.compile("\"Shared Read Blocks\": (\\d+)").matcher(json);
                    if (!hit.find() || !read.find()) {
                        throw new AssertionError("no buffer counts in " + json);
                    }
                    return Long.parseLong(hit.group(1)) + Long.parseLong(read.group(1));
                }
            } finally {
                connection.rollback();
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    ClaimedMessage claimOne(String topic, long token, CommandTime time) {
        List<ClaimedMessage> claimed = claim(topic, 1, token, time);
        if (claimed.size() != 1) {
            throw new AssertionError("expected one claimable message on " + topic + ", got " + claimed);
        }
        return claimed.get(0);
    }

    /** Runs a query on a connection of its own and returns the first column of every row; "$s" stands for the schema. */
    List<Object> query(String sql) {
        return firstColumn(pool, sql.replace("$s", "\"" + schema + "\""));
    }

    /** The first column of every row of a query, run on a connection of its own. */
    static List<Object> firstColumn(javax.sql.DataSource source, String sql) {
        try (Connection connection = source.getConnection(); Statement statement = connection.createStatement();
             ResultSet rs = statement.executeQuery(sql)) {
            List<Object> values = new ArrayList<>();
            while (rs.next()) {
                values.add(rs.getObject(1));
            }
            return values;
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    long count(String table) {
        return ((Number) query("SELECT count(*) FROM $s." + table).get(0)).longValue();
    }

    /** Whether the fixture's connections log in as a superuser (an external test database may not). */
    boolean isSuperuser() {
        return Boolean.TRUE.equals(query("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").get(0));
    }

    void execute(String sql) {
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute(sql.replace("$s", "\"" + schema + "\""));
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    @Override
    public void close() {
        pool.close();
        migrated.close();
    }
}
