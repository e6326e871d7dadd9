package dev.queue.postgres;

import dev.queue.domain.port.AckCommand;
import dev.queue.domain.port.ClaimedMessage;
import dev.queue.domain.port.LeaseRef;
import dev.queue.domain.port.NewMessage;
import dev.queue.domain.port.PublishCommand;
import dev.queue.domain.port.StoredOutcome;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static dev.queue.domain.port.CommandTime.storeClock;
import static dev.queue.postgres.StoreFixture.NS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Unique keys under concurrency: the race where the holder of a key commits while another publisher waits for
 * it, concurrent publishers of one key, and keys freed and taken again while others publish them.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DedupRaceTest {

    private StoreFixture db;

    @BeforeAll
    void createSchema() {
        db = new StoreFixture("dedup", CompletedRetention.DELETE);
    }

    @AfterAll
    void dropSchema() {
        db.close();
    }

    private static NewMessage keyed(String key) {
        return new NewMessage(NS, "t", "{}", Map.of(), 0, 3, key, null, Duration.ZERO);
    }

    @Test
    void aPublisherWaitingForAnUncommittedHolderReportsTheHolderOnceItCommits() throws Exception {
        ExecutorService executor = Executors.newSingleThreadExecutor();
        try (Connection caller = db.pool.getConnection()) {
            caller.setAutoCommit(false);
            long holder = db.store.publishOn(caller, new PublishCommand(List.of(keyed("race-1")), storeClock())).get(0).id();

            // this statement cannot decide until the caller's transaction ends, and then runs with a snapshot
            // that does not show the committed holder: the store must look again instead of answering blindly
            Future<List<StoredOutcome>> waiting = executor.submit(() -> db.publishAll(List.of(keyed("race-1")), storeClock()));
            awaitBlockedOnALock();
            caller.commit();

            assertThat(waiting.get(10, TimeUnit.SECONDS)).containsExactly(new StoredOutcome(holder, true));
        } finally {
            executor.shutdownNow();
        }
    }

    @Test
    void aPublisherWaitingForAHolderThatRollsBackStoresItsMessage() throws Exception {
        ExecutorService executor = Executors.newSingleThreadExecutor();
        try (Connection caller = db.pool.getConnection()) {
            caller.setAutoCommit(false);
            long holder = db.store.publishOn(caller, new PublishCommand(List.of(keyed("race-2")), storeClock())).get(0).id();

            Future<List<StoredOutcome>> waiting = executor.submit(() -> db.publishAll(List.of(keyed("race-2")), storeClock()));
            awaitBlockedOnALock();
            caller.rollback();

            StoredOutcome outcome = waiting.get(10, TimeUnit.SECONDS).get(0);
            assertThat(outcome.duplicate()).isFalse();
            assertThat(outcome.id()).isNotEqualTo(holder);
            assertThat(db.query("SELECT id FROM $s.messages WHERE unique_key = 'race-2'")).containsExactly(outcome.id());
        } finally {
            executor.shutdownNow();
        }
    }

    @Test
    void concurrentPublishersOfOneKeyStoreExactlyOneRow() throws Exception {
        int threads = 4;
        int rounds = 100;
        CyclicBarrier barrier = new CyclicBarrier(threads);
        List<List<StoredOutcome>> perThread = runAll(threads, () -> {
            List<StoredOutcome> mine = new ArrayList<>();
            for (int round = 0; round < rounds; round++) {
                barrier.await(10, TimeUnit.SECONDS);
                mine.add(db.publishAll(List.of(keyed("same-" + round)), storeClock()).get(0));
            }
            return mine;
        });

        for (int round = 0; round < rounds; round++) {
            List<StoredOutcome> outcomes = new ArrayList<>();
            for (List<StoredOutcome> mine : perThread) {
                outcomes.add(mine.get(round));
            }
            assertThat(outcomes).filteredOn(o -> !o.duplicate()).as("round %d", round).hasSize(1);
            long winner = outcomes.stream().filter(o -> !o.duplicate()).findFirst().orElseThrow().id();
            assertThat(outcomes).extracting(StoredOutcome::id).as("round %d", round).containsOnly(winner);
        }
        assertThat(db.query("SELECT count(*) FROM $s.messages WHERE unique_key LIKE 'same-%'")).containsExactly((long) rounds);
    }

    @Test
    void aKeyFreedAndTakenAgainWhileOthersPublishItIsNeverReportedAsHeldByAnUnknownMessage() throws Exception {
        Set<Long> stored = ConcurrentHashMap.newKeySet();
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService executor = Executors.newFixedThreadPool(3);
        try {
            // one worker keeps completing whatever holds the key
            Future<?> completer = executor.submit(() -> {
                long token = 0;
                while (!stop.get()) {
                    for (ClaimedMessage claimed : db.claim("t", 10, ++token, storeClock())) {
                        db.store.messageAckIfLeased(new AckCommand(NS, List.of(new LeaseRef(claimed.id(), token)), storeClock()));
                    }
                }
                return null;
            });
            List<Future<List<StoredOutcome>>> publishers = new ArrayList<>();
            for (int p = 0; p < 2; p++) {
                publishers.add(executor.submit(() -> {
                    List<StoredOutcome> mine = new ArrayList<>();
                    for (int i = 0; i < 300; i++) {
                        StoredOutcome outcome = db.publishAll(List.of(keyed("churn")), storeClock()).get(0);
                        if (!outcome.duplicate()) {
                            stored.add(outcome.id());
                        }
                        mine.add(outcome);
                    }
                    return mine;
                }));
            }
            List<StoredOutcome> all = new ArrayList<>();
            for (Future<List<StoredOutcome>> publisher : publishers) {
                all.addAll(publisher.get(60, TimeUnit.SECONDS));
            }
            stop.set(true);
            completer.get(10, TimeUnit.SECONDS);

            assertThat(all).hasSize(600);
            assertThat(stored).isNotEmpty();
            // a duplicate always names a message that really was stored under the key
            assertThat(all).filteredOn(StoredOutcome::duplicate).allSatisfy(o -> assertThat(stored).contains(o.id()));
            assertThat(db.query("SELECT count(*) FROM $s.messages WHERE unique_key = 'churn'"))
                    .first().satisfies(n -> assertThat((Long) n).isLessThanOrEqualTo(1L));
        } finally {
            stop.set(true);
            executor.shutdownNow();
        }
    }

    private void awaitBlockedOnALock() {
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10)).until(() -> !db.query(
                "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND position('._engine_publish(' IN query) > 0"
                        + " AND query LIKE '%" + db.schema + "%'").isEmpty());
    }

    private static <T> List<T> runAll(int threads, Callable<T> task) throws Exception {
        ExecutorService executor = Executors.newFixedThreadPool(threads);
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                futures.add(executor.submit(task));
            }
            List<T> results = new ArrayList<>();
            for (Future<T> future : futures) {
                results.add(future.get(60, TimeUnit.SECONDS));
            }
            return results;
        } finally {
            executor.shutdownNow();
        }
    }
}
