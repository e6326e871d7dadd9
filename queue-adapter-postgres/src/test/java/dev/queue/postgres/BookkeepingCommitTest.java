package dev.queue.postgres;

import dev.queue.domain.port.AckCommand;
import dev.queue.domain.port.ClaimCommand;
import dev.queue.domain.port.ClaimedMessage;
import dev.queue.domain.port.LeaseRef;
import org.apache.ibatis.session.SqlSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static dev.queue.domain.port.CommandTime.at;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Claims and acknowledgements commit without waiting for the WAL flush unless the queue is configured with
 * durableAcknowledgements, and that choice stays inside their own transaction; publishes always wait for it (a
 * publish that returned must survive a crash of the server). Each statement is run here as the
 * store binds it, but inside a transaction the test holds open, on a connection whose session asks for
 * synchronous commits (the test server runs without them), so the setting the commit would see can be read.
 */
class BookkeepingCommitTest {

    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    private StoreFixture db;

    @BeforeEach
    void setUp() {
        db = new StoreFixture("bookkeeping", CompletedRetention.DELETE);
    }

    @AfterEach
    void tearDown() {
        db.close();
    }

    @Test
    void aClaimCommitsWithoutWaitingForTheFlushByDefault() throws SQLException {
        db.publish(StoreFixture.message("t"), at(T0));
        assertThat(settingAtCommitOf(m -> m.claim(db.store.claimParams(claimCommand()))))
                .as("synchronous_commit inside the claim's transaction").isEqualTo("off");
    }

    @Test
    void aClaimThatFindsNothingStillRunsItsOneTimeFilter() throws SQLException {
        assertThat(settingAtCommitOf(m -> m.claim(db.store.claimParams(claimCommand())))).isEqualTo("off");
    }

    @Test
    void anAcknowledgementCommitsWithoutWaitingForTheFlushByDefault() throws SQLException {
        db.publish(StoreFixture.message("t"), at(T0));
        ClaimedMessage claimed = db.claimOne("t", 5, at(T0));
        AckCommand complete = new AckCommand(StoreFixture.NS, List.of(new LeaseRef(claimed.id(), 5)), at(T0));
        assertThat(settingAtCommitOf(m -> db.store.ackWith(m, complete, db.store.asyncBookkeeping()))).isEqualTo("off");
        assertThat(db.query("SELECT count(*) FROM $s.messages")).containsExactly(0L);
    }

    @Test
    void withDurableAcknowledgementsBothWaitForTheFlush() throws SQLException {
        PostgresMessageStore durable = new PostgresMessageStore(db.sessions, CompletedRetention.DELETE, true);
        db.publish(StoreFixture.message("t"), at(T0));
        assertThat(settingAtCommitOf(m -> m.claim(durable.claimParams(claimCommand())))).isEqualTo("on");
        long id = (Long) db.query("SELECT id FROM $s.messages").get(0);
        AckCommand complete = new AckCommand(StoreFixture.NS, List.of(new LeaseRef(id, 9)), at(T0));
        assertThat(settingAtCommitOf(m -> durable.ackWith(m, complete, durable.asyncBookkeeping()))).isEqualTo("on");
        assertThat(db.query("SELECT count(*) FROM $s.messages")).containsExactly(0L);
    }

    @Test
    void anAcknowledgementInTheCallersTransactionLeavesItsCommitToTheCaller() throws SQLException {
        db.publish(StoreFixture.message("t"), at(T0));
        ClaimedMessage claimed = db.claimOne("t", 5, at(T0));
        try (Connection connection = db.pool.getConnection()) {
            execute(connection, "SET synchronous_commit = on");
            connection.setAutoCommit(false);
            try {
                db.store.ackOn(connection, new AckCommand(StoreFixture.NS, List.of(new LeaseRef(claimed.id(), 5)), at(T0)));
                assertThat(show(connection)).isEqualTo("on");
                connection.commit();
            } finally {
                connection.setAutoCommit(true);
                execute(connection, "RESET synchronous_commit");
            }
        }
    }

    @Test
    void publishesKeepWaitingForTheFlush() throws SQLException {
        MessageMapper.One quiet = PostgresMessageStore.publishOneParams(StoreFixture.message("t"), null, T0);
        assertThat(settingAtCommitOf(m -> m.publishOne(quiet))).as("a held-back one-message publish").isEqualTo("on");
        MessageMapper.One one = PostgresMessageStore.publishOneParams(StoreFixture.message("t"), StoreFixture.NS + "/t", T0);
        assertThat(settingAtCommitOf(m -> m.publishOne(one))).as("a one-message publish with its wake-up").isEqualTo("on");
        MessageMapper.Batch many = PostgresMessageStore.publishParams(List.of(StoreFixture.message("t"), StoreFixture.message("t")),
                new String[] {StoreFixture.NS + "/t"}, T0);
        assertThat(settingAtCommitOf(m -> m.publishFast(many))).as("a multi-row publish").isEqualTo("on");
        assertThat(db.query("SELECT count(*) FROM $s.messages")).containsExactly(4L);
    }

    private ClaimCommand claimCommand() {
        return new ClaimCommand(StoreFixture.NS, List.of("t"), "w", 10, Duration.ofSeconds(30), 9, at(T0));
    }

    /**
     * Runs a statement of the message mapper in a transaction on a session that asks for synchronous
     * commits, reads synchronous_commit just before that transaction commits, and checks that the session's own
     * setting is back afterwards: the statement may only change its own transaction.
     */
    private String settingAtCommitOf(java.util.function.Consumer<MessageMapper> statement) throws SQLException {
        try (Connection connection = db.pool.getConnection()) {
            execute(connection, "SET synchronous_commit = on");
            connection.setAutoCommit(false);
            String atCommit;
            try {
                try (SqlSession session = MyBatisSupport.sessionOn(db.sessions, connection)) {
                    statement.accept(session.getMapper(MessageMapper.class));
                }
                atCommit = show(connection);
                connection.commit();
                assertThat(show(connection)).as("the session's own setting after the commit").isEqualTo("on");
            } finally {
                connection.setAutoCommit(true);
                execute(connection, "RESET synchronous_commit");
            }
            return atCommit;
        }
    }

    private static String show(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery("SHOW synchronous_commit")) {
            rs.next();
            return rs.getString(1);
        }
    }

    private static void execute(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }
}
