package dev.queue.postgres;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The queue's own vacuum of the hot table: nothing below the threshold, a vacuum above it, and none while another
 * vacuum holds the table.
 */
class HotTableVacuumTest {

    private StoreFixture db;
    private Sessions sessions;

    @BeforeEach
    void start() {
        db = new StoreFixture("vacuum", CompletedRetention.DELETE);
        sessions = new Sessions(db.sessions);
    }

    @AfterEach
    void stop() {
        db.close();
    }

    private long deadTuples() {
        Long dead = sessions.autoCommit("dead tuples", s -> s.selectOne("queue.deadTuples"));
        return dead == null ? 0 : dead;
    }

    private void makeDeadRows(int count) {
        PostgresTestServer.execute("INSERT INTO \"" + db.schema + "\".messages (namespace, topic, payload, max_attempts, run_at, published_at) "
                + "SELECT 'ns', 't', '{}', 1, now(), now() FROM generate_series(1, " + count + ")");
        PostgresTestServer.execute("DELETE FROM \"" + db.schema + "\".messages");
        // The statistics reach pg_stat_user_tables shortly after the deleting transaction ends.
        await().atMost(Duration.ofSeconds(20)).until(() -> deadTuples() >= 5_000);
    }

    @Test
    void vacuumsOnlyPastTheThresholdAndClearsTheDeadRows() {
        try (HotTableVacuum vacuum = new HotTableVacuum(sessions, Duration.ofHours(1), 5_000, db.schema)) {
            assertThat(vacuum.runOnce()).as("an empty table needs no vacuum").isFalse();
            makeDeadRows(8_000);
            assertThat(vacuum.runOnce()).isTrue();
            await().atMost(Duration.ofSeconds(20)).until(() -> deadTuples() < 5_000);
        }
    }

    @Test
    void leavesTheEmptiedPagesInPlace() {
        // Truncating the empty tail needs an ACCESS EXCLUSIVE lock, which a busy queue table never grants: vacuum
        // would wait for it for seconds while holding the table against every other vacuum (see V7).
        try (HotTableVacuum vacuum = new HotTableVacuum(sessions, Duration.ofHours(1), 5_000, db.schema)) {
            makeDeadRows(8_000);
            long pagesBefore = relationPages();
            assertThat(pagesBefore).isPositive();
            assertThat(vacuum.runOnce()).isTrue();
            await().atMost(Duration.ofSeconds(20)).until(() -> deadTuples() < 5_000);
            assertThat(relationPages()).as("pages of the hot table after vacuuming it empty").isEqualTo(pagesBefore);
        }
    }

    private long relationPages() {
        return ((Number) db.query("SELECT pg_relation_size('\"" + db.schema + "\".messages') / 8192").get(0)).longValue();
    }

    @Test
    void leavesTheTableToAVacuumAlreadyAtWork() throws Exception {
        try (HotTableVacuum vacuum = new HotTableVacuum(sessions, Duration.ofHours(1), 5_000, db.schema)) {
            makeDeadRows(8_000);
            try (Connection other = PostgresTestServer.dataSource().getConnection(); Statement statement = other.createStatement()) {
                // The lock a running VACUUM (autovacuum's, or another replica's) holds on the table.
                other.setAutoCommit(false);
                statement.execute("LOCK TABLE \"" + db.schema + "\".messages IN SHARE UPDATE EXCLUSIVE MODE");
                assertThat(vacuum.runOnce()).as("no second vacuum while one holds the table").isFalse();
                other.rollback();
            }
            assertThat(vacuum.runOnce()).as("the table is free again and still holds the dead rows").isTrue();
            await().atMost(Duration.ofSeconds(20)).until(() -> deadTuples() < 5_000);
        }
    }
}
