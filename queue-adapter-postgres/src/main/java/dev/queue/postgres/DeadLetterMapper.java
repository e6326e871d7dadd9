package dev.queue.postgres;

import org.apache.ibatis.annotations.Param;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/** The dead letter area of {@code DeadLetterMapper.xml}, over the engine functions of
 * {@code db/queue/R__dead_letters.sql} (redrive and purge with their audit_log row). */
interface DeadLetterMapper {

    record Row(long id, String namespace, String topic, String payload, Map<String, String> headers, int priority,
               int attempts, int maxAttempts, String lastError, Instant publishedAt, Instant failedAt) {
    }

    record Redriven(int redriven, int examined, long lastId) {
    }

    /** One dead letter ({@code id}), or a page after {@code afterId} of a topic (or of the namespace when null). */
    List<Row> list(@Param("namespace") String namespace, @Param("topic") String topic, @Param("id") Long id,
                   @Param("afterId") long afterId, @Param("limit") int limit);

    Redriven redrive(@Param("namespace") String namespace, @Param("topic") String topic, @Param("ids") Long[] ids,
                     @Param("afterId") Long afterId, @Param("limit") int limit, @Param("now") Instant now);

    int purge(@Param("namespace") String namespace, @Param("topic") String topic, @Param("ids") Long[] ids,
              @Param("limit") int limit);
}
