package dev.queue.postgres;

import dev.queue.api.InvalidInputException;
import dev.queue.domain.engine.MaintenanceRunner;
import dev.queue.testkit.CapturedLog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The queue's own vacuum of the hot table: nothing below the threshold, a vacuum above it, none while another
 * vacuum holds the table, no parallel workers, and no vacuum again while the same transaction holds the vacuum horizon.
 */
@Tag("slow")
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

    /** A vacuum with a threshold of 5,000, run by hand (tests call runOnce) unless a runner is started on it. */
    private HotTableVacuum vacuum(Duration interval) {
        return new HotTableVacuum(sessions, new HotTableVacuum.Config(interval, 5_000), db.schema);
    }

    private long deadTuples() {
        Long dead = sessions.autoCommit("dead tuples", MaintenanceMapper.class, MaintenanceMapper::deadTuples);
        return dead == null ? 0 : dead;
    }

    /** The session's transaction as it takes an id and keeps it open: the vacuum horizon stays there until it ends. */
    private record Holder(int pid, long xid) {
        static Holder holdTheHorizon(Connection connection) throws SQLException {
            connection.setAutoCommit(false);
            try (Statement statement = connection.createStatement();
                 ResultSet row = statement.executeQuery("SELECT pg_backend_pid(), txid_current()")) {
                row.next();
                return new Holder(row.getInt(1), row.getLong(2));
            }
        }
    }

    /** How long the transaction of backend {@code pid} has been open. */
    private long openNanos(int pid) {
        return ((Number) db.query("SELECT coalesce(extract(epoch FROM now() - xact_start) * 1e9, 0)::bigint "
                + "FROM pg_stat_activity WHERE pid = " + pid).get(0)).longValue();
    }

    /** Waits until the transaction of backend {@code pid} has been open long enough to count as a pin. */
    private void awaitPinned(int pid) {
        await().atMost(Duration.ofSeconds(20)).until(() -> openNanos(pid) > HotTableVacuum.SHORTEST_PIN_NANOS);
    }

    private void makeDeadRows(int count) {
        db.migrated.execute("INSERT INTO \"" + db.schema + "\".messages (namespace, topic, payload, max_attempts, run_at, published_at) "
                + "SELECT 'ns', 't', '{}', 1, now(), now() FROM generate_series(1, " + count + ")");
        db.migrated.execute("DELETE FROM \"" + db.schema + "\".messages");
        // The statistics reach pg_stat_user_tables shortly after the deleting transaction ends.
        await().atMost(Duration.ofSeconds(20)).until(() -> deadTuples() >= 5_000);
    }

    @Test
    void vacuumsOnlyPastTheThresholdAndClearsTheDeadRows() {
        HotTableVacuum vacuum = vacuum(Duration.ofHours(1));
        assertThat(vacuum.runOnce()).as("an empty table needs no vacuum").isEqualTo(new HotTableVacuum.Pass(0, 0, false));
        makeDeadRows(8_000);
        HotTableVacuum.Pass pass = vacuum.runOnce();
        assertThat(pass.vacuumed()).isTrue();
        assertThat(pass.deadRowVersions()).as("dead row versions it found").isBetween(5_000L, 8_000L);
        assertThat(pass.batchFull()).isFalse();
        assertThat(vacuum.vacuumsRun()).isEqualTo(1);
        await().atMost(Duration.ofSeconds(20)).until(() -> deadTuples() < 5_000);
    }

    @Test
    void aRunnerStartedAndStoppedTwiceVacuumsOnItsOwn() {
        makeDeadRows(8_000);
        HotTableVacuum vacuum = vacuum(Duration.ofMillis(50));
        MaintenanceRunner runner = new MaintenanceRunner(vacuum, MaintenanceRunner.Config.DEFAULTS, null);
        runner.start();
        runner.start();
        await().atMost(Duration.ofSeconds(20)).until(() -> vacuum.vacuumsRun() >= 1 && deadTuples() < 5_000);
        runner.stop();
        runner.stop();
        assertThat(runner.isRunning()).isFalse();
    }

    @Test
    void configRefusesAnIntervalOverAnHourNamingIt() {
        assertThatThrownBy(() -> HotTableVacuum.Config.every(Duration.ofMinutes(61)))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("vacuumInterval")
                .hasMessageContaining("PT1H1M");
    }

    @Test
    void leavesTheEmptiedPagesInPlace() {
        // Truncating the empty tail needs an ACCESS EXCLUSIVE lock, which a busy queue table never grants: vacuum
        // would wait for it for seconds while holding the table against every other vacuum (see V7).
        HotTableVacuum vacuum = vacuum(Duration.ofHours(1));
        makeDeadRows(8_000);
        long pagesBefore = relationPages();
        assertThat(pagesBefore).isPositive();
        assertThat(vacuum.runOnce().vacuumed()).isTrue();
        await().atMost(Duration.ofSeconds(20)).until(() -> deadTuples() < 5_000);
        assertThat(relationPages()).as("pages of the hot table after vacuuming it empty").isEqualTo(pagesBefore);
    }

    private long relationPages() {
        return ((Number) db.query("SELECT pg_relation_size('\"" + db.schema + "\".messages') / 8192").get(0)).longValue();
    }

    @Test
    void leavesTheTableToAVacuumAlreadyAtWork() throws Exception {
        HotTableVacuum vacuum = vacuum(Duration.ofHours(1));
        makeDeadRows(8_000);
        try (Connection other = db.dataSource().getConnection(); Statement statement = other.createStatement()) {
            // The lock a running VACUUM (autovacuum's, or another replica's) holds on the table.
            other.setAutoCommit(false);
            statement.execute("LOCK TABLE \"" + db.schema + "\".messages IN SHARE UPDATE EXCLUSIVE MODE");
            assertThat(vacuum.runOnce().vacuumed()).as("no second vacuum while one holds the table").isFalse();
            other.rollback();
        }
        assertThat(vacuum.runOnce().vacuumed()).as("the table is free again and still holds the dead rows").isTrue();
        await().atMost(Duration.ofSeconds(20)).until(() -> deadTuples() < 5_000);
    }

    @Test
    void waitsWhileATransactionHoldsTheHorizonAndResumesWhenItEnds() throws Exception {
        // A round every 50 ms: sixty in three seconds, where the usual 2 s cadence would see a minute's worth in two.
        try (CapturedLog log = CapturedLog.start();
             Connection holder = db.dataSource().getConnection();
             Statement holding = holder.createStatement()) {
            holding.execute("SET application_name = 'horizon-holder'");
            int holderPid = Holder.holdTheHorizon(holder).pid();
            makeDeadRows(8_000);
            awaitPinned(holderPid);
            HotTableVacuum vacuum = vacuum(Duration.ofMillis(50));
            try (MaintenanceRunner runner = new MaintenanceRunner(vacuum, MaintenanceRunner.Config.DEFAULTS, null)) {
                runner.start();
                await().atMost(Duration.ofSeconds(20)).until(() -> vacuum.vacuumsRun() >= 1);
                await().atMost(Duration.ofSeconds(5)).until(() -> !log.linesContaining("holds the vacuum horizon").isEmpty());
                await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5))
                        .until(() -> vacuum.vacuumsRun() == 1);
                assertThat(log.linesContaining("holds the vacuum horizon"))
                        .as("one warning naming the session that holds the horizon")
                        .singleElement().asString()
                        .contains("session pid " + holderPid, "horizon-holder", "idle in transaction", "transaction open for",
                                "last query started at", db.schema);
                assertThat(deadTuples()).isGreaterThanOrEqualTo(5_000);

                holder.rollback();
                await().atMost(Duration.ofSeconds(20)).until(() -> deadTuples() < 5_000);
                assertThat(vacuum.vacuumsRun()).as("vacuums: the one that removed nothing, then the one after the horizon moved")
                        .isEqualTo(2);
                assertThat(log.linesContaining("back to its usual cadence")).hasSize(1);
            }
        }
    }

    @Test
    void namesTheTransactionHoldingTheHorizonRatherThanTheQueriesRunningBehindIt() throws Exception {
        // Sessions connected before the holder come first in pg_stat_activity; each runs a query whose snapshot
        // starts at the holder's transaction id, as the queue's own claimers do under a pinned horizon.
        List<Connection> busy = new ArrayList<>();
        List<Statement> sleeping = new ArrayList<>();
        ExecutorService queries = Executors.newFixedThreadPool(3);
        try (CapturedLog log = CapturedLog.start()) {
            for (int i = 0; i < 3; i++) {
                Connection connection = db.dataSource().getConnection();
                busy.add(connection);
                sleeping.add(connection.createStatement());
            }
            try (Connection holder = db.dataSource().getConnection()) {
                Holder held = Holder.holdTheHorizon(holder);
                int holderPid = held.pid();
                long holderXid = held.xid();
                for (Statement statement : sleeping) {
                    queries.submit(() -> statement.execute("SELECT pg_sleep(60)"));
                }
                await().atMost(Duration.ofSeconds(20)).until(() -> ((Number) db.query(
                        "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query = 'SELECT pg_sleep(60)' "
                                + "AND backend_xmin::text::bigint = " + (holderXid & 0xFFFFFFFFL)).get(0)).intValue() == 3);
                makeDeadRows(8_000);
                awaitPinned(holderPid);
                HotTableVacuum vacuum = vacuum(Duration.ofHours(1));
                assertThat(vacuum.runOnce().vacuumed()).as("the vacuum that removes nothing").isTrue();
                assertThat(log.linesContaining("holds the vacuum horizon"))
                        .singleElement().asString()
                        .contains("session pid " + holderPid, "idle in transaction");
                assertThat(vacuum.runOnce().vacuumed()).as("waits: the holder was there before the vacuum began").isFalse();
                holder.rollback();
            }
        } finally {
            for (Statement statement : sleeping) {
                statement.cancel();
            }
            queries.shutdown();
            assertThat(queries.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
            for (Connection connection : busy) {
                connection.close();
            }
        }
    }

    @Test
    void vacuumsAgainOnlyOnceTheHorizonMoves() throws Exception {
        try (Connection holder = db.dataSource().getConnection()) {
            int holderPid = Holder.holdTheHorizon(holder).pid();
            makeDeadRows(8_000);
            awaitPinned(holderPid);
            HotTableVacuum vacuum = vacuum(Duration.ofHours(1));
            assertThat(vacuum.runOnce().vacuumed()).as("the first vacuum, which removes nothing").isTrue();
            assertThat(vacuum.runOnce().vacuumed()).as("the same transaction holds the horizon").isFalse();
            // Younger transactions come and go behind the holder: the horizon stays where it is.
            try (Connection other = db.dataSource().getConnection()) {
                Holder.holdTheHorizon(other);
                assertThat(vacuum.runOnce().vacuumed()).as("a younger transaction open as well").isFalse();
                other.rollback();
            }
            assertThat(vacuum.runOnce().vacuumed()).isFalse();
            assertThat(vacuum.vacuumsRun()).isEqualTo(1);
            holder.rollback();
            assertThat(vacuum.runOnce().vacuumed()).as("the holder ended").isTrue();
            await().atMost(Duration.ofSeconds(20)).until(() -> deadTuples() < 5_000);
        }
    }

    @Test
    void takesATransactionOpenForLessThanThePinsShortestForTraffic() throws Exception {
        try (CapturedLog log = CapturedLog.start(); Connection holder = db.dataSource().getConnection()) {
            int holderPid = Holder.holdTheHorizon(holder).pid();
            makeDeadRows(8_000);
            HotTableVacuum vacuum = vacuum(Duration.ofHours(1));
            assertThat(vacuum.runOnce().vacuumed()).isTrue();
            // Only if the vacuum came before the holder reached the shortest pin does this test what it says.
            assumeTrue(openNanos(holderPid) < HotTableVacuum.SHORTEST_PIN_NANOS,
                    "the server took longer than the shortest pin to make the dead rows");
            assertThat(log.linesContaining("holds the vacuum horizon")).isEmpty();
            assertThat(vacuum.runOnce().vacuumed()).as("not waiting for a holder taken for traffic").isTrue();
            holder.rollback();
        }
    }

    @Test
    void cleansTheIndexesWithoutParallelWorkers() throws Exception {
        makeDeadRows(8_000);
        String queueVacuum = db.sessions.getConfiguration().getMappedStatement("dev.queue.postgres.MaintenanceMapper.vacuumMessages")
                .getBoundSql(Map.of()).getSql().trim();
        assertThat(serverMessagesOf(queueVacuum))
                .as("what the server reported while running the queue's vacuum: " + queueVacuum)
                .isNotEmpty()
                .noneMatch(message -> message.contains("parallel vacuum worker"));
        // The same table and settings without the option: PostgreSQL plans a worker per index, so the check above
        // would see it if the option were lost.
        makeDeadRows(8_000);
        assertThat(serverMessagesOf("VACUUM (SKIP_LOCKED) \"" + db.schema + "\".messages"))
                .anyMatch(message -> message.contains("parallel vacuum worker"));
    }

    /**
     * Runs a statement where PostgreSQL would vacuum even the smallest index in parallel and reports its progress
     * messages (DEBUG2, which names the parallel workers it launches) to the client.
     */
    private List<String> serverMessagesOf(String vacuum) throws Exception {
        List<String> messages = new ArrayList<>();
        try (Connection connection = db.dataSource().getConnection(); Statement statement = connection.createStatement()) {
            statement.execute("SET min_parallel_index_scan_size = 0");
            statement.execute("SET max_parallel_maintenance_workers = 2");
            statement.execute("SET client_min_messages = debug2");
            try {
                statement.execute(vacuum);
                for (SQLWarning warning = statement.getWarnings(); warning != null; warning = warning.getNextWarning()) {
                    messages.add(warning.getMessage());
                }
            } finally {
                statement.execute("RESET client_min_messages");
                statement.execute("RESET max_parallel_maintenance_workers");
                statement.execute("RESET min_parallel_index_scan_size");
            }
        }
        return messages;
    }
}
