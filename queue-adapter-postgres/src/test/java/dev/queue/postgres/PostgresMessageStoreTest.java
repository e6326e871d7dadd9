package dev.queue.postgres;

import dev.queue.api.DeadLetter;
import dev.queue.api.MessageInfo;
import dev.queue.api.MessageState;
import dev.queue.api.NamespaceStats;
import dev.queue.api.Outcome;
import dev.queue.api.StoreUnavailableException;
import dev.queue.domain.port.AckCommand;
import dev.queue.domain.port.ClaimCommand;
import dev.queue.domain.port.ClaimPosition;
import dev.queue.domain.port.ClaimedMessage;
import dev.queue.domain.port.DeadLetterCommand;
import dev.queue.domain.port.DeadLetterQuery;
import dev.queue.domain.port.ExtendCommand;
import dev.queue.domain.port.LeaseRef;
import dev.queue.domain.port.MessageRef;
import dev.queue.domain.port.NewMessage;
import dev.queue.domain.port.NextDueQuery;
import dev.queue.domain.port.PurgeCommand;
import dev.queue.domain.port.RedriveCommand;
import dev.queue.domain.port.RedriveResult;
import dev.queue.domain.port.ReleaseCommand;
import dev.queue.domain.port.RescueCommand;
import dev.queue.domain.port.RescueResult;
import dev.queue.domain.port.RetryCommand;
import dev.queue.domain.port.StatsQuery;
import dev.queue.domain.port.StoredOutcome;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static dev.queue.domain.port.CommandTime.at;
import static dev.queue.domain.port.CommandTime.storeClock;
import static dev.queue.postgres.StoreFixture.NS;
import static dev.queue.postgres.StoreFixture.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** The port, statement by statement, on a real server: every method of {@link PostgresMessageStore}. */
class PostgresMessageStoreTest {

    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00.123456Z");
    private static final Duration LEASE = Duration.ofSeconds(30);

    private StoreFixture db;
    private PostgresMessageStore store;

    @BeforeEach
    void createSchema() {
        db = new StoreFixture("store", CompletedRetention.DELETE);
        store = db.store;
    }

    @AfterEach
    void dropSchema() {
        db.close();
    }

    private static LeaseRef lease(ClaimedMessage claimed) {
        return new LeaseRef(claimed.id(), claimed.leaseToken());
    }

    private MessageInfo info(long id) {
        return store.messageFind(new MessageRef(NS, id)).orElseThrow();
    }

    // ------------------------------------------------------------------ publish

    @Test
    void storesThePayloadByteForByteAndEveryFieldOfTheMessage() {
        String json = "{ \"b\" : 1,\n  \"a\": [1.50, 2e3, \"\\u00e9t\u00e9 \ud83d\ude80\"], \"b\": null }";
        NewMessage message = new NewMessage(NS, "t", json, Map.of("h1", "v1", "trace-id", "abc"), 7, 5, "key-1", null,
                Duration.ofSeconds(10));

        long id = db.publish(message, at(T0));

        MessageInfo info = info(id);
        assertThat(info.json()).isEqualTo(json);
        assertThat(info.headers()).isEqualTo(Map.of("h1", "v1", "trace-id", "abc"));
        assertThat(info.state()).isEqualTo(MessageState.PENDING);
        assertThat(info.priority()).isEqualTo(7);
        assertThat(info.maxAttempts()).isEqualTo(5);
        assertThat(info.attempts()).isZero();
        assertThat(info.uniqueKey()).isEqualTo("key-1");
        assertThat(info.publishedAt()).isEqualTo(T0);
        assertThat(info.runAt()).isEqualTo(T0.plusSeconds(10));
        assertThat(info.leaseUntil()).isNull();
        assertThat(info.worker()).isNull();
        assertThat(db.query("SELECT data_type FROM information_schema.columns WHERE table_schema = '" + db.schema
                + "' AND table_name = 'messages' AND column_name = 'payload'")).containsExactly("json");
    }

    @Test
    void runAtWinsOverDelayAndKeepsMicroseconds() {
        Instant runAt = Instant.parse("2031-02-03T04:05:06.654321Z");
        long id = db.publish(new NewMessage(NS, "t", "{}", Map.of(), 0, 1, null, runAt, Duration.ofDays(3)), at(T0));

        assertThat(info(id).runAt()).isEqualTo(runAt);
    }

    @Test
    void withoutACommandTimeTheDatabaseClockDecides() {
        Instant before = Instant.now();
        long id = db.publish(new NewMessage(NS, "t", "{}", Map.of(), 0, 1, null, null, Duration.ofMinutes(1)), storeClock());

        MessageInfo info = info(id);
        assertThat(info.publishedAt()).isCloseTo(before, within(5, ChronoUnit.SECONDS));
        assertThat(info.runAt()).isEqualTo(info.publishedAt().plus(Duration.ofMinutes(1)));
        assertThat(store.messageClaimDue(new ClaimCommand(NS, List.of("t"), "w", 10, LEASE, 1, storeClock()))).isEmpty();
    }

    @Test
    void publishAllStoresInOrderWithGrowingIds() {
        List<NewMessage> batch = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            batch.add(message(NS, "t" + (i % 3), "{\"i\":" + i + "}"));
        }

        List<StoredOutcome> outcomes = db.publishAll(batch, at(T0));

        assertThat(outcomes).hasSize(500).noneMatch(StoredOutcome::duplicate);
        for (int i = 1; i < outcomes.size(); i++) {
            assertThat(outcomes.get(i).id()).isGreaterThan(outcomes.get(i - 1).id());
        }
        assertThat(info(outcomes.get(42).id()).json()).isEqualTo("{\"i\":42}");
        assertThat(info(outcomes.get(42).id()).topic()).isEqualTo("t0");
    }

    @Test
    void aBatchIsAllOrNothing() {
        List<NewMessage> batch = List.of(message(NS, "t", "{}"), message(NS, "t", "{not json"));

        assertThatThrownBy(() -> db.publishAll(batch, at(T0)))
                .isInstanceOf(StoreUnavailableException.class)
                .hasMessageContaining("publish")
                .hasMessageContaining("22P02");
        assertThat(db.count("messages")).isZero();
        assertThat(db.count("topics")).isZero();
    }

    // ------------------------------------------------------------------ dedup

    @Test
    void aKeyHeldByAPendingOrRunningMessageMakesADuplicateOfTheHolder() {
        NewMessage keyed = new NewMessage(NS, "t", "{}", Map.of(), 0, 3, "k", null, Duration.ZERO);
        long holder = db.publish(keyed, at(T0));

        assertThat(db.publishAll(List.of(keyed), at(T0))).containsExactly(new StoredOutcome(holder, true));
        db.claimOne("t", 9, at(T0));
        assertThat(db.publishAll(List.of(keyed), at(T0))).containsExactly(new StoredOutcome(holder, true));
        // the same key in another topic or namespace is another key
        assertThat(db.publishAll(List.of(new NewMessage(NS, "u", "{}", Map.of(), 0, 3, "k", null, Duration.ZERO),
                new NewMessage("other", "t", "{}", Map.of(), 0, 3, "k", null, Duration.ZERO)), at(T0)))
                .noneMatch(StoredOutcome::duplicate);
    }

    @Test
    void withinABatchALaterMessageWithTheSameKeyIsADuplicateOfTheFirst() {
        NewMessage a = new NewMessage(NS, "t", "{\"n\":1}", Map.of(), 0, 3, "k", null, Duration.ZERO);
        NewMessage b = new NewMessage(NS, "t", "{\"n\":2}", Map.of(), 0, 3, "k", null, Duration.ZERO);
        NewMessage plain = message("t");

        List<StoredOutcome> outcomes = db.publishAll(List.of(plain, a, b, plain, b), at(T0));

        assertThat(outcomes).extracting(StoredOutcome::duplicate).containsExactly(false, false, true, false, true);
        assertThat(outcomes.get(2).id()).isEqualTo(outcomes.get(1).id());
        assertThat(outcomes.get(4).id()).isEqualTo(outcomes.get(1).id());
        assertThat(info(outcomes.get(1).id()).json()).isEqualTo("{\"n\":1}");
        assertThat(db.count("messages")).isEqualTo(3);
    }

    @Test
    void completedAndDeadMessagesFreeTheirKey() {
        NewMessage keyed = new NewMessage(NS, "t", "{}", Map.of(), 0, 3, "k", null, Duration.ZERO);
        db.publish(keyed, at(T0));
        ClaimedMessage first = db.claimOne("t", 1, at(T0));
        store.messageAckIfLeased(new AckCommand(NS, List.of(lease(first)), at(T0)));

        long second = db.publish(keyed, at(T0));
        assertThat(second).isNotEqualTo(first.id());
        ClaimedMessage claimed = db.claimOne("t", 2, at(T0));
        store.messageDeadLetterIfLeased(new DeadLetterCommand(NS, lease(claimed), "boom", at(T0)));

        assertThat(db.publishAll(List.of(keyed), at(T0)).get(0).duplicate()).isFalse();
    }

    // ------------------------------------------------------------------ claim

    @Test
    void claimsByPriorityThenDueTimeThenIdAndLeasesWhatItReturns() {
        long late = db.publish(new NewMessage(NS, "t", "{}", Map.of(), 0, 3, null, T0.minusSeconds(1), null), at(T0));
        long urgent = db.publish(new NewMessage(NS, "t", "{}", Map.of(), 0, 3, null, T0, null), at(T0));
        long early = db.publish(new NewMessage(NS, "t", "{}", Map.of(), 0, 3, null, T0.minusSeconds(5), null), at(T0));
        long low = db.publish(new NewMessage(NS, "t", "{}", Map.of(), 9, 3, null, T0.minusSeconds(60), null), at(T0));
        long sameTimeA = db.publish(new NewMessage(NS, "t", "{}", Map.of(), 1, 3, null, T0, null), at(T0));
        long sameTimeB = db.publish(new NewMessage(NS, "t", "{}", Map.of(), 1, 3, null, T0, null), at(T0));
        db.publish(new NewMessage(NS, "t", "{}", Map.of(), 0, 3, null, T0.plusMillis(1), null), at(T0));
        db.publish(message("other-ns", "t", "{}"), at(T0));

        List<ClaimedMessage> claimed = store.messageClaimDue(new ClaimCommand(NS, List.of("t"), "worker-7", 10, LEASE, 77, at(T0)));

        assertThat(claimed).extracting(ClaimedMessage::id).containsExactly(early, late, urgent, sameTimeA, sameTimeB, low);
        ClaimedMessage first = claimed.get(0);
        assertThat(first.attempt()).isEqualTo(1);
        assertThat(first.leaseToken()).isEqualTo(77);
        assertThat(first.worker()).isEqualTo("worker-7");
        assertThat(first.leaseUntil()).isEqualTo(T0.plus(LEASE));
        assertThat(first.publishedAt()).isEqualTo(T0);
        assertThat(info(first.id()).state()).isEqualTo(MessageState.RUNNING);
        assertThat(store.messageClaimDue(new ClaimCommand(NS, List.of("t"), "w", 10, LEASE, 78, at(T0)))).isEmpty();
    }

    @Test
    void aClaimResumingAfterAPositionLeavesOutWhatLiesBeforeItButNotEarlierPriorities() {
        long behind = db.publish(new NewMessage(NS, "t", "{}", Map.of(), 3, 3, null, T0.minusSeconds(10), null), at(T0));
        long atPosition = db.publish(new NewMessage(NS, "t", "{}", Map.of(), 3, 3, null, T0.minusSeconds(5), null), at(T0));
        long after = db.publish(new NewMessage(NS, "t", "{}", Map.of(), 3, 3, null, T0.minusSeconds(1), null), at(T0));
        long laterPriority = db.publish(new NewMessage(NS, "t", "{}", Map.of(), 7, 3, null, T0.minusSeconds(60), null), at(T0));
        long earlierPriority = db.publish(new NewMessage(NS, "t", "{}", Map.of(), 1, 3, null, T0, null), at(T0));
        long otherTopic = db.publish(new NewMessage(NS, "u", "{}", Map.of(), 3, 3, null, T0.minusSeconds(10), null), at(T0));
        ClaimPosition position = new ClaimPosition(3, T0.minusSeconds(5), atPosition);

        List<ClaimedMessage> resumed = store.messageClaimDue(new ClaimCommand(NS, List.of("t", "u"), "w", 10, LEASE, 1, at(T0),
                Map.of("t", position)));
        List<ClaimedMessage> fromTheHead = store.messageClaimDue(new ClaimCommand(NS, List.of("t", "u"), "w", 10, LEASE, 2, at(T0)));

        assertThat(resumed).extracting(ClaimedMessage::id).containsExactly(earlierPriority, after, laterPriority, otherTopic);
        assertThat(resumed.get(1).position()).isEqualTo(new ClaimPosition(3, T0.minusSeconds(1), after));
        assertThat(fromTheHead).extracting(ClaimedMessage::id).containsExactly(behind, atPosition);
    }

    @Test
    void pullAnyHonoursTheTopicOrderBeforePriority() {
        long b1 = db.publish(new NewMessage(NS, "b", "{}", Map.of(), 9, 3, null, null, Duration.ZERO), at(T0));
        long a1 = db.publish(new NewMessage(NS, "a", "{}", Map.of(), 0, 3, null, null, Duration.ZERO), at(T0));
        long c1 = db.publish(new NewMessage(NS, "c", "{}", Map.of(), 0, 3, null, null, Duration.ZERO), at(T0));
        long b2 = db.publish(new NewMessage(NS, "b", "{}", Map.of(), 0, 3, null, null, Duration.ZERO), at(T0));
        long a2 = db.publish(new NewMessage(NS, "a", "{}", Map.of(), 5, 3, null, null, Duration.ZERO), at(T0));

        List<ClaimedMessage> firstTwo = store.messageClaimDue(new ClaimCommand(NS, List.of("b", "c", "a"), "w", 3, LEASE, 1, at(T0)));
        List<ClaimedMessage> rest = store.messageClaimDue(new ClaimCommand(NS, List.of("b", "c", "a"), "w", 10, LEASE, 2, at(T0)));

        assertThat(firstTwo).extracting(ClaimedMessage::id).containsExactly(b2, b1, c1);
        assertThat(rest).extracting(ClaimedMessage::id).containsExactly(a1, a2);
    }

    @Test
    void nextDueAtIsTheEarliestFutureDueTimeOfTheTopics() {
        db.publish(new NewMessage(NS, "t", "{}", Map.of(), 3, 3, null, T0.plusSeconds(30), null), at(T0));
        db.publish(new NewMessage(NS, "t", "{}", Map.of(), 0, 3, null, T0.plusSeconds(90), null), at(T0));
        db.publish(new NewMessage(NS, "u", "{}", Map.of(), 0, 3, null, T0.plusSeconds(20), null), at(T0));
        db.publish(new NewMessage(NS, "t", "{}", Map.of(), 0, 3, null, T0.minusSeconds(20), null), at(T0));

        assertThat(store.messageNextDueAt(new NextDueQuery(NS, List.of("t"), at(T0)))).contains(T0.plusSeconds(30));
        assertThat(store.messageNextDueAt(new NextDueQuery(NS, List.of("t", "u"), at(T0)))).contains(T0.plusSeconds(20));
        assertThat(store.messageNextDueAt(new NextDueQuery(NS, List.of("t"), at(T0.plusSeconds(30))))).contains(T0.plusSeconds(90));
        assertThat(store.messageNextDueAt(new NextDueQuery(NS, List.of("v"), at(T0)))).isEmpty();
        assertThat(store.messageNextDueAt(new NextDueQuery("other", List.of("t"), at(T0)))).isEmpty();
    }

    // ------------------------------------------------------------------ guarded changes

    @Test
    void completeRemovesTheRowAndCountsIt() {
        long id = db.publish(message("t"), at(T0));
        ClaimedMessage claimed = db.claimOne("t", 5, at(T0));

        assertThat(store.messageAckIfLeased(new AckCommand(NS, List.of(lease(claimed)), at(T0)))).containsExactly(id);

        assertThat(store.messageFind(new MessageRef(NS, id))).isEmpty();
        assertThat(db.count("messages")).isZero();
        assertThat(store.namespaceStats(new StatsQuery(NS)).topic("t").completed()).isEqualTo(1);
        assertThat(store.messageAckIfLeased(new AckCommand(NS, List.of(lease(claimed)), at(T0)))).isEmpty();
        assertThat(store.namespaceStats(new StatsQuery(NS)).topic("t").completed()).isEqualTo(1);
    }

    @Test
    void completeOfABatchReturnsOnlyTheIdsStillHeld() {
        db.publishAll(List.of(message("t"), message("t"), message("t")), at(T0));
        List<ClaimedMessage> claimed = db.claim("t", 3, 5, at(T0));
        LeaseRef stale = new LeaseRef(claimed.get(1).id(), 999);

        Set<Long> done = store.messageAckIfLeased(new AckCommand(NS,
                List.of(lease(claimed.get(0)), stale, lease(claimed.get(2))), at(T0)));

        assertThat(done).containsExactlyInAnyOrder(claimed.get(0).id(), claimed.get(2).id());
        assertThat(info(claimed.get(1).id()).state()).isEqualTo(MessageState.RUNNING);
    }

    /** Where a message can stand when someone who does not hold it acts on it. */
    enum NotHeld { PENDING, RUNNING_UNDER_ANOTHER_TOKEN, OTHER_NAMESPACE, DEAD, COMPLETED, UNKNOWN_ID }

    @ParameterizedTest
    @EnumSource(NotHeld.class)
    void noGuardedChangeActsOnAMessageTheCallerDoesNotHold(NotHeld where) {
        long id = db.publish(message("t"), at(T0));
        ClaimedMessage claimed = db.claimOne("t", 1, at(T0));
        LeaseRef ref = lease(claimed);
        String namespace = NS;
        switch (where) {
            case PENDING -> store.messageReleaseIfLeased(new ReleaseCommand(NS, List.of(ref), at(T0)));
            case RUNNING_UNDER_ANOTHER_TOKEN -> ref = new LeaseRef(id, 2);
            case OTHER_NAMESPACE -> namespace = "intruder";
            case DEAD -> store.messageDeadLetterIfLeased(new DeadLetterCommand(NS, ref, "dead", at(T0)));
            case COMPLETED -> store.messageAckIfLeased(new AckCommand(NS, List.of(ref), at(T0)));
            case UNKNOWN_ID -> ref = new LeaseRef(id + 1000, 1);
        }
        Optional<MessageInfo> before = store.messageFind(new MessageRef(NS, id));
        NamespaceStats statsBefore = store.namespaceStats(new StatsQuery(NS));
        List<DeadLetter> deadBefore = store.deadLetterList(new DeadLetterQuery(NS, null, 0, 100));

        assertThat(store.messageAckIfLeased(new AckCommand(namespace, List.of(ref), at(T0)))).isEmpty();
        assertThat(store.messageRetryIfLeased(new RetryCommand(namespace, ref, Duration.ZERO, "x", at(T0)))).isEqualTo(Outcome.LEASE_LOST);
        assertThat(store.messageDeadLetterIfLeased(new DeadLetterCommand(namespace, ref, "x", at(T0)))).isEqualTo(Outcome.LEASE_LOST);
        assertThat(store.messageExtendIfLeased(new ExtendCommand(namespace, List.of(ref), LEASE, at(T0.plusSeconds(5))))).isEmpty();
        assertThat(store.messageReleaseIfLeased(new ReleaseCommand(namespace, List.of(ref), at(T0)))).isEmpty();

        assertThat(store.messageFind(new MessageRef(NS, id))).isEqualTo(before);
        assertThat(store.namespaceStats(new StatsQuery(NS))).isEqualTo(statsBefore);
        assertThat(store.deadLetterList(new DeadLetterQuery(NS, null, 0, 100))).isEqualTo(deadBefore);
    }

    @Test
    void retrySchedulesAfterTheDelayOnEveryAttemptTheDomainRetries() {
        long id = db.publish(new NewMessage(NS, "t", "{\"x\":1}", Map.of("h", "v"), 2, 2, "k", null, Duration.ZERO), at(T0));
        ClaimedMessage first = db.claimOne("t", 1, at(T0));

        assertThat(store.messageRetryIfLeased(new RetryCommand(NS, lease(first), Duration.ofSeconds(10), "oops", at(T0))))
                .isEqualTo(Outcome.RETRY_SCHEDULED);
        MessageInfo waiting = info(id);
        assertThat(waiting.state()).isEqualTo(MessageState.PENDING);
        assertThat(waiting.runAt()).isEqualTo(T0.plusSeconds(10));
        assertThat(waiting.lastError()).isEqualTo("oops");
        assertThat(waiting.attempts()).isEqualTo(1);
        assertThat(waiting.leaseUntil()).isNull();
        assertThat(db.claim("t", 1, 2, at(T0.plusSeconds(9)))).isEmpty();

        // The last attempt too: whether a message may run again is the domain's decision (Lifecycle), which
        // dead-letters it with bury instead; the statement carries out what it is asked.
        Instant later = T0.plusSeconds(10);
        ClaimedMessage second = db.claimOne("t", 2, at(later));
        assertThat(second.attempt()).isEqualTo(2);
        assertThat(store.messageRetryIfLeased(new RetryCommand(NS, lease(second), Duration.ofSeconds(10), "again", at(later))))
                .isEqualTo(Outcome.RETRY_SCHEDULED);
        MessageInfo again = info(id);
        assertThat(again.state()).isEqualTo(MessageState.PENDING);
        assertThat(again.attempts()).isEqualTo(2);
        assertThat(again.runAt()).isEqualTo(later.plusSeconds(10));
        assertThat(again.uniqueKey()).isEqualTo("k");
        assertThat(store.deadLetterFind(new MessageRef(NS, id))).isEmpty();
    }

    @Test
    void buryDeadLettersWhateverAttemptsAreLeft() {
        long id = db.publish(new NewMessage(NS, "t", "{}", Map.of(), 0, 10, null, null, Duration.ZERO), at(T0));
        ClaimedMessage claimed = db.claimOne("t", 1, at(T0));

        assertThat(store.messageDeadLetterIfLeased(new DeadLetterCommand(NS, lease(claimed), "bad input", at(T0.plusSeconds(1)))))
                .isEqualTo(Outcome.DEAD_LETTERED);

        DeadLetter dead = store.deadLetterFind(new MessageRef(NS, id)).orElseThrow();
        assertThat(dead.attempts()).isEqualTo(1);
        assertThat(dead.maxAttempts()).isEqualTo(10);
        assertThat(dead.lastError()).isEqualTo("bad input");
        assertThat(dead.failedAt()).isEqualTo(T0.plusSeconds(1));
        assertThat(db.count("messages")).isZero();
    }

    @Test
    void extendMovesTheLeaseEndFromNow() {
        db.publish(message("t"), at(T0));
        ClaimedMessage claimed = db.claimOne("t", 1, at(T0));

        assertThat(store.messageExtendIfLeased(new ExtendCommand(NS, List.of(lease(claimed)), Duration.ofMinutes(5),
                at(T0.plusSeconds(20))))).containsExactly(claimed.id());

        assertThat(info(claimed.id()).leaseUntil()).isEqualTo(T0.plusSeconds(20).plus(Duration.ofMinutes(5)));
    }

    @Test
    void releaseGivesTheAttemptBackAndKeepsTheDueTime() {
        long id = db.publish(new NewMessage(NS, "t", "{}", Map.of(), 0, 3, null, T0.minusSeconds(3), null), at(T0));
        ClaimedMessage claimed = db.claimOne("t", 1, at(T0));

        assertThat(store.messageReleaseIfLeased(new ReleaseCommand(NS, List.of(lease(claimed)), at(T0)))).containsExactly(id);

        MessageInfo info = info(id);
        assertThat(info.state()).isEqualTo(MessageState.PENDING);
        assertThat(info.attempts()).isZero();
        assertThat(info.runAt()).isEqualTo(T0.minusSeconds(3));
        assertThat(info.worker()).isNull();
        assertThat(db.claimOne("t", 2, at(T0)).attempt()).isEqualTo(1);
    }

    // ------------------------------------------------------------------ rescue

    @Test
    void rescueRequeuesExpiredLeasesAndBuriesThoseOnTheirLastAttemptInBoundedBatches() {
        long retryable = db.publish(new NewMessage(NS, "t", "{}", Map.of(), 0, 2, null, null, Duration.ZERO), at(T0));
        long last = db.publish(new NewMessage(NS, "t", "{}", Map.of(), 0, 1, null, null, Duration.ZERO), at(T0));
        long fresh = db.publish(new NewMessage(NS, "u", "{}", Map.of(), 0, 1, null, null, Duration.ZERO), at(T0));
        long elsewhere = db.publish(message("other", "t", "{}"), at(T0));
        db.claim("t", 2, 1, at(T0));
        store.messageClaimDue(new ClaimCommand(NS, List.of("u"), "w", 1, Duration.ofMinutes(10), 3, at(T0)));
        store.messageClaimDue(new ClaimCommand("other", List.of("t"), "w", 1, LEASE, 4, at(T0)));
        Instant after = T0.plus(LEASE).plusSeconds(1);

        RescueResult one = store.messageRescueExpired(new RescueCommand(NS, 1, at(after)));
        RescueResult rest = store.messageRescueExpired(new RescueCommand(NS, 100, at(after)));

        assertThat(one.total()).isEqualTo(1);
        assertThat(one.total() + rest.total()).isEqualTo(2);
        assertThat(one.requeued() + rest.requeued()).isEqualTo(1);
        MessageInfo requeued = info(retryable);
        assertThat(requeued.state()).isEqualTo(MessageState.PENDING);
        assertThat(requeued.runAt()).isEqualTo(after);
        assertThat(requeued.lastError()).isEqualTo("lease expired");
        assertThat(store.deadLetterFind(new MessageRef(NS, last)).orElseThrow().lastError()).isEqualTo("lease expired on its last attempt");
        assertThat(info(fresh).state()).isEqualTo(MessageState.RUNNING);
        assertThat(store.messageFind(new MessageRef("other", elsewhere)).orElseThrow().state()).isEqualTo(MessageState.RUNNING);

        assertThat(store.messageRescueExpired(new RescueCommand(null, 100, at(after)))).isEqualTo(new RescueResult(1, 0, after));
        assertThat(store.messageFind(new MessageRef("other", elsewhere)).orElseThrow().state()).isEqualTo(MessageState.PENDING);
    }

    @Test
    void aRescueFromALaterStartLeavesOutLeasesThatEndedBeforeIt() {
        long older = db.publish(message("t"), at(T0));
        db.claim("t", 1, 1, at(T0));
        long newer = db.publish(message("t"), at(T0));
        db.claim("t", 1, 2, at(T0.plusSeconds(10)));
        Instant after = T0.plus(LEASE).plusSeconds(11);

        RescueResult sinceNewer = store.messageRescueExpired(new RescueCommand(NS, 100, at(after), T0.plusSeconds(10).plus(LEASE)));
        assertThat(sinceNewer).isEqualTo(new RescueResult(1, 0, after));
        assertThat(info(newer).state()).isEqualTo(MessageState.PENDING);
        assertThat(info(older).state()).as("ended before the start given").isEqualTo(MessageState.RUNNING);

        assertThat(store.messageRescueExpired(new RescueCommand(NS, 100, at(after)))).isEqualTo(new RescueResult(1, 0, after));
        assertThat(info(older).state()).isEqualTo(MessageState.PENDING);
    }

    // ------------------------------------------------------------------ dead letters

    @Test
    void deadLettersAreListedOldestFirstPagedByIdAndRedrivenWithTheirId() {
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ids.add(db.publish(message(i % 2 == 0 ? "a" : "b"), at(T0)));
        }
        for (ClaimedMessage claimed : store.messageClaimDue(new ClaimCommand(NS, List.of("a", "b"), "w", 10, LEASE, 1, at(T0)))) {
            store.messageDeadLetterIfLeased(new DeadLetterCommand(NS, lease(claimed), "e" + claimed.id(), at(T0)));
        }

        assertThat(store.deadLetterList(new DeadLetterQuery(NS, null, 0, 3))).extracting(d -> d.id().value())
                .containsExactly(ids.get(0), ids.get(1), ids.get(2));
        assertThat(store.deadLetterList(new DeadLetterQuery(NS, null, ids.get(2), 3))).extracting(d -> d.id().value())
                .containsExactly(ids.get(3), ids.get(4));
        assertThat(store.deadLetterList(new DeadLetterQuery(NS, "b", 0, 10))).extracting(d -> d.id().value())
                .containsExactly(ids.get(1), ids.get(3));
        assertThat(store.deadLetterList(new DeadLetterQuery("other", null, 0, 10))).isEmpty();

        assertThat(store.deadLetterRedrive(RedriveCommand.one(NS, ids.get(0), at(T0.plusSeconds(1)))).redriven()).isEqualTo(1);
        MessageInfo back = info(ids.get(0));
        assertThat(back.state()).isEqualTo(MessageState.PENDING);
        assertThat(back.attempts()).isZero();
        assertThat(back.runAt()).isEqualTo(T0.plusSeconds(1));
        assertThat(back.lastError()).isEqualTo("e" + ids.get(0));
        assertThat(back.publishedAt()).isEqualTo(T0);

        assertThat(store.deadLetterRedrive(RedriveCommand.batch(NS, "b", 0, 1000, at(T0))).redriven()).isEqualTo(2);
        assertThat(store.deadLetterRedrive(RedriveCommand.one("other", ids.get(2), at(T0))).redriven()).isZero();
        assertThat(store.deadLetterPurge(new PurgeCommand("other", null, null, 1000))).isZero();
        assertThat(store.deadLetterPurge(new PurgeCommand(NS, ids.get(2), null, 1000))).isEqualTo(1);
        assertThat(store.deadLetterPurge(new PurgeCommand(NS, null, null, 1000))).isEqualTo(1);
        assertThat(db.count("dead_letters")).isZero();
        assertThat(db.count("messages")).isEqualTo(3);
    }

    @Test
    void redriveAndPurgeGoBatchByBatchMovingPastDeadLettersWhoseKeyIsHeld() {
        NewMessage keyed = new NewMessage(NS, "t", "{}", Map.of(), 0, 3, "k", null, Duration.ZERO);
        NewMessage plain = new NewMessage(NS, "t", "{}", Map.of(), 0, 3, null, null, Duration.ZERO);
        List<Long> ids = new ArrayList<>();
        for (NewMessage message : List.of(keyed, plain, plain, plain, plain)) {
            ids.add(db.publish(message, at(T0)));
        }
        for (ClaimedMessage claimed : store.messageClaimDue(new ClaimCommand(NS, List.of("t"), "w", 10, LEASE, 1, at(T0)))) {
            store.messageDeadLetterIfLeased(new DeadLetterCommand(NS, lease(claimed), "x", at(T0)));
        }
        db.publish(keyed, at(T0));

        RedriveResult first = store.deadLetterRedrive(RedriveCommand.batch(NS, "t", 0, 2, at(T0)));
        assertThat(first).as("the keyed one stays dead, the cursor moves past it").isEqualTo(new RedriveResult(1, 2, ids.get(1)));
        assertThat(store.deadLetterRedrive(RedriveCommand.batch(NS, "t", first.lastId(), 2, at(T0)))).isEqualTo(new RedriveResult(2, 2, ids.get(3)));
        assertThat(store.deadLetterRedrive(RedriveCommand.batch(NS, "t", ids.get(3), 2, at(T0)))).isEqualTo(new RedriveResult(1, 1, ids.get(4)));
        assertThat(store.deadLetterRedrive(RedriveCommand.batch(NS, "t", ids.get(4), 2, at(T0)))).isEqualTo(new RedriveResult(0, 0, ids.get(4)));

        assertThat(db.count("dead_letters")).isEqualTo(1);
        assertThat(store.deadLetterPurge(new PurgeCommand(NS, null, "t", 1))).isEqualTo(1);
        assertThat(store.deadLetterPurge(new PurgeCommand(NS, null, "t", 1))).isZero();
    }

    @Test
    void aDeadLetterWhoseKeyALiveMessageHoldsStaysDead() {
        NewMessage keyed = new NewMessage(NS, "t", "{}", Map.of(), 0, 3, "k", null, Duration.ZERO);
        long dead = db.publish(keyed, at(T0));
        store.messageDeadLetterIfLeased(new DeadLetterCommand(NS, lease(db.claimOne("t", 1, at(T0))), "x", at(T0)));
        long live = db.publish(keyed, at(T0));

        assertThat(store.deadLetterRedrive(RedriveCommand.one(NS, dead, at(T0))).redriven()).isZero();
        assertThat(store.deadLetterRedrive(RedriveCommand.batch(NS, "t", 0, 1000, at(T0))).redriven()).isZero();

        assertThat(info(dead).state()).isEqualTo(MessageState.DEAD);
        assertThat(info(live).state()).isEqualTo(MessageState.PENDING);
    }

    // ------------------------------------------------------------------ stats

    @Test
    void statsCountEveryStateAndSumTheCounterShards() {
        for (int i = 0; i < 6; i++) {
            db.publish(message("t"), at(T0));
        }
        db.publish(message("quiet"), at(T0));
        db.publish(message("other", "t", "{}"), at(T0));
        List<ClaimedMessage> claimed = db.claim("t", 4, 1, at(T0));
        store.messageDeadLetterIfLeased(new DeadLetterCommand(NS, lease(claimed.get(0)), "x", at(T0)));
        // complete from several pool connections, so several counter shards take part
        claimed.subList(1, 3).parallelStream()
                .forEach(c -> store.messageAckIfLeased(new AckCommand(NS, List.of(lease(c)), at(T0))));
        db.execute("INSERT INTO $s.completed_counters VALUES ('ns', 't', 15, 40) "
                + "ON CONFLICT (namespace, topic, shard) DO UPDATE SET completed = completed_counters.completed + 40");

        NamespaceStats stats = store.namespaceStats(new StatsQuery(NS, at(T0)));

        assertThat(stats.topic("t")).isEqualTo(new dev.queue.api.TopicStats("t", 2, 1, 42, 1, T0));
        assertThat(stats.topic("quiet")).isEqualTo(new dev.queue.api.TopicStats("quiet", 1, 0, 0, 0, T0));
        assertThat(stats.topicCount()).isEqualTo(2);
        assertThat(stats.pending()).isEqualTo(3);
        assertThat(stats.completed()).isEqualTo(42);
        assertThat(store.namespaceStats(new StatsQuery("nobody")).topicCount()).isZero();
    }

    @Test
    void archiveRetentionMovesCompletedMessagesToTheArchiveTable() {
        try (StoreFixture archiving = new StoreFixture("archive", CompletedRetention.ARCHIVE)) {
            long id = archiving.publish(new NewMessage(NS, "t", "{\"keep\": true}", Map.of(), 0, 3, null, null,
                    Duration.ZERO), at(T0));
            ClaimedMessage claimed = archiving.claimOne("t", 1, at(T0));

            archiving.store.messageAckIfLeased(new AckCommand(NS, List.of(lease(claimed)), at(T0.plusSeconds(2))));

            assertThat(archiving.count("messages")).isZero();
            assertThat(archiving.query("SELECT id FROM $s.completed_messages")).containsExactly(id);
            assertThat(archiving.query("SELECT payload::text FROM $s.completed_messages")).containsExactly("{\"keep\": true}");
            assertThat(archiving.query("SELECT completed_at = '" + T0.plusSeconds(2) + "'::timestamptz FROM $s.completed_messages"))
                    .containsExactly(true);
            assertThat(archiving.store.namespaceStats(new StatsQuery(NS)).completed()).isEqualTo(1);
        }
    }
}
