package dev.queue.postgres;

import dev.queue.domain.port.AckCommand;
import dev.queue.domain.port.ClaimCommand;
import dev.queue.domain.port.CommandTime;
import dev.queue.domain.port.LeaseRef;
import dev.queue.domain.port.NewMessage;
import dev.queue.domain.port.NextDueQuery;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static dev.queue.domain.port.CommandTime.at;
import static dev.queue.domain.port.CommandTime.storeClock;
import static dev.queue.postgres.StoreFixture.NS;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The statements every message passes through stay prepared on the server and planned once. (Each calls an engine
 * function, whose own statements PL/pgSQL prepares once per session; QueryPlanTest checks their generic plans.) Parameters that are
 * sometimes null (a publish without a due time, a wake-up the limiter held back, a command without a clock) must
 * reach the server with the same type either way: the driver prepares a statement afresh whenever the types of
 * its parameters change, and a freshly prepared statement is parsed and planned again for its first executions.
 */
class PreparedStatementReuseTest {

    private static final int ROUNDS = 40;

    private StoreFixture db;

    @BeforeEach
    void createSchema() {
        // One connection, so every statement below runs on the session whose prepared statements are inspected.
        db = new StoreFixture("reuse", CompletedRetention.DELETE, 1);
    }

    @AfterEach
    void dropSchema() {
        db.close();
    }

    @Test
    void publishClaimCompleteAndNextDueArePreparedOnceWhetherOptionalParametersAreSetOrNot() throws SQLException {
        Instant t0 = Instant.parse("2030-01-01T00:00:00Z");
        db.publish(StoreFixture.message("t"), storeClock()); // registers the topic: later publishes take the fast path
        NotifyLimiter notifyEach = new NotifyLimiter(Duration.ZERO, key -> { });
        // a window that never closes: every publish under it is held back and takes the quiet insert
        NotifyLimiter holdBack = new NotifyLimiter(Duration.ofHours(1), key -> { });
        holdBack.notifyNow(NS + "/t");
        int completes = 0;
        for (int i = 0; i < ROUNDS; i++) {
            boolean odd = i % 2 == 1;
            CommandTime now = odd ? at(t0.plusSeconds(i)) : storeClock();
            NewMessage message = new NewMessage(NS, "t", "{}", Map.of(), 0, 3,
                    null, odd ? t0 : null, odd ? null : Duration.ofMillis(i));
            db.store.useNotifyLimiter(notifyEach);
            db.publish(message, now);
            db.store.useNotifyLimiter(holdBack);
            db.publish(message, now);
            db.store.useNotifyLimiter(notifyEach);
            db.publishAll(List.of(message, message), now);
            var claimed = db.store.messageClaimDue(new ClaimCommand(NS, List.of("t"), "w", 10, Duration.ofSeconds(30), i, odd ? storeClock() : at(t0.plusSeconds(3600))));
            List<LeaseRef> leases = new ArrayList<>();
            claimed.forEach(c -> leases.add(new LeaseRef(c.id(), c.leaseToken())));
            if (!leases.isEmpty()) { // an empty complete sends nothing
                db.store.messageAckIfLeased(new AckCommand(NS, leases, now));
                completes++;
            }
            // an idle subscriber reads this before each claim
            db.store.messageNextDueAt(new NextDueQuery(NS, List.of("t"), now));
        }

        Map<String, long[]> plans = plansByStatement();
        holdBack.close();
        // a publish with and without its wake-up is one statement: the held-back key is a typed null
        assertThat(plans).containsOnlyKeys("publishOne", "publishFast", "claim", "complete", "nextDueAt");
        Map<String, Integer> executions = Map.of("publishOne", 2 * ROUNDS, "publishFast", ROUNDS,
                "claim", ROUNDS, "complete", completes, "nextDueAt", ROUNDS);
        assertThat(completes).as("rounds that completed something").isGreaterThanOrEqualTo(ROUNDS / 2);
        plans.forEach((name, counts) -> assertPlannedOnce(name, counts, executions.get(name)));
    }

    @Test
    void oneMessageClaimsAndCompletesStayOnTheGenericPlanOverABusyTable() throws SQLException {
        // Thousands of rows, analysed: now the estimates tell a one-element array from the ten rows the generic
        // plan guesses for an array parameter, and a plan for the actual element looked cheaper than the generic
        // one, so every claim and acknowledgement of a quiet subscriber was planned afresh.
        List<NewMessage> hundred = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            hundred.add(StoreFixture.message("t"));
        }
        for (int i = 0; i < 30; i++) {
            db.publishAll(hundred, storeClock());
        }
        db.execute("ANALYZE $s.messages");
        for (int i = 0; i < ROUNDS; i++) {
            var claimed = db.claim("t", 1, i, storeClock());
            assertThat(claimed).hasSize(1);
            db.store.messageAckIfLeased(new AckCommand(NS, List.of(new LeaseRef(claimed.get(0).id(), claimed.get(0).leaseToken())), storeClock()));
        }
        Map<String, long[]> plans = plansByStatement();
        for (String name : List.of("claim", "complete")) {
            assertThat(plans).containsKey(name);
            assertPlannedOnce(name, plans.get(name), ROUNDS);
        }
    }

    /** {generic, custom} plans of one statement run {@code executions} times: on its generic plan after the first few. */
    private static void assertPlannedOnce(String name, long[] counts, int executions) {
        // PostgreSQL plans the first five executions for their parameters, then settles on the generic plan
        // unless that looks costlier than the custom ones (nextDueAt did: an array parameter's unnest is
        // guessed at 10 rows in the generic plan, so it was planned afresh at every call, 0.2 ms each).
        assertThat(counts[1]).as(name + ": custom plans").isLessThanOrEqualTo(5);
        // The driver runs a statement's first five executions unnamed (prepareThreshold) before preparing it.
        assertThat(counts[0] + counts[1]).as(name + ": executions of the one prepared statement")
                .isGreaterThanOrEqualTo(executions - 5L);
    }

    /** The queue's statements prepared on the fixture's one connection: name -> {generic plans, custom plans}. */
    private Map<String, long[]> plansByStatement() throws SQLException {
        Map<String, long[]> plans = new java.util.TreeMap<>();
        try (Connection connection = db.pool.getConnection(); Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements")) {
            while (rows.next()) {
                String sql = rows.getString(1);
                String name = sql.contains("._engine_publish_fast(") ? "publishFast"
                        : sql.contains("._engine_publish_one(") ? "publishOne"
                        : sql.contains("._engine_claim(") ? "claim"
                        : sql.contains("._engine_complete(") ? "complete"
                        : sql.contains("._engine_next_due(") ? "nextDueAt" : null;
                if (name != null) {
                    long[] previous = plans.put(name, new long[] {rows.getLong(2), rows.getLong(3)});
                    assertThat(previous).as("a second server-side statement for " + name).isNull();
                }
            }
        }
        return plans;
    }
}
