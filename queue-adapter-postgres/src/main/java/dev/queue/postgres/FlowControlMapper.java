package dev.queue.postgres;

import org.apache.ibatis.annotations.Param;

import java.time.Instant;
import java.util.List;

/**
 * The flow control area of {@code FlowControlMapper.xml}, over the engine functions of
 * {@code db/queue/R__flow_control.sql} (cancel and snooze: {@code R__settle.sql}).
 */
interface FlowControlMapper {

    /** A topic's limits as the table {@code topic_limits} stores them; null columns are limits not set. */
    record Limits(String topic, Integer maxRunning, String partitionKind, String partitionName,
                  Integer maxRunningPerPartition, Integer rateStarts, Long ratePeriodMicros, Integer partitionRateStarts,
                  Long partitionRatePeriodMicros) {
    }

    /** Sets (every limit null: clears) a topic's limits; true when they changed. */
    boolean setLimits(@Param("namespace") String namespace, @Param("limits") Limits limits, @Param("now") Instant now);

    List<Limits> limits(@Param("namespace") String namespace);

    boolean setPaused(@Param("namespace") String namespace, @Param("topic") String topic, @Param("paused") boolean paused,
                      @Param("now") Instant now);

    List<String> pausedTopics(@Param("namespace") String namespace);

    /** The state the message left ({@code pending} or {@code running}), null when it was neither. */
    String cancel(@Param("namespace") String namespace, @Param("id") long id, @Param("now") Instant now);

    /** The choice behind a dead letter ({@code wait} or {@code continue}) and its audit_log row; true when it changed. */
    boolean setOrdering(@Param("namespace") String namespace, @Param("topic") String topic,
                        @Param("behindDeadLetter") String behindDeadLetter, @Param("now") Instant now);

    String ordering(@Param("namespace") String namespace, @Param("topic") String topic);

    List<Long> snooze(@Param("namespace") String namespace, @Param("ids") Long[] ids, @Param("tokens") Long[] tokens,
                      @Param("delayMicros") Long delayMicros, @Param("runAt") Instant runAt, @Param("now") Instant now);
}
