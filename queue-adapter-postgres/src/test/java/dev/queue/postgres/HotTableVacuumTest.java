package dev.queue.postgres;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The queue's own vacuum of the hot table: nothing below the threshold, a vacuum above it. */
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

    @Test
    void vacuumsOnlyPastTheThresholdAndClearsTheDeadRows() {
        try (HotTableVacuum vacuum = new HotTableVacuum(sessions, Duration.ofHours(1), 5_000, db.schema)) {
            assertThat(vacuum.runOnce()).as("an empty table needs no vacuum").isFalse();
            PostgresTestServer.execute("INSERT INTO \"" + db.schema + "\".messages (namespace, topic, payload, max_attempts, run_at, published_at) "
                    + "SELECT 'ns', 't', '{}', 1, now(), now() FROM generate_series(1, 8000)");
            PostgresTestServer.execute("DELETE FROM \"" + db.schema + "\".messages");
            // The statistics reach pg_stat_user_tables shortly after the deleting transaction ends.
            await().atMost(Duration.ofSeconds(20)).until(() -> deadTuples() >= 5_000);
            assertThat(vacuum.runOnce()).isTrue();
            await().atMost(Duration.ofSeconds(20)).until(() -> deadTuples() < 5_000);
        }
    }
}
