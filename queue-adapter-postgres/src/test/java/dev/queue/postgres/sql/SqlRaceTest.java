package dev.queue.postgres.sql;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Two sessions at once: pulls never share a row, a unique key stores one message. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlRaceTest {

    private SqlTestDatabase db;
    private ExecutorService executor;

    @BeforeAll
    void createDatabase() {
        db = SqlTestDatabase.create("sqlrace");
        executor = Executors.newFixedThreadPool(2);
    }

    @AfterAll
    void dropDatabase() {
        executor.shutdownNow();
        db.close();
    }

    @Test
    void aPullSkipsTheRowAnUncommittedPullHolds() throws Exception {
        db.rows("SELECT * FROM queue.push_batch('skip', 'q', ARRAY['1', '2']::json[])");
        try (Connection first = db.connect(); Connection second = db.connect()) {
            first.setAutoCommit(false);
            List<Map<String, Object>> firstPull = SqlTestDatabase.rows(first, "SELECT id FROM queue.pull('skip', 'q')");

            List<Map<String, Object>> secondPull = SqlTestDatabase.rows(second, "SELECT id FROM queue.pull('skip', 'q')");
            first.rollback();

            assertThat(firstPull).hasSize(1);
            assertThat(secondPull).hasSize(1);
            assertThat(secondPull.get(0).get("id")).isNotEqualTo(firstPull.get(0).get("id"));
        }
    }

    @Test
    void twoSessionsPullingTheSameQueueNeverGetTheSameMessage() throws Exception {
        int messages = 300;
        db.rows("SELECT * FROM queue.push_batch('race', 'q', array_fill('{}'::json, ARRAY[" + messages + "]))");
        CountDownLatch start = new CountDownLatch(1);
        Callable<List<Long>> puller = () -> {
            List<Long> ids = new ArrayList<>();
            try (Connection connection = db.connect()) {
                start.await(30, TimeUnit.SECONDS);
                while (true) {
                    List<Map<String, Object>> batch = SqlTestDatabase.rows(connection, "SELECT id FROM queue.pull_batch('race', 'q', p_limit := 7)");
                    if (batch.isEmpty()) {
                        return ids;
                    }
                    batch.forEach(row -> ids.add((Long) row.get("id")));
                }
            }
        };
        Future<List<Long>> a = executor.submit(puller);
        Future<List<Long>> b = executor.submit(puller);
        start.countDown();
        List<Long> ofA = a.get(120, TimeUnit.SECONDS);
        List<Long> ofB = b.get(120, TimeUnit.SECONDS);

        Set<Long> all = new HashSet<>(ofA);
        all.addAll(ofB);
        assertThat(ofA.size() + ofB.size()).isEqualTo(messages);
        assertThat(all).hasSize(messages);
        assertThat(db.count("SELECT count(*) FROM queue.messages WHERE namespace = 'race' AND state = 'running' AND attempts = 1"))
                .isEqualTo(messages);
    }

    @Test
    void aPushWaitingForAnUncommittedHolderOfItsKeyGetsNullWhenThatCommits() throws Exception {
        assertThat(racePush("commit", true)).isNull();
        assertThat(db.count("SELECT count(*) FROM queue.messages WHERE namespace = 'dedup' AND unique_key = 'commit'")).isEqualTo(1);
    }

    @Test
    void aPushWaitingForAnUncommittedHolderOfItsKeyStoresItsMessageWhenThatRollsBack() throws Exception {
        assertThat(racePush("rollback", false)).isNotNull();
        assertThat(db.count("SELECT count(*) FROM queue.messages WHERE namespace = 'dedup' AND unique_key = 'rollback'")).isEqualTo(1);
    }

    /** Session one pushes the key in an open transaction, session two pushes it too; returns session two's result. */
    private Object racePush(String key, boolean commitFirst) throws Exception {
        try (Connection first = db.connect(); Connection second = db.connect()) {
            first.setAutoCommit(false);
            assertThat(SqlTestDatabase.rows(first, "SELECT queue.push('dedup', 'q', '{}', p_unique_key := ?) AS id", key).get(0).get("id"))
                    .isNotNull();
            Object secondPid = SqlTestDatabase.rows(second, "SELECT pg_backend_pid() AS pid").get(0).get("pid");
            Future<Object> pushed = executor.submit(() ->
                    SqlTestDatabase.rows(second, "SELECT queue.push('dedup', 'q', '{}', p_unique_key := ?) AS id", key).get(0).get("id"));
            await().atMost(30, TimeUnit.SECONDS).until(() -> db.count(
                    "SELECT count(*) FROM pg_stat_activity WHERE pid = ? AND wait_event_type = 'Lock'", secondPid) == 1);
            if (commitFirst) {
                first.commit();
            } else {
                first.rollback();
            }
            return pushed.get(30, TimeUnit.SECONDS);
        }
    }
}
