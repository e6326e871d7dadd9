package dev.queue.postgres;

import dev.queue.api.Delivery;
import dev.queue.api.FiredSchedule;
import dev.queue.api.ManualClock;
import dev.queue.api.Message;
import dev.queue.api.MissedRuns;
import dev.queue.api.Pull;
import dev.queue.api.QueueOptions;
import dev.queue.api.Schedule;
import dev.queue.api.ScheduleChange;
import dev.queue.api.ScheduleInfo;
import dev.queue.api.Schedules;
import dev.queue.domain.schedule.SchedulePlanner;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Schedules across a fleet on a real PostgreSQL: several independent {@link PostgresQueue}s (each with its own
 * pool) over one schema, all reading one {@link ManualClock}, fire each due time of each schedule exactly once,
 * whether they tick explicitly at the same moment or by themselves; and a restart neither repeats nor loses a
 * fire, because the next run is stored.
 */
class ScheduleFleetTest {

    private static final String NS = "fleet";
    private static final String TOPIC = "ticks";
    /** Deliberately not on a minute boundary, with sub-second digits: due times are kept to the microsecond. */
    private static final Instant START = Instant.parse("2031-05-01T08:00:00.250Z");

    private final List<PostgresQueue> opened = new ArrayList<>();
    /** The test's migrated schema, in a database of its own. */
    private MigratedSchema migrated;
    private String schema;

    @BeforeEach
    void freshSchema() {
        migrated = PostgresTestServer.migratedSchema("schedfleet");
        schema = migrated.schema();
    }

    @AfterEach
    void closeAndDrop() {
        List<PostgresQueue> toClose = new ArrayList<>(opened);
        Collections.reverse(toClose);
        toClose.forEach(PostgresQueue::close);
        opened.clear();
        migrated.close();
    }

    /** A replica: a queue with a pool of its own over the test's schema, taking its time from {@code clock}. */
    private PostgresQueue replica(ManualClock clock, Duration scheduleTickInterval, int poolSize) {
        PostgresQueueConfig config = PostgresQueueConfig.defaults()
                .schema(schema)
                .poolSize(poolSize)
                .clock(clock)
                .queueOptions(QueueOptions.defaults().scheduleTickInterval(scheduleTickInterval));
        PostgresQueue queue = PostgresQueue.connect(migrated.jdbcUrl(), null, null, config);
        opened.add(queue);
        return queue;
    }

    // ------------------------------------------------------------------ 1. exactly once across a fleet

    @Test
    @Tag("slow") // 50 schedules over 200 rounds of four replicas
    void fourReplicasTickingAtTheSameMomentFireEachDueTimeOfEachScheduleExactlyOnce() throws Exception {
        int replicas = 4;
        int schedules = 50;
        int rounds = 200;
        long started = System.nanoTime();

        ManualClock clock = new ManualClock(START);
        List<PostgresQueue> fleet = new ArrayList<>();
        for (int i = 0; i < replicas; i++) {
            fleet.add(replica(clock, Duration.ZERO, 4));
        }
        Schedules creator = fleet.get(0).namespace(NS).schedules();
        for (int i = 0; i < schedules; i++) {
            assertThat(creator.create(Schedule.every("s" + i, Duration.ofMinutes(1))
                    .publishing(Message.to(TOPIC).json("{\"schedule\":" + i + "}"))))
                    .isEqualTo(ScheduleChange.CREATED);
        }
        assertThat(fleet.get(3).namespace(NS).schedules().list()).hasSize(schedules)
                .allSatisfy(s -> assertThat(s.nextRunAt()).isEqualTo(START.plus(Duration.ofMinutes(1))));
        long setUp = System.nanoTime();

        List<FiredSchedule> all = new ArrayList<>(schedules * rounds);
        int[] firedByReplica = new int[replicas];
        ExecutorService tickers = Executors.newFixedThreadPool(replicas);
        try {
            for (int round = 1; round <= rounds; round++) {
                Instant due = clock.advance(Duration.ofMinutes(1));
                assertThat(due).isEqualTo(START.plus(Duration.ofMinutes(round)));

                CountDownLatch ready = new CountDownLatch(replicas);
                CountDownLatch go = new CountDownLatch(1);
                List<Future<List<FiredSchedule>>> results = new ArrayList<>(replicas);
                for (PostgresQueue replica : fleet) {
                    Schedules mine = replica.namespace(NS).schedules();
                    results.add(tickers.submit(() -> {
                        ready.countDown();
                        if (!go.await(30, TimeUnit.SECONDS)) {
                            throw new IllegalStateException("start gate never opened");
                        }
                        return mine.tick();
                    }));
                }
                assertThat(ready.await(30, TimeUnit.SECONDS)).as("all tickers at the gate").isTrue();
                go.countDown();

                List<FiredSchedule> thisRound = new ArrayList<>();
                for (int r = 0; r < replicas; r++) {
                    List<FiredSchedule> fired = results.get(r).get(60, TimeUnit.SECONDS);
                    firedByReplica[r] += fired.size();
                    thisRound.addAll(fired);
                }
                // checked every round, so a failure names the first round that went wrong
                assertThat(thisRound).as("fires of round %d", round).hasSize(schedules)
                        .allSatisfy(f -> {
                            assertThat(f.dueAt()).isEqualTo(due);
                            assertThat(f.nextRunAt()).isEqualTo(due.plus(Duration.ofMinutes(1)));
                        });
                assertThat(thisRound).extracting(FiredSchedule::name).as("names fired in round %d", round)
                        .doesNotHaveDuplicates().hasSize(schedules);
                all.addAll(thisRound);
            }
        } finally {
            tickers.shutdownNow();
        }
        long ticked = System.nanoTime();

        // 10,000 fires, each (name, due time) exactly once, each schedule 200 times
        assertThat(all).hasSize(schedules * rounds);
        Set<String> expected = new HashSet<>();
        for (int i = 0; i < schedules; i++) {
            for (int round = 1; round <= rounds; round++) {
                expected.add("s" + i + "@" + START.plus(Duration.ofMinutes(round)));
            }
        }
        List<String> firedKeys = all.stream().map(f -> f.name() + "@" + f.dueAt()).toList();
        assertThat(firedKeys).doesNotHaveDuplicates();
        assertThat(new HashSet<>(firedKeys)).isEqualTo(expected);
        Map<String, Long> perSchedule = all.stream().collect(Collectors.groupingBy(FiredSchedule::name, TreeMap::new, Collectors.counting()));
        assertThat(perSchedule).hasSize(schedules).allSatisfy((name, count) -> assertThat(count).as(name).isEqualTo(rounds));

        // 10,000 distinct messages, all pending, one per unique key schedule:<name>:<due time>
        assertThat(all).extracting(FiredSchedule::messageId).doesNotHaveDuplicates();
        for (PostgresQueue replica : fleet) {
            assertThat(replica.namespace(NS).stats().topic(TOPIC).pending()).isEqualTo((long) schedules * rounds);
        }
        assertThat(query("SELECT count(*), count(DISTINCT id), count(DISTINCT unique_key) FROM $s.messages"
                + " WHERE namespace = '" + NS + "' AND topic = '" + TOPIC + "' AND state = 'pending'"))
                .containsExactly((long) schedules * rounds, (long) schedules * rounds, (long) schedules * rounds);
        Set<Long> storedIds = new HashSet<>(queryColumn("SELECT id FROM $s.messages WHERE namespace = '" + NS + "'"));
        assertThat(storedIds).isEqualTo(all.stream().map(f -> f.messageId().value()).collect(Collectors.toSet()));
        Set<String> storedKeys = new HashSet<>(queryStrings("SELECT unique_key FROM $s.messages WHERE namespace = '" + NS + "'"));
        assertThat(storedKeys).isEqualTo(all.stream().map(f -> SchedulePlanner.uniqueKey(f.name(), f.dueAt())).collect(Collectors.toSet()));

        // the stored state agrees: last run the 200th due time, next run the 201st
        assertThat(fleet.get(2).namespace(NS).schedules().list()).hasSize(schedules).allSatisfy(s -> {
            assertThat(s.lastRunAt()).isEqualTo(START.plus(Duration.ofMinutes(rounds)));
            assertThat(s.nextRunAt()).isEqualTo(START.plus(Duration.ofMinutes(rounds + 1)));
        });
        // and a further tick at the same time fires nothing anywhere
        for (PostgresQueue replica : fleet) {
            assertThat(replica.namespace(NS).schedules().tick()).isEmpty();
        }

        System.out.printf("ScheduleFleetTest: set-up %d ms, %d rounds of %d concurrent ticks %d ms, fires per replica %s%n",
                TimeUnit.NANOSECONDS.toMillis(setUp - started), rounds, replicas,
                TimeUnit.NANOSECONDS.toMillis(ticked - setUp), java.util.Arrays.toString(firedByReplica));
    }

    // ------------------------------------------------------------------ 2. restart durability

    @Test
    void aRestartedReplicaFiresTheNextDueTimeOnceWithoutRepeatingTheLastOne() {
        Duration every = Duration.ofMinutes(10);
        ManualClock clockA = new ManualClock(START);
        PostgresQueue a = replica(clockA, Duration.ZERO, 2);
        Schedules onA = a.namespace(NS).schedules();
        assertThat(onA.create(Schedule.every("report", every).publishing(Message.to(TOPIC).json("{\"r\":1}"))))
                .isEqualTo(ScheduleChange.CREATED);

        clockA.advance(every.plusSeconds(5));
        List<FiredSchedule> beforeRestart = onA.tick();
        assertThat(beforeRestart).singleElement().satisfies(f -> {
            assertThat(f.name()).isEqualTo("report");
            assertThat(f.dueAt()).isEqualTo(START.plus(every));
            assertThat(f.nextRunAt()).isEqualTo(START.plus(every.multipliedBy(2)));
        });
        assertThat(onA.tick()).as("the same due time again").isEmpty();
        a.close();

        // the new process: a new queue, a new clock past the next due time (but before the one after it)
        ManualClock clockB = new ManualClock(START.plus(every.multipliedBy(2)).plusSeconds(30));
        PostgresQueue b = replica(clockB, Duration.ZERO, 2);
        Schedules onB = b.namespace(NS).schedules();
        ScheduleInfo stored = onB.get("report").orElseThrow();
        assertThat(stored.lastRunAt()).isEqualTo(START.plus(every));
        assertThat(stored.nextRunAt()).isEqualTo(START.plus(every.multipliedBy(2)));
        assertThat(onB.create(Schedule.every("report", every).publishing(Message.to(TOPIC).json("{\"r\":1}"))))
                .as("a restarted application creating its schedules again").isEqualTo(ScheduleChange.UNCHANGED);

        List<FiredSchedule> afterRestart = onB.tick();
        assertThat(afterRestart).singleElement().satisfies(f -> {
            assertThat(f.name()).isEqualTo("report");
            assertThat(f.dueAt()).isEqualTo(START.plus(every.multipliedBy(2)));
            assertThat(f.nextRunAt()).isEqualTo(START.plus(every.multipliedBy(3)));
            assertThat(f.messageId()).isNotEqualTo(beforeRestart.get(0).messageId());
        });
        assertThat(onB.tick()).isEmpty();
        ScheduleInfo after = onB.get("report").orElseThrow();
        assertThat(after.lastRunAt()).isEqualTo(START.plus(every.multipliedBy(2)));
        assertThat(after.nextRunAt()).isEqualTo(START.plus(every.multipliedBy(3)));

        // exactly two messages: one per due time, the ids the ticks reported
        assertThat(b.namespace(NS).stats().topic(TOPIC).pending()).isEqualTo(2);
        List<Delivery> pulled = b.namespace(NS).pull(Pull.from(TOPIC).limit(10));
        assertThat(pulled).extracting(Delivery::id)
                .containsExactlyInAnyOrder(beforeRestart.get(0).messageId(), afterRestart.get(0).messageId());
        assertThat(pulled).extracting(d -> Instant.parse(d.headers().get(SchedulePlanner.HEADER_DUE_AT)))
                .containsExactlyInAnyOrder(START.plus(every), START.plus(every.multipliedBy(2)));
        assertThat(pulled).extracting(d -> d.headers().get(SchedulePlanner.HEADER_SCHEDULE)).containsOnly("report");
    }

    @Test
    void aReplicaRestartedAfterDowntimeFiresEachMissedDueTimeOnceUnderFireEach() {
        Duration every = Duration.ofMinutes(1);
        ManualClock clockA = new ManualClock(START);
        PostgresQueue a = replica(clockA, Duration.ZERO, 2);
        Schedules onA = a.namespace(NS).schedules();
        onA.create(Schedule.every("catch-up", every).missedRuns(MissedRuns.fireEach(5)).publishing(Message.to(TOPIC).json("{}")));
        clockA.advance(every);
        assertThat(onA.tick()).extracting(FiredSchedule::dueAt).containsExactly(START.plus(every));
        a.close();

        // down for three more due times (2, 3, 4), back before the 5th
        ManualClock clockB = new ManualClock(START.plus(every.multipliedBy(4)).plusSeconds(20));
        PostgresQueue b = replica(clockB, Duration.ZERO, 2);
        Schedules onB = b.namespace(NS).schedules();
        assertThat(onB.tick()).extracting(FiredSchedule::dueAt)
                .containsExactly(START.plus(every.multipliedBy(2)), START.plus(every.multipliedBy(3)), START.plus(every.multipliedBy(4)));
        assertThat(onB.tick()).isEmpty();
        ScheduleInfo after = onB.get("catch-up").orElseThrow();
        assertThat(after.lastRunAt()).isEqualTo(START.plus(every.multipliedBy(4)));
        assertThat(after.nextRunAt()).isEqualTo(START.plus(every.multipliedBy(5)));
        assertThat(b.namespace(NS).stats().topic(TOPIC).pending()).isEqualTo(4);
    }

    // ------------------------------------------------------------------ 3. automatic ticking from several replicas

    @Test
    void threeSelfTickingReplicasPublishOneMessagePerDueTimeOfACronSchedule() {
        int replicas = 3;
        int minutes = 20;
        ManualClock clock = new ManualClock(START);
        List<PostgresQueue> fleet = new ArrayList<>();
        for (int i = 0; i < replicas; i++) {
            fleet.add(replica(clock, Duration.ofMillis(50), 3));
        }
        assertThat(fleet.get(1).namespace(NS).schedules().create(Schedule.cron("minutely", "* * * * *")
                .publishing(Message.to(TOPIC).json("{\"cron\":true}")))).isEqualTo(ScheduleChange.CREATED);
        Instant firstDue = Instant.parse("2031-05-01T08:01:00Z");
        assertThat(fleet.get(0).namespace(NS).schedules().get("minutely").orElseThrow().nextRunAt()).isEqualTo(firstDue);

        for (int minute = 1; minute <= minutes; minute++) {
            clock.advance(Duration.ofMinutes(1));
            long wanted = minute;
            int observer = minute % replicas;
            await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(10))
                    .until(() -> fleet.get(observer).namespace(NS).stats().topic(TOPIC).pending() >= wanted);
            assertThat(fleet.get(observer).namespace(NS).stats().topic(TOPIC).pending()).as("after minute %d", minute).isEqualTo(wanted);
        }
        // every ticker has had many tick intervals since the last fire: the count holds at 20
        await().during(Duration.ofMillis(400)).atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20))
                .until(() -> fleet.get(0).namespace(NS).stats().topic(TOPIC).pending() == minutes);
        for (PostgresQueue replica : fleet) {
            assertThat(replica.namespace(NS).schedules().tick()).isEmpty();
        }

        List<Delivery> pulled = fleet.get(2).namespace(NS).pull(Pull.from(TOPIC).limit(100));
        assertThat(pulled).hasSize(minutes);
        assertThat(pulled).extracting(Delivery::id).doesNotHaveDuplicates();
        List<Instant> dueTimes = pulled.stream().map(d -> Instant.parse(d.headers().get(SchedulePlanner.HEADER_DUE_AT))).toList();
        List<Instant> expected = new ArrayList<>();
        for (int minute = 0; minute < minutes; minute++) {
            expected.add(firstDue.plus(Duration.ofMinutes(minute)));
        }
        assertThat(dueTimes).doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(expected);
        assertThat(pulled).extracting(d -> d.headers().get(SchedulePlanner.HEADER_SCHEDULE)).containsOnly("minutely");
        ScheduleInfo state = fleet.get(0).namespace(NS).schedules().get("minutely").orElseThrow();
        assertThat(state.lastRunAt()).isEqualTo(expected.get(minutes - 1));
        assertThat(state.nextRunAt()).isEqualTo(expected.get(minutes - 1).plus(Duration.ofMinutes(1)));
    }

    // ------------------------------------------------------------------ SQL probes

    private List<Long> query(String sql) {
        return run(sql, rs -> {
            List<Long> row = new ArrayList<>();
            if (rs.next()) {
                for (int c = 1; c <= rs.getMetaData().getColumnCount(); c++) {
                    row.add(rs.getLong(c));
                }
            }
            return row;
        });
    }

    private List<Long> queryColumn(String sql) {
        return run(sql, rs -> {
            List<Long> values = new ArrayList<>();
            while (rs.next()) {
                values.add(rs.getLong(1));
            }
            return values;
        });
    }

    private List<String> queryStrings(String sql) {
        return run(sql, rs -> {
            List<String> values = new ArrayList<>();
            while (rs.next()) {
                values.add(rs.getString(1));
            }
            return values;
        });
    }

    private interface Reader<T> {
        T read(ResultSet rs) throws SQLException;
    }

    private <T> T run(String sql, Reader<T> reader) {
        String resolved = sql.replace("$s", "\"" + schema + "\"");
        try (Connection connection = migrated.dataSource().getConnection();
             Statement statement = connection.createStatement();
             ResultSet rs = statement.executeQuery(resolved)) {
            return reader.read(rs);
        } catch (SQLException e) {
            throw new IllegalStateException("test SQL failed: " + resolved, e);
        }
    }
}
