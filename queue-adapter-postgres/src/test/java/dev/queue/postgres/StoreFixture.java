package dev.queue.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.queue.domain.port.ClaimCommand;
import dev.queue.domain.port.ClaimedMessage;
import dev.queue.domain.port.CommandTime;
import dev.queue.domain.port.NewMessage;
import dev.queue.domain.port.PublishCommand;
import dev.queue.domain.port.StoredOutcome;
import org.apache.ibatis.builder.xml.XMLMapperBuilder;
import org.apache.ibatis.session.Configuration;
import org.apache.ibatis.session.SqlSession;
import org.apache.ibatis.session.SqlSessionFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.Map;

import static dev.queue.domain.port.CommandTime.at;

/** A migrated schema of its own and a store over it, for tests that drive the port directly. */
final class StoreFixture implements AutoCloseable {

    static final String NS = "ns";
    private static final String PLAN_MAPPER = "dev/queue/postgres/PlanMapper.xml";

    final HikariDataSource pool;
    final String schema;
    final SqlSessionFactory sessions;
    final PostgresMessageStore store;

    StoreFixture(String prefix, CompletedRetention retention) {
        this(prefix, retention, 12);
    }

    StoreFixture(String prefix, CompletedRetention retention, int connections) {
        this.pool = PostgresTestServer.newPool(prefix, connections);
        this.schema = PostgresTestServer.freshSchema(prefix);
        this.sessions = MyBatisSupport.sessionFactory(pool, schema);
        SchemaMigrator.migrate(sessions, schema);
        this.store = new PostgresMessageStore(sessions, retention);
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

    /** The plan of the claim statement exactly as the store binds it, as EXPLAIN prints it (nothing is claimed). */
    List<String> explainClaim(ClaimCommand command) {
        Configuration configuration = sessions.getConfiguration();
        if (!configuration.hasStatement("queue.explainClaim")) {
            try (InputStream mapper = StoreFixture.class.getResourceAsStream("/" + PLAN_MAPPER)) {
                new XMLMapperBuilder(mapper, configuration, PLAN_MAPPER, configuration.getSqlFragments()).parse();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        try (SqlSession session = sessions.openSession(true)) {
            return session.selectList("queue.explainClaim", store.claimParams(command));
        }
    }

    /** The shared buffers the claim statement touched, as the store binds it; what it claimed is rolled back. */
    long claimBuffers(ClaimCommand command) {
        explainClaim(command);
        try (SqlSession session = sessions.openSession(false)) {
            List<String> json = session.selectList("queue.explainAnalyzeClaim", store.claimParams(command));
            session.rollback(true);
            Matcher hit = Pattern.compile("\"Shared Hit Blocks\": (\\d+)").matcher(json.get(0));
            Matcher read = Pattern.compile("\"Shared Read Blocks\": (\\d+)").matcher(json.get(0));
            if (!hit.find() || !read.find()) {
                throw new AssertionError("no buffer counts in " + json);
            }
            return Long.parseLong(hit.group(1)) + Long.parseLong(read.group(1));
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

    void execute(String sql) {
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute(sql.replace("$s", "\"" + schema + "\""));
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    @Override
    public void close() {
        PostgresTestServer.dropSchema(schema);
        pool.close();
    }
}
