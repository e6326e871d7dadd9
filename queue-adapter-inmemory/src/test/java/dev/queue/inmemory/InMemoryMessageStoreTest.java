package dev.queue.inmemory;

import dev.queue.api.DeadLetter;
import dev.queue.api.ManualClock;
import dev.queue.api.MessageInfo;
import dev.queue.api.MessageState;
import dev.queue.api.NamespaceStats;
import dev.queue.api.Outcome;
import dev.queue.domain.port.AckCommand;
import dev.queue.domain.port.ClaimCommand;
import dev.queue.domain.port.ClaimedMessage;
import dev.queue.domain.port.DeadLetterCommand;
import dev.queue.domain.port.DeadLetterQuery;
import dev.queue.domain.port.ExtendCommand;
import dev.queue.domain.port.LeaseRef;
import dev.queue.domain.port.MessageRef;
import dev.queue.domain.port.NewMessage;
import dev.queue.domain.port.NextDueQuery;
import dev.queue.domain.port.PublishCommand;
import dev.queue.domain.port.PurgeCommand;
import dev.queue.domain.port.RedriveCommand;
import dev.queue.domain.port.RedriveResult;
import dev.queue.domain.port.ReleaseCommand;
import dev.queue.domain.port.RescueCommand;
import dev.queue.domain.port.RescueResult;
import dev.queue.domain.port.RetryCommand;
import dev.queue.domain.port.StatsQuery;
import dev.queue.domain.port.StoredOutcome;
import dev.queue.domain.port.WakeUps;
import dev.queue.domain.time.ManualTime;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.time.Instant;
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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static dev.queue.domain.port.CommandTime.at;
import static dev.queue.domain.port.CommandTime.storeClock;
import static org.assertj.core.api.Assertions.assertThat;

class InMemoryMessageStoreTest {

    private static final String NS = "shop";
    private static final Duration LEASE = Duration.ofSeconds(30);

    private final ManualClock clock = new ManualClock(Instant.parse("2025-01-01T00:00:00Z"));
    private final InMemoryWakeUps wakeUps = new InMemoryWakeUps();
    private final InMemoryMessageStore store = new InMemoryMessageStore(new ManualTime(clock), wakeUps);
    private final AtomicLong tokens = new AtomicLong(100);

    // ------------------------------------------------------------------------------------------ helpers

    private static NewMessage message(String topic, int priority) {
        return new NewMessage(NS, topic, "{\"p\":" + priority + "}", Map.of(), priority, 3, null, null, Duration.ZERO);
    }

    private static NewMessage keyed(String topic, String key) {
        return new NewMessage(NS, topic, "{}", Map.of(), 0, 3, key, null, Duration.ZERO);
    }

    private static NewMessage delayed(String topic, Duration delay) {
        return new NewMessage(NS, topic, "{}", Map.of(), 0, 3, null, null, delay);
    }

    private long publish(NewMessage message) {
        List<StoredOutcome> outcomes = store.messageInsertMany(new PublishCommand(List.of(message), at(clock.now())));
        assertThat(outcomes).hasSize(1);
        return outcomes.get(0).id();
    }

    private List<ClaimedMessage> claim(int limit, String... topics) {
        return claim(NS, limit, topics);
    }

    private List<ClaimedMessage> claim(String namespace, int limit, String... topics) {
        return store.messageClaimDue(new ClaimCommand(namespace, List.of(topics), "worker-1", limit, LEASE,
                tokens.incrementAndGet(), at(clock.now())));
    }

    private ClaimedMessage claimOne(String topic) {
        List<ClaimedMessage> claimed = claim(1, topic);
        assertThat(claimed).hasSize(1);
        return claimed.get(0);
    }

    private static LeaseRef lease(ClaimedMessage message) {
        return new LeaseRef(message.id(), message.leaseToken());
    }

    private static List<Long> ids(List<ClaimedMessage> claimed) {
        return claimed.stream().map(ClaimedMessage::id).toList();
    }

    private MessageInfo info(long id) {
        return store.messageFind(new MessageRef(NS, id)).orElseThrow();
    }

    // ------------------------------------------------------------------------------------------ publish

    @Nested
    class Publishing {

        @Test
        void idsStartAtOneAndGrow() {
            assertThat(publish(message("a", 0))).isEqualTo(1);
            assertThat(publish(message("a", 0))).isEqualTo(2);
        }

        @Test
        void storesPendingWithZeroAttemptsDueAfterTheDelay() {
            long id = publish(delayed("a", Duration.ofSeconds(5)));

            MessageInfo info = info(id);
            assertThat(info.state()).isEqualTo(MessageState.PENDING);
            assertThat(info.attempts()).isZero();
            assertThat(info.runAt()).isEqualTo(clock.now().plusSeconds(5));
            assertThat(info.publishedAt()).isEqualTo(clock.now());
        }

        @Test
        void runAtIsKeptAtMicrosecondPrecision() {
            Instant runAt = Instant.parse("2025-01-01T00:00:01.123456789Z");
            long id = publish(new NewMessage(NS, "a", "{}", Map.of(), 0, 3, null, runAt, null));

            assertThat(info(id).runAt()).isEqualTo(Instant.parse("2025-01-01T00:00:01.123456Z"));
        }

        @Test
        void aKeyHeldByAPendingOrRunningMessageMakesADuplicate() {
            long first = publish(keyed("a", "k"));

            assertThat(store.messageInsertMany(new PublishCommand(List.of(keyed("a", "k")), at(clock.now()))))
                    .containsExactly(new StoredOutcome(first, true));
            claimOne("a");
            assertThat(store.messageInsertMany(new PublishCommand(List.of(keyed("a", "k")), at(clock.now()))))
                    .containsExactly(new StoredOutcome(first, true));
            // another topic is another scope
            assertThat(store.messageInsertMany(new PublishCommand(List.of(keyed("b", "k")), at(clock.now()))).get(0).duplicate())
                    .isFalse();
        }

        @Test
        void withinABatchALaterMessageWithTheSameKeyIsADuplicateOfTheEarlierOne() {
            List<StoredOutcome> outcomes = store.messageInsertMany(new PublishCommand(
                    List.of(keyed("a", "k"), message("a", 0), keyed("a", "k")), at(clock.now())));

            assertThat(outcomes).containsExactly(new StoredOutcome(1, false), new StoredOutcome(2, false),
                    new StoredOutcome(1, true));
            assertThat(store.published()).extracting(m -> m.id().value()).containsExactly(1L, 2L);
        }

        @Test
        void completingOrBuryingFreesTheKey() {
            publish(keyed("a", "k"));
            ClaimedMessage first = claimOne("a");
            store.messageAckIfLeased(new AckCommand(NS, List.of(lease(first)), at(clock.now())));

            long second = publish(keyed("a", "k"));
            assertThat(second).isNotEqualTo(first.id());
            store.messageDeadLetterIfLeased(new DeadLetterCommand(NS, lease(claimOne("a")), "boom", at(clock.now())));

            assertThat(store.messageInsertMany(new PublishCommand(List.of(keyed("a", "k")), at(clock.now()))).get(0).duplicate())
                    .isFalse();
        }

        @Test
        void signalsEachListenerOnceAfterStoring() {
            AtomicInteger wakes = new AtomicInteger();
            List<Long> seenPending = new ArrayList<>();
            WakeUps.Registration registration = wakeUps.listen(NS, List.of("a", "b"), () -> {
                wakes.incrementAndGet();
                seenPending.add(store.namespaceStats(new StatsQuery(NS)).pending()); // the store lock is not held while signalling
            });
            try {
                store.messageInsertMany(new PublishCommand(List.of(message("a", 0), message("b", 0), message("a", 1)), at(clock.now())));
                assertThat(wakes).hasValue(1);
                assertThat(seenPending).containsExactly(3L);

                publish(message("other", 0));
                assertThat(wakes).hasValue(1);
            } finally {
                registration.close();
            }
            publish(message("a", 0));
            assertThat(wakes).hasValue(1);
            assertThat(wakeUps.listenerCount(NS, "a")).isZero();
        }

        @Test
        void recordsWhatWasPublished() {
            store.messageInsertMany(new PublishCommand(List.of(
                    new NewMessage(NS, "a", "{\"x\":1}", Map.of("trace", "t1"), 0, 3, null, null, Duration.ZERO),
                    new NewMessage("other", "a", "{}", Map.of(), 0, 3, null, null, Duration.ZERO)), at(clock.now())));

            assertThat(store.published(NS)).singleElement().satisfies(m -> {
                assertThat(m.topic()).isEqualTo("a");
                assertThat(m.json()).isEqualTo("{\"x\":1}");
                assertThat(m.headers()).containsEntry("trace", "t1");
                assertThat(m.publishedAt()).isEqualTo(clock.now());
            });
            assertThat(store.published()).hasSize(2);
            store.clearPublished();
            assertThat(store.published()).isEmpty();
            assertThat(store.namespaceStats(new StatsQuery(NS)).pending()).isEqualTo(1);
        }
    }

    // ------------------------------------------------------------------------------------------ claim

    @Nested
    class Claiming {

        @Test
        void ordersByTopicThenPriorityThenDueTimeThenId() {
            long lowPriority = publish(message("a", 5));
            long laterDue = publish(new NewMessage(NS, "a", "{}", Map.of(), 0, 3, null, clock.now().minusSeconds(1), null));
            long earlierDue = publish(new NewMessage(NS, "a", "{}", Map.of(), 0, 3, null, clock.now().minusSeconds(9), null));
            long sameDueFirst = publish(message("a", 0));
            long sameDueSecond = publish(message("a", 0));
            long otherTopic = publish(message("b", 0));

            List<ClaimedMessage> claimed = claim(10, "b", "a");

            assertThat(ids(claimed)).containsExactly(otherTopic, earlierDue, laterDue, sameDueFirst, sameDueSecond,
                    lowPriority);
        }

        @Test
        void takesOnlyDueMessagesOfTheNamespaceUpToTheLimit() {
            publish(delayed("a", Duration.ofSeconds(10)));
            long due1 = publish(message("a", 0));
            long due2 = publish(message("a", 0));
            publish(message("a", 0));
            store.messageInsertMany(new PublishCommand(List.of(new NewMessage("elsewhere", "a", "{}", Map.of(), 0, 3, null, null,
                    Duration.ZERO)), at(clock.now())));

            assertThat(ids(claim(2, "a"))).containsExactly(due1, due2);
            assertThat(claim(10, "a")).hasSize(1);
            assertThat(claim(10, "a")).isEmpty();

            clock.advance(Duration.ofSeconds(10));
            assertThat(claim(10, "a")).hasSize(1);
        }

        @Test
        void leasesTheMessageAndCountsTheAttempt() {
            long id = publish(new NewMessage(NS, "a", "{\"v\":1}", Map.of("h", "v"), 3, 7, null, null, Duration.ZERO));

            ClaimedMessage claimed = claimOne("a");

            assertThat(claimed.id()).isEqualTo(id);
            assertThat(claimed.attempt()).isEqualTo(1);
            assertThat(claimed.maxAttempts()).isEqualTo(7);
            assertThat(claimed.priority()).isEqualTo(3);
            assertThat(claimed.json()).isEqualTo("{\"v\":1}");
            assertThat(claimed.headers()).containsEntry("h", "v");
            assertThat(claimed.worker()).isEqualTo("worker-1");
            assertThat(claimed.leaseUntil()).isEqualTo(clock.now().plus(LEASE));
            assertThat(info(id).state()).isEqualTo(MessageState.RUNNING);
            assertThat(store.namespaceStats(new StatsQuery(NS)).topic("a").running()).isEqualTo(1);
        }

        @Test
        @Timeout(value = 30, unit = TimeUnit.SECONDS)
        void eightThreadsClaimTenThousandMessagesEachExactlyOnce() throws Exception {
            int total = 10_000;
            List<NewMessage> batch = new ArrayList<>();
            for (int i = 0; i < total; i++) {
                batch.add(message(i % 2 == 0 ? "a" : "b", i % 10));
            }
            store.messageInsertMany(new PublishCommand(batch, at(clock.now())));

            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                CountDownLatch start = new CountDownLatch(1);
                List<Future<List<Long>>> results = new ArrayList<>();
                for (int t = 0; t < 8; t++) {
                    Callable<List<Long>> worker = () -> {
                        start.await();
                        List<Long> mine = new ArrayList<>();
                        List<ClaimedMessage> got;
                        while (!(got = claim(5, "a", "b")).isEmpty()) {
                            mine.addAll(ids(got));
                            store.messageAckIfLeased(new AckCommand(NS,
                                    got.stream().map(InMemoryMessageStoreTest::lease).toList(), at(clock.now())));
                        }
                        return mine;
                    };
                    results.add(pool.submit(worker));
                }
                start.countDown();
                List<Long> all = new ArrayList<>();
                for (Future<List<Long>> result : results) {
                    all.addAll(result.get(30, TimeUnit.SECONDS));
                }
                assertThat(all).hasSize(total).doesNotHaveDuplicates();
                NamespaceStats stats = store.namespaceStats(new StatsQuery(NS));
                assertThat(stats.completed()).isEqualTo(total);
                assertThat(stats.pending() + stats.running()).isZero();
            } finally {
                pool.shutdownNow();
            }
        }
    }

    // ------------------------------------------------------------------------------------------ guards

    @Nested
    class Guards {

        @Test
        void completeActsOnlyUnderTheSameLeaseInTheSameNamespace() {
            publish(message("a", 0));
            ClaimedMessage claimed = claimOne("a");

            assertThat(store.messageAckIfLeased(new AckCommand(NS,
                    List.of(new LeaseRef(claimed.id(), claimed.leaseToken() + 1)), at(clock.now())))).isEmpty();
            assertThat(store.messageAckIfLeased(new AckCommand("elsewhere", List.of(lease(claimed)), at(clock.now()))))
                    .isEmpty();
            assertThat(info(claimed.id()).state()).isEqualTo(MessageState.RUNNING);

            assertThat(store.messageAckIfLeased(new AckCommand(NS, List.of(lease(claimed)), at(clock.now()))))
                    .containsExactly(claimed.id());
            assertThat(store.messageFind(new MessageRef(NS, claimed.id()))).isEmpty();
            assertThat(store.namespaceStats(new StatsQuery(NS)).topic("a").completed()).isEqualTo(1);
            // twice: the second finds nothing held
            assertThat(store.messageAckIfLeased(new AckCommand(NS, List.of(lease(claimed)), at(clock.now())))).isEmpty();
            assertThat(store.namespaceStats(new StatsQuery(NS)).topic("a").completed()).isEqualTo(1);
        }

        @Test
        void aPendingMessageIsNotHeldBySomeoneWithItsOldToken() {
            publish(message("a", 0));
            ClaimedMessage claimed = claimOne("a");
            store.messageRetryIfLeased(new RetryCommand(NS, lease(claimed), Duration.ZERO, "again", at(clock.now())));

            assertThat(store.messageRetryIfLeased(new RetryCommand(NS, lease(claimed), Duration.ZERO, "x", at(clock.now()))))
                    .isEqualTo(Outcome.LEASE_LOST);
            assertThat(store.messageDeadLetterIfLeased(new DeadLetterCommand(NS, lease(claimed), "x", at(clock.now()))))
                    .isEqualTo(Outcome.LEASE_LOST);
            assertThat(store.messageExtendIfLeased(new ExtendCommand(NS, List.of(lease(claimed)), LEASE, at(clock.now())))).isEmpty();
            assertThat(store.messageReleaseIfLeased(new ReleaseCommand(NS, List.of(lease(claimed)), at(clock.now())))).isEmpty();
            assertThat(store.messageAckIfLeased(new AckCommand(NS, List.of(lease(claimed)), at(clock.now())))).isEmpty();
            assertThat(info(claimed.id()).state()).isEqualTo(MessageState.PENDING);
            assertThat(info(claimed.id()).lastError()).isEqualTo("again");
        }

        @Test
        void aRedeliveredMessageIsNoLongerHeldByTheFirstClaim() {
            publish(message("a", 0));
            ClaimedMessage first = claimOne("a");
            clock.advance(LEASE.plusSeconds(1));
            assertThat(store.messageRescueExpired(new RescueCommand(NS, 100, at(clock.now())))).isEqualTo(new RescueResult(1, 0));
            ClaimedMessage second = claimOne("a");

            assertThat(second.attempt()).isEqualTo(2);
            assertThat(store.messageAckIfLeased(new AckCommand(NS, List.of(lease(first)), at(clock.now())))).isEmpty();
            assertThat(store.messageAckIfLeased(new AckCommand(NS, List.of(lease(second)), at(clock.now()))))
                    .containsExactly(second.id());
        }
    }

    // ------------------------------------------------------------------------------------------ retry, bury, extend, release

    @Nested
    class Transitions {

        @Test
        void retrySchedulesAfterTheDelayOnEveryAttemptTheDomainRetries() {
            long id = publish(message("a", 0)); // max attempts 3
            for (int attempt = 1; attempt <= 3; attempt++) {
                ClaimedMessage claimed = claimOne("a");
                assertThat(claimed.attempt()).isEqualTo(attempt);
                assertThat(store.messageRetryIfLeased(new RetryCommand(NS, lease(claimed), Duration.ofSeconds(10),
                        "failed " + attempt, at(clock.now())))).isEqualTo(Outcome.RETRY_SCHEDULED);
                assertThat(info(id).runAt()).isEqualTo(clock.now().plusSeconds(10));
                assertThat(claim(1, "a")).isEmpty();
                assertThat(store.messageNextDueAt(new NextDueQuery(NS, List.of("a"), at(clock.now())))).contains(clock.now().plusSeconds(10));
                clock.advance(Duration.ofSeconds(10));
            }
            // Even the last: whether a message may run again is the domain's decision (Lifecycle), which dead-letters
            // it with bury instead; the store carries out what it is asked.
            assertThat(info(id).state()).isEqualTo(MessageState.PENDING);
            assertThat(info(id).attempts()).isEqualTo(3);
            assertThat(info(id).lastError()).isEqualTo("failed 3");
            assertThat(store.namespaceStats(new StatsQuery(NS)).topic("a").dead()).isZero();
        }

        @Test
        void buryMakesADeadLetterWhateverAttemptsAreLeft() {
            long id = publish(message("a", 0));
            ClaimedMessage claimed = claimOne("a");

            assertThat(store.messageDeadLetterIfLeased(new DeadLetterCommand(NS, lease(claimed), "poison", at(clock.now()))))
                    .isEqualTo(Outcome.DEAD_LETTERED);

            assertThat(info(id).state()).isEqualTo(MessageState.DEAD);
            assertThat(store.deadLetterFind(new MessageRef(NS, id))).get().extracting(DeadLetter::attempts, DeadLetter::lastError)
                    .containsExactly(1, "poison");
            assertThat(store.deadLetterFind(new MessageRef("elsewhere", id))).isEmpty();
        }

        @Test
        void extendMovesTheLeaseEndFromNow() {
            publish(message("a", 0));
            ClaimedMessage claimed = claimOne("a");
            clock.advance(Duration.ofSeconds(20));

            assertThat(store.messageExtendIfLeased(new ExtendCommand(NS, List.of(lease(claimed)), Duration.ofMinutes(1),
                    at(clock.now())))).containsExactly(claimed.id());
            clock.advance(Duration.ofSeconds(40));

            assertThat(store.messageRescueExpired(new RescueCommand(NS, 100, at(clock.now()))).total()).isZero();
            assertThat(info(claimed.id()).leaseUntil()).isEqualTo(clock.now().plusSeconds(20));
        }

        @Test
        void releaseGivesTheAttemptBackAndKeepsTheDueTime() {
            Instant runAt = clock.now().minusSeconds(30);
            long id = publish(new NewMessage(NS, "a", "{}", Map.of(), 0, 3, null, runAt, null));
            ClaimedMessage claimed = claimOne("a");

            assertThat(store.messageReleaseIfLeased(new ReleaseCommand(NS, List.of(lease(claimed)), at(clock.now()))))
                    .containsExactly(id);

            MessageInfo info = info(id);
            assertThat(info.state()).isEqualTo(MessageState.PENDING);
            assertThat(info.attempts()).isZero();
            assertThat(info.runAt()).isEqualTo(runAt);
            assertThat(info.leaseUntil()).isNull();
            assertThat(info.worker()).isNull();
            assertThat(claimOne("a").attempt()).isEqualTo(1);
        }

        @Test
        void rescueRequeuesExpiredLeasesAndBuriesThoseOnTheirLastAttempt() {
            long requeued = publish(message("a", 0));
            long onLastAttempt = publish(new NewMessage(NS, "a", "{}", Map.of(), 0, 1, null, null, Duration.ZERO));
            long otherNamespace = store.messageInsertMany(new PublishCommand(List.of(new NewMessage("elsewhere", "a", "{}", Map.of(),
                    0, 3, null, null, Duration.ZERO)), at(clock.now()))).get(0).id();
            claim(2, "a");
            claim("elsewhere", 1, "a");

            clock.advance(LEASE);
            assertThat(store.messageRescueExpired(new RescueCommand(NS, 100, at(clock.now()))).total())
                    .as("a lease ending exactly now has not expired").isZero();

            clock.advance(Duration.ofMillis(1));
            assertThat(store.messageRescueExpired(new RescueCommand(NS, 100, at(clock.now())))).isEqualTo(new RescueResult(1, 1));

            assertThat(info(requeued).state()).isEqualTo(MessageState.PENDING);
            assertThat(info(requeued).runAt()).isEqualTo(clock.now());
            assertThat(info(requeued).lastError()).isEqualTo("lease expired");
            assertThat(store.deadLetterFind(new MessageRef(NS, onLastAttempt))).get().extracting(DeadLetter::lastError)
                    .isEqualTo("lease expired on its last attempt");
            assertThat(store.messageFind(new MessageRef("elsewhere", otherNamespace))).get().extracting(MessageInfo::state)
                    .isEqualTo(MessageState.RUNNING);

            assertThat(store.messageRescueExpired(new RescueCommand(null, 100, at(clock.now())))).isEqualTo(new RescueResult(1, 0));
        }

        @Test
        void rescueStopsAtTheLimit() {
            for (int i = 0; i < 5; i++) {
                publish(message("a", 0));
            }
            claim(5, "a");
            clock.advance(LEASE.plusSeconds(1));

            assertThat(store.messageRescueExpired(new RescueCommand(NS, 2, at(clock.now()))).total()).isEqualTo(2);
            assertThat(store.messageRescueExpired(new RescueCommand(NS, 10, at(clock.now()))).total()).isEqualTo(3);
        }

        @Test
        void nextDueAtIsTheEarliestDueTimeStrictlyAfterNow() {
            assertThat(store.messageNextDueAt(new NextDueQuery(NS, List.of("a"), at(clock.now())))).isEmpty();
            publish(message("a", 0)); // due now: not after now
            publish(new NewMessage(NS, "a", "{}", Map.of(), 9, 3, null, null, Duration.ofSeconds(7)));
            publish(new NewMessage(NS, "a", "{}", Map.of(), 0, 3, null, null, Duration.ofSeconds(9)));
            publish(delayed("b", Duration.ofSeconds(3)));

            assertThat(store.messageNextDueAt(new NextDueQuery(NS, List.of("a"), at(clock.now())))).contains(clock.now().plusSeconds(7));
            assertThat(store.messageNextDueAt(new NextDueQuery(NS, List.of("a", "b"), at(clock.now())))).contains(clock.now().plusSeconds(3));
            assertThat(store.messageNextDueAt(new NextDueQuery(NS, List.of("a"), storeClock()))).contains(clock.now().plusSeconds(7));
            assertThat(store.messageNextDueAt(new NextDueQuery("elsewhere", List.of("a"), at(clock.now())))).isEmpty();
        }
    }

    // ------------------------------------------------------------------------------------------ dead letters, stats

    @Nested
    class DeadLetters {

        private long dead(String topic, String key) {
            long id = publish(keyed(topic, key));
            ClaimedMessage claimed = claimOne(topic);
            assertThat(claimed.id()).isEqualTo(id);
            store.messageDeadLetterIfLeased(new DeadLetterCommand(NS, lease(claimed), "dead " + id, at(clock.now())));
            return id;
        }

        @Test
        void listsOldestFirstWithKeysetPagingAndTopicFilter() {
            long a1 = dead("a", null);
            long b1 = dead("b", null);
            long a2 = dead("a", null);
            long a3 = dead("a", null);

            assertThat(store.deadLetterList(new DeadLetterQuery(NS, null, 0, 10))).extracting(d -> d.id().value())
                    .containsExactly(a1, b1, a2, a3);
            assertThat(store.deadLetterList(new DeadLetterQuery(NS, "a", 0, 2))).extracting(d -> d.id().value())
                    .containsExactly(a1, a2);
            assertThat(store.deadLetterList(new DeadLetterQuery(NS, "a", a2, 2))).extracting(d -> d.id().value())
                    .containsExactly(a3);
            assertThat(store.deadLetterList(new DeadLetterQuery("elsewhere", null, 0, 10))).isEmpty();
        }

        @Test
        void redriveKeepsTheIdResetsAttemptsAndKeepsTheLastError() {
            long id = dead("a", null);
            clock.advance(Duration.ofMinutes(5));

            assertThat(store.deadLetterRedrive(RedriveCommand.one(NS, id, at(clock.now()))).redriven()).isEqualTo(1);

            MessageInfo info = info(id);
            assertThat(info.state()).isEqualTo(MessageState.PENDING);
            assertThat(info.attempts()).isZero();
            assertThat(info.runAt()).isEqualTo(clock.now());
            assertThat(info.lastError()).isEqualTo("dead " + id);
            assertThat(store.deadLetterFind(new MessageRef(NS, id))).isEmpty();
            assertThat(claimOne("a").id()).isEqualTo(id);
            assertThat(store.deadLetterRedrive(RedriveCommand.one(NS, id, at(clock.now()))).redriven()).isZero();
        }

        @Test
        void aRedrivenMessageWhoseKeyIsHeldStaysDead() {
            long first = dead("a", "k");
            long second = dead("a", "k");
            long live = publish(keyed("a", "k"));

            assertThat(store.deadLetterRedrive(RedriveCommand.batch(NS, "a", 0, 1000, at(clock.now()))).redriven()).isZero();

            store.messageAckIfLeased(new AckCommand(NS, List.of(lease(claimOne("a"))), at(clock.now())));
            assertThat(live).isGreaterThan(second);
            // both want the free key: the oldest gets it, the other stays dead
            assertThat(store.deadLetterRedrive(RedriveCommand.batch(NS, "a", 0, 1000, at(clock.now()))).redriven()).isEqualTo(1);
            assertThat(info(first).state()).isEqualTo(MessageState.PENDING);
            assertThat(info(second).state()).isEqualTo(MessageState.DEAD);
            assertThat(store.messageInsertMany(new PublishCommand(List.of(keyed("a", "k")), at(clock.now()))))
                    .containsExactly(new StoredOutcome(first, true));
        }

        @Test
        void redrivesATopicBatchByBatchMovingPastDeadLettersWhoseKeyIsHeld() {
            long first = dead("a", "k");
            long second = dead("a", null);
            dead("b", null);
            long third = dead("a", null);
            publish(keyed("a", "k"));

            RedriveResult batch = store.deadLetterRedrive(RedriveCommand.batch(NS, "a", 0, 2, at(clock.now())));
            assertThat(batch).isEqualTo(new RedriveResult(1, 2, second));
            assertThat(info(first).state()).as("its key is held by a live message").isEqualTo(MessageState.DEAD);
            assertThat(store.deadLetterRedrive(RedriveCommand.batch(NS, "a", batch.lastId(), 2, at(clock.now()))))
                    .isEqualTo(new RedriveResult(1, 1, third));
            assertThat(store.deadLetterRedrive(RedriveCommand.batch(NS, "a", third, 2, at(clock.now())))).isEqualTo(new RedriveResult(0, 0, third));
            assertThat(store.namespaceStats(new StatsQuery(NS)).topic("b").dead()).isEqualTo(1);
        }

        @Test
        void purgesAtMostABatchLowestIdsFirst() {
            long a1 = dead("a", null);
            long a2 = dead("a", null);
            long a3 = dead("a", null);

            assertThat(store.deadLetterPurge(new PurgeCommand(NS, null, "a", 2))).isEqualTo(2);
            assertThat(store.deadLetterFind(new MessageRef(NS, a1))).isEmpty();
            assertThat(store.deadLetterFind(new MessageRef(NS, a2))).isEmpty();
            assertThat(store.deadLetterFind(new MessageRef(NS, a3))).isPresent();
        }

        @Test
        void purgesOneATopicOrAll() {
            long a1 = dead("a", null);
            dead("a", null);
            dead("b", null);
            dead("c", null);

            assertThat(store.deadLetterPurge(new PurgeCommand("elsewhere", a1, null, 1000))).isZero();
            assertThat(store.deadLetterPurge(new PurgeCommand(NS, a1, null, 1000))).isEqualTo(1);
            assertThat(store.deadLetterPurge(new PurgeCommand(NS, a1, null, 1000))).isZero();
            assertThat(store.deadLetterPurge(new PurgeCommand(NS, null, "a", 1000))).isEqualTo(1);
            assertThat(store.namespaceStats(new StatsQuery(NS)).dead()).isEqualTo(2);
            assertThat(store.deadLetterPurge(new PurgeCommand(NS, null, null, 1000))).isEqualTo(2);
            assertThat(store.namespaceStats(new StatsQuery(NS)).dead()).isZero();
        }

        @Test
        void statsCountEveryStatePerTopic() {
            publish(message("a", 0));
            publish(message("a", 0));
            publish(message("a", 0));
            dead("b", null);
            ClaimedMessage running = claimOne("a");
            ClaimedMessage done = claimOne("a");
            store.messageAckIfLeased(new AckCommand(NS, List.of(lease(done)), at(clock.now())));

            NamespaceStats stats = store.namespaceStats(new StatsQuery(NS));

            assertThat(running.id()).isNotEqualTo(done.id());
            assertThat(stats.topic("a")).extracting("pending", "running", "completed", "dead").containsExactly(1L, 1L, 1L, 0L);
            assertThat(stats.topic("b")).extracting("pending", "running", "completed", "dead").containsExactly(0L, 0L, 0L, 1L);
            assertThat(stats.total()).isEqualTo(4);
            assertThat(stats.topicCount()).isEqualTo(2);
            assertThat(store.namespaceStats(new StatsQuery("never-used")).total()).isZero();
        }
    }

    @Test
    void findSeesOnlyItsOwnNamespace() {
        long id = publish(message("a", 0));

        assertThat(store.messageFind(new MessageRef(NS, id))).isPresent();
        assertThat(store.messageFind(new MessageRef("elsewhere", id))).isEmpty();
        Set<Long> none = new HashSet<>(store.messageAckIfLeased(new AckCommand(NS, List.of(new LeaseRef(id, 0)),
                at(clock.now()))));
        assertThat(none).isEmpty();
    }
}
