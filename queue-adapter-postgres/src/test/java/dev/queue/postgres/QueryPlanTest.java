package dev.queue.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.queue.domain.port.AckCommand;
import dev.queue.domain.port.ClaimCommand;
import dev.queue.domain.port.ClaimPosition;
import dev.queue.domain.port.ClaimedMessage;
import dev.queue.domain.port.DeadLetterCommand;
import dev.queue.domain.port.LeaseRef;
import dev.queue.domain.port.NewMessage;
import dev.queue.domain.port.PublishCommand;
import dev.queue.domain.port.RedriveCommand;
import dev.queue.domain.port.StatsQuery;
import dev.queue.domain.port.StoredOutcome;
import org.apache.ibatis.session.SqlSessionFactory;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static dev.queue.domain.port.CommandTime.at;
import static dev.queue.domain.port.CommandTime.storeClock;
import static dev.queue.postgres.StoreFixture.NS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The plans of the store's statements. A queue table's statistics are always stale (analyzed while everything
 * was pending, "running" looks empty, and the other way round), and after a few executions pgjdbc's prepared
 * statements may run a generic plan that guesses 10 rows for every array. Every statement must keep a plan that
 * is an index probe or a hash per element under both, never a scan per element.
 */
@Tag("slow")
class QueryPlanTest {

    private static final Instant NOW = Instant.parse("2030-01-01T00:00:00Z");

    @Test
    void theClaimReadsThePartialIndexOfPendingRows() {
        try (StoreFixture db = new StoreFixture("plan", CompletedRetention.DELETE)) {
            fill(db, 10_000, 20);
            db.claim("t1", 300, 1, at(NOW));
            db.execute("ANALYZE $s.messages");

            for (List<String> topics : List.of(List.of("t3"), List.of("t3", "t4", "t5"))) {
                String plan = String.join("\n", db.explainClaim(
                        new ClaimCommand(NS, topics, "w", 10, Duration.ofSeconds(30), 2, at(NOW))));
                assertThat(plan).contains("messages_claim_idx").contains("LockRows").doesNotContain("Seq Scan");
            }
        }
    }

    /**
     * While a transaction holds back vacuum, the index entries of claimed and acknowledged messages stay at the head
     * of the claim order. A claim that resumes at its position reads about as much as on a clean table; one from the
     * head steps over all of them: its reads grow with every message claimed, a resumed claim's do not.
     */
    @Test
    void aResumedClaimStartsAtItsPositionWhileAnOldTransactionKeepsClaimedEntries() throws SQLException {
        try (StoreFixture db = new StoreFixture("plan", CompletedRetention.DELETE);
             Connection horizon = db.dataSource().getConnection()) {
            for (int start = 0; start < 20_000; start += 1000) {
                List<NewMessage> messages = new ArrayList<>();
                for (int i = 0; i < 1000; i++) {
                    messages.add(new NewMessage(NS, "t0", "{}", Map.of(), 0, 3, null, null, Duration.ZERO));
                }
                db.publishAll(messages, at(NOW));
            }
            db.execute("ANALYZE $s.messages");
            horizon.setAutoCommit(false);
            try (Statement pin = horizon.createStatement()) {
                pin.execute("SELECT txid_current()");
            }
            ClaimPosition position = null;
            List<Long> resumed = new ArrayList<>();
            List<Long> fromTheHead = new ArrayList<>();
            for (int batch = 1; batch <= 15; batch++) {
                List<ClaimedMessage> claimed = db.claim("t0", 1000, batch, at(NOW));
                position = claimed.get(claimed.size() - 1).position();
                db.execute("DELETE FROM $s.messages WHERE state = 'running'");
                if (batch == 5 || batch == 15) {
                    resumed.add(db.claimBuffers(new ClaimCommand(NS, List.of("t0"), "w", 10, Duration.ofSeconds(30), 99, at(NOW),
                            Map.of("t0", position))));
                    fromTheHead.add(db.claimBuffers(new ClaimCommand(NS, List.of("t0"), "w", 10, Duration.ofSeconds(30), 99, at(NOW))));
                }
            }
            horizon.rollback();

            assertThat(fromTheHead.get(1)).as("buffers of claims from the head after 5,000 and 15,000 claimed: %s", fromTheHead)
                    .isGreaterThan(fromTheHead.get(0) + 200);
            assertThat(resumed.get(1)).as("buffers of resumed claims after 5,000 and 15,000 claimed: %s", resumed)
                    .isLessThanOrEqualTo(resumed.get(0) + 20);
        }
    }

    @Test
    void genericPlansStayIndexProbesOrHashesWhateverTheStatisticsSay() {
        try (StoreFixture db = new StoreFixture("plans", CompletedRetention.DELETE)) {
            fill(db, 20_000, 1);

            // statistics taken while every message is pending: the running ones look like none
            db.execute("ANALYZE $s.messages");
            checkPlans(db);

            // and while every message is running: the pending ones look like none
            db.claim("t0", 20_000, 1, at(NOW));
            db.execute("ANALYZE $s.messages");
            checkPlans(db);
        }
    }

    @Test
    void genericPlansStayIndexProbesWhenTheStatisticsSayTheTableIsEmpty() {
        try (StoreFixture db = new StoreFixture("emptystats", CompletedRetention.DELETE)) {
            // What a busy queue does all day: a vacuum finds the table empty for a moment and records 0 rows, and
            // the planner then takes the hot table for a single row however many arrive before the next one. A plan
            // built on that (the leases joined to a scan of the whole primary key) kept one acknowledgement running
            // for 22.9 s with 300,000 rows in the table.
            db.execute("ALTER TABLE $s.messages SET (autovacuum_enabled = false)");
            fill(db, 20_000, 1);
            db.execute("DELETE FROM $s.messages");
            db.execute("VACUUM $s.messages");
            fill(db, 20_000, 1);
            checkPlans(db);
            for (String statement : List.of("complete", "retry", "bury", "extend", "release", "claim")) {
                assertThat(unboundedScansOfMessages(genericPlan(db, statement))).as(statement).isEmpty();
            }
        }
    }

    /**
     * A vacuum that catches up after a long-held horizon can record no live rows over tens of thousands of pages, and
     * an index bloated by dead entries. A bench run planned the claim from such figures right after the release: it
     * read every due row of the topic through a bitmap on the claim index and sorted them, until the next analyze.
     * Reproducing that plan takes a table of that size; here the figures are written into the catalog of a small one
     * (superuser only), where without the setting the claim still plans a bitmap (on the primary key), and the claim
     * must plan none: its reads are in index order only.
     */
    @Test
    void theClaimPlansNoBitmapWhenAVacuumLeftFewRowsOverManyPages() {
        try (StoreFixture db = new StoreFixture("caughtup", CompletedRetention.DELETE)) {
            db.execute("ALTER TABLE $s.messages SET (autovacuum_enabled = false)");
            fill(db, 20_000, 1);
            assumeTrue(db.isSuperuser(), "writing the planner's statistics takes a superuser");
            db.execute("UPDATE pg_class SET reltuples = 100, relpages = 2000 WHERE oid = '$s.messages'::regclass");
            db.execute("UPDATE pg_class SET reltuples = 100, relpages = 20000 WHERE oid = '$s.messages_claim_idx'::regclass");
            assertThat(genericPlan(db, "claim")).as("claim")
                    .contains("Index Scan using messages_claim_idx").doesNotContain("Bitmap");
        }
    }

    /** Scans of the hot table without an index condition: they read the whole table or index, once or per row. */
    private static List<String> unboundedScansOfMessages(String plan) {
        List<String> unbounded = new ArrayList<>();
        String[] lines = plan.split("\n");
        for (int i = 0; i < lines.length; i++) {
            if (!lines[i].matches(".*(Seq Scan|Index Scan|Index Only Scan|Bitmap Heap Scan)( using \\S+)? on \\S*messages .*")) {
                continue;
            }
            boolean bounded = false;
            for (int j = i + 1; j < lines.length && !lines[j].contains("->"); j++) {
                bounded |= lines[j].contains("Index Cond") || lines[j].contains("Recheck Cond") || lines[j].contains("TID Cond");
            }
            if (!bounded) {
                unbounded.add(lines[i].strip());
            }
        }
        return unbounded;
    }

    private void checkPlans(StoreFixture db) {
        for (String statement : List.of("complete", "retry", "bury", "extend", "release")) {
            assertThat(genericPlan(db, statement)).as(statement)
                    .contains("messages_pkey").doesNotContain("messages_lease_idx").doesNotContain("Seq Scan");
        }
        assertThat(genericPlan(db, "publish")).as("publish")
                .contains("hashed SubPlan").contains("messages_unique_key_idx")
                .doesNotContain("Semi Join").doesNotContain("Seq Scan");
        assertThat(genericPlan(db, "redrive")).as("redrive")
                .contains("hashed SubPlan").contains("ctid = ANY").doesNotContain("Semi Join");
        // Picked rows are updated by primary key probes: a merge join would read the primary key from its start.
        assertThat(genericPlan(db, "claim")).as("claim").contains("messages_claim_idx").contains("messages_pkey")
                .doesNotContain("Merge Join").doesNotContain("Seq Scan");
        assertThat(genericPlan(db, "rescue")).as("rescue").contains("messages_lease_idx");
        assertThat(genericPlan(db, "nextDueAt")).as("nextDueAt").contains("messages_claim_idx");
        // ordering keys: each key's head and next waiting message are index probes, never a scan of the keyed rows
        String keyed = genericPlan(db, "publishKeyed");
        assertThat(keyed).as("publishKeyed").contains("messages_ordering_head_idx").contains("messages_ordering_waiting_idx")
                .doesNotContain("Seq Scan");
        String advance = genericPlan(db, "advance");
        assertThat(advance).as("advance").contains("messages_ordering_head_idx").contains("messages_ordering_waiting_idx")
                .doesNotContain("Seq Scan");
        assertThat(unboundedScansOfMessages(advance)).as("advance").isEmpty();
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void batchesOfThousandsWorkUnderGenericPlansAndStaleStatistics() {
        MigratedSchema migrated = PostgresTestServer.migratedSchema("generic");
        String schema = migrated.schema();
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(migrated.jdbcUrl());
        config.setMaximumPoolSize(2);
        config.setConnectionInitSql("SET plan_cache_mode = force_generic_plan");
        try (migrated; HikariDataSource pool = new HikariDataSource(config)) {
            SqlSessionFactory sessions = MyBatisSupport.sessionFactory(pool, schema);
            PostgresMessageStore store = new PostgresMessageStore(sessions, CompletedRetention.DELETE);
            List<NewMessage> batch = new ArrayList<>();
            for (int i = 0; i < 10_000; i++) {
                batch.add(new NewMessage(NS, "t", "{}", Map.of(), 0, 3, i % 2 == 0 ? "k" + i : null, null, Duration.ZERO));
            }
            assertThat(store.messageInsertMany(new PublishCommand(batch, storeClock()))).noneMatch(StoredOutcome::duplicate);
            migrated.execute("ANALYZE \"" + schema + "\".messages");
            List<NewMessage> keyed = batch.stream().filter(m -> m.uniqueKey() != null).limit(2_000).toList();
            assertThat(store.messageInsertMany(new PublishCommand(keyed, storeClock()))).allMatch(StoredOutcome::duplicate);

            List<ClaimedMessage> claimed = store.messageClaimDue(new ClaimCommand(NS, List.of("t"), "w", 10_000, Duration.ofMinutes(5), 1, storeClock()));
            assertThat(claimed).hasSize(10_000);
            List<LeaseRef> half = new ArrayList<>();
            for (int i = 0; i < claimed.size(); i += 2) {
                half.add(new LeaseRef(claimed.get(i).id(), 1));
            }
            assertThat(store.messageAckIfLeased(new AckCommand(NS, half, storeClock()))).hasSize(5_000);
            for (int i = 1; i < 2_000; i += 2) {
                store.messageDeadLetterIfLeased(new DeadLetterCommand(NS, new LeaseRef(claimed.get(i).id(), 1), "x", storeClock()));
            }
            assertThat(store.deadLetterRedrive(RedriveCommand.batch(NS, "t", 0, 1000, storeClock())).redriven()).isEqualTo(1_000);
            assertThat(store.namespaceStats(new StatsQuery(NS)).completed()).isEqualTo(5_000);
            assertThat(store.namespaceStats(new StatsQuery(NS)).pending()).isEqualTo(1_000);
        }
    }

    private static void fill(StoreFixture db, int count, int topics) {
        for (int start = 0; start < count; start += 1000) {
            List<NewMessage> messages = new ArrayList<>();
            for (int i = start; i < start + 1000; i++) {
                messages.add(new NewMessage(NS, "t" + (i % topics), "{}", Map.of(), i % 10, 3, i % 2 == 0 ? "k" + i : null,
                        null, Duration.ZERO));
            }
            db.publishAll(messages, at(NOW));
        }
    }

    /**
     * The generic plans of an engine function's statements, with the parameters the store would pass (the call is
     * rolled back). PL/pgSQL prepares each statement of a function and, like any prepared statement, switches to
     * its generic plan after a few executions unless that looks costlier.
     */
    private static String genericPlan(StoreFixture db, String statement) {
        Long[] one = {1L};
        List<String> plans = switch (statement) {
            case "complete" -> db.nestedPlans(true, "SELECT * FROM $s._engine_complete(?, ?, ?, false, NULL, false)", NS, one, one);
            case "retry" -> db.nestedPlans(true, "SELECT * FROM $s._engine_retry(?, ?, ?, 1, 'e', NULL, true)", NS, one, one);
            case "bury" -> db.nestedPlans(true, "SELECT * FROM $s._engine_bury(?, ?, ?, 'e', NULL, NULL)", NS, one, one);
            case "extend" -> db.nestedPlans(true, "SELECT * FROM $s._engine_extend(?, ?, ?, 1, NULL)", NS, one, one);
            case "release" -> db.nestedPlans(true, "SELECT * FROM $s._engine_release(?, ?, ?, true)", NS, one, one);
            case "claim" -> db.nestedPlans(true, "SELECT * FROM $s._engine_claim(?, ?, 'w', 10, 1, 1, NULL, false, NULL, NULL, NULL, NULL)",
                    NS, new String[] {"t"});
            case "publish" -> db.nestedPlans(true, "SELECT * FROM $s._engine_publish(?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, true, NULL, NULL)",
                    new String[] {NS}, new String[] {"t"}, new String[] {"{}"}, new String[] {"{}"}, new Integer[] {0},
                    new Integer[] {1}, new String[] {"k"}, new Long[] {null}, new Long[] {0L});
            case "publishKeyed" -> db.nestedPlans(true,
                    "SELECT * FROM $s._engine_publish(?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, true, NULL, ?)",
                    new String[] {NS, NS}, new String[] {"t", "t"}, new String[] {"{}", "{}"}, new String[] {"{}", "{}"},
                    new Integer[] {0, 0}, new Integer[] {1, 1}, new String[] {null, null}, new Long[] {null, null},
                    new Long[] {0L, 0L}, new String[] {"ok", "ok"});
            case "advance" -> db.nestedPlans(true, "SELECT $s._ordering_advance(?, ?, ?, NULL, true)",
                    new String[] {NS}, new String[] {"t"}, new String[] {"ok"});
            case "redrive" -> db.nestedPlans(true, "SELECT * FROM $s._engine_redrive(?, 't', NULL, 0, 10, NULL, true, NULL)", NS);
            case "rescue" -> db.nestedPlans(true, "SELECT * FROM $s._engine_rescue(?, 10, NULL, true, NULL)", NS);
            case "nextDueAt" -> db.nestedPlans(true, "SELECT $s._engine_next_due(?, ?, NULL)", NS, new String[] {"t"});
            default -> throw new IllegalArgumentException("no engine function for " + statement);
        };
        assertThat(plans).as("plans logged for " + statement).isNotEmpty();
        return String.join("\n", plans);
    }
}
