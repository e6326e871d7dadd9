package dev.queue.postgres;

import org.apache.ibatis.annotations.Param;

import java.time.Instant;
import java.util.List;

/** The schedule area of {@code ScheduleMapper.xml}, over the engine functions of {@code db/queue/R__schedules.sql}. */
interface ScheduleMapper {

    /** A schedule's columns, to store ({@code dbNow} unused) or as read ({@code dbNow} set by lockDueSchedules). */
    record Row(String namespace, String name, String cron, Long intervalMicros, String timeZone, String topic,
               String payload, String headers, int priority, int maxAttempts, Instant startAt, Instant endAt,
               String missedPolicy, int missedBound, long missedGraceMicros, boolean paused, Instant nextRunAt,
               Instant lastRunAt, Instant createdAt, Instant updatedAt, Instant dbNow) {
    }

    boolean insertSchedule(Row schedule);

    boolean replaceSchedule(Row schedule);

    boolean setSchedulePaused(@Param("namespace") String namespace, @Param("name") String name,
                          @Param("paused") boolean paused, @Param("nextRunAt") Instant nextRunAt,
                          @Param("updatedAt") Instant updatedAt);

    boolean deleteSchedule(@Param("namespace") String namespace, @Param("name") String name);

    Row findSchedule(@Param("namespace") String namespace, @Param("name") String name);

    List<Row> listSchedules(@Param("namespace") String namespace);

    /** The due schedules, locked until the transaction ends and skipped by every other ticker meanwhile. */
    List<Row> lockDueSchedules(@Param("namespace") String namespace, @Param("limit") int limit,
                               @Param("now") Instant now);

    boolean recordScheduleRun(@Param("namespace") String namespace, @Param("name") String name,
                          @Param("nextRunAt") Instant nextRunAt, @Param("lastRunAt") Instant lastRunAt);

    Instant nextScheduleRunAt(@Param("namespace") String namespace);
}
